    // A per-channel scale is constant along K: the products go straight
    // into the accumulator, and the finished sums are scaled in the epilogue
    // (@scale_sums, scale_sums_per_channel.mlir). No scale in the K loop.
    func.func private @accumulate_decoded(%w: vector<${RT}x${VECS}x8x${T}>, %h: vector<${MT}x${VECS}x${H_LOADS}x8x${T}>,
                                          %acc: vector<${TILES}x4xf32>, %scales: vector<${RT}xf32>) -> vector<${TILES}x4xf32> {
      %r = func.call @mma_tiles(%w, %h, %acc)
          : (vector<${RT}x${VECS}x8x${T}>, vector<${MT}x${VECS}x${H_LOADS}x8x${T}>, vector<${TILES}x4xf32>) -> vector<${TILES}x4xf32>
      return %r : vector<${TILES}x4xf32>
    }
