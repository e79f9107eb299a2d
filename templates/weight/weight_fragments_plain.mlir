    // One K step of the mma form with a 16-bit weight: the fragments as
    // loaded, accumulated on the matrix cores; no scales.
    func.func private @accumulate_step(%w: vector<${RT}x${VECS}x8x${T_WEIGHT}>, %h: vector<${MT}x${VECS}x${H_LOADS}x8x${T}>,
                                       %acc: vector<${TILES}x4xf32>, %scales: vector<${RT}xf32>) -> vector<${TILES}x4xf32> {
      %r = func.call @mma_tiles(%w, %h, %acc)
          : (vector<${RT}x${VECS}x8x${T}>, vector<${MT}x${VECS}x${H_LOADS}x8x${T}>, vector<${TILES}x4xf32>) -> vector<${TILES}x4xf32>
      return %r : vector<${TILES}x4xf32>
    }
