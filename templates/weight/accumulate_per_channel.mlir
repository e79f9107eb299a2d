// kind: snippet
// param RT: weight tiles a wave (TILE_W rows each)
// param VECS: 16-byte vectors a lane takes of each row in one step
// param T: the contract's element type: hidden, attn and the gated value (bf16 | f16 | f32)
// param MT: hidden tiles a wave (16 rows each)
// param H_LOADS: 16-byte hidden loads a lane makes for one hidden tile
// param TILES: tiles a wave multiplies: RT x MT
    // A per-channel scale is constant along K: the products go straight
    // into the accumulator, and the finished sums are scaled in the epilogue
    // (@scale_sums, scale_sums_per_channel.mlir). No scale in the K loop.
    func.func private @accumulate_decoded(%w: vector<${RT}x${VECS}x8x${T}>, %h: vector<${MT}x${VECS}x${H_LOADS}x8x${T}>,
                                          %acc: vector<${TILES}x4xf32>, %scales: vector<${RT}xf32>) -> vector<${TILES}x4xf32> {
      %r = func.call @mma_tiles(%w, %h, %acc)
          : (vector<${RT}x${VECS}x8x${T}>, vector<${MT}x${VECS}x${H_LOADS}x8x${T}>, vector<${TILES}x4xf32>) -> vector<${TILES}x4xf32>
      return %r : vector<${TILES}x4xf32>
    }
