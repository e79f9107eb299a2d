// kind: snippet
// param RT: weight tiles a wave (TILE_W rows each)
// param VECS: 16-byte vectors a lane takes of each row in one step
// param T_WEIGHT: the weight's storage type (the 16-bit type, or i8 for e4m3)
// param MT: hidden tiles a wave (16 rows each)
// param H_LOADS: 16-byte hidden loads a lane makes for one hidden tile
// param T: the contract's element type: hidden, attn and the gated value (bf16 | f16 | f32)
// param TILES: tiles a wave multiplies: RT x MT
    // One K step of the mma form with a 16-bit weight: the fragments as
    // loaded, accumulated on the matrix cores; no scales.
    func.func private @accumulate_step(%w: vector<${RT}x${VECS}x8x${T_WEIGHT}>, %h: vector<${MT}x${VECS}x${H_LOADS}x8x${T}>,
                                       %acc: vector<${TILES}x4xf32>, %scales: vector<${RT}xf32>) -> vector<${TILES}x4xf32> {
      %r = func.call @mma_tiles(%w, %h, %acc)
          : (vector<${RT}x${VECS}x8x${T}>, vector<${MT}x${VECS}x${H_LOADS}x8x${T}>, vector<${TILES}x4xf32>) -> vector<${TILES}x4xf32>
      return %r : vector<${TILES}x4xf32>
    }
