// kind: snippet
// param RT: weight tiles a wave (TILE_W rows each)
// param VECS: 16-byte vectors a lane takes of each row in one step
// param T: the contract's element type: hidden, attn and the gated value (bf16 | f16 | f32)
// param MT: hidden tiles a wave (16 rows each)
// param H_LOADS: 16-byte hidden loads a lane makes for one hidden tile
// param TILES: tiles a wave multiplies: RT x MT
    // Every (weight tile, hidden tile) pair of one step of both mma forms:
    // VECS mma_steps each (mma.mlir, mma_tiled.mlir).
    func.func private @mma_tiles(%w: vector<${RT}x${VECS}x8x${T}>, %h: vector<${MT}x${VECS}x${H_LOADS}x8x${T}>,
                                 %acc: vector<${TILES}x4xf32>) -> vector<${TILES}x4xf32> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %rt = arith.constant ${RT} : index
      %mt = arith.constant ${MT} : index
      %vecs = arith.constant ${VECS} : index
      %res = scf.for %r = %c0 to %rt step %c1 iter_args(%a = %acc) -> (vector<${TILES}x4xf32>) {
        %a_r = scf.for %t = %c0 to %mt step %c1 iter_args(%at = %a) -> (vector<${TILES}x4xf32>) {
          %e0 = arith.muli %r, %mt : index
          %e = arith.addi %e0, %t : index
          %c = vector.extract %at[%e] : vector<4xf32> from vector<${TILES}x4xf32>
          %d = scf.for %v = %c0 to %vecs step %c1 iter_args(%cv = %c) -> (vector<4xf32>) {
            %wr = vector.extract %w[%r, %v] : vector<8x${T}> from vector<${RT}x${VECS}x8x${T}>
            %ht = vector.extract %h[%t, %v] : vector<${H_LOADS}x8x${T}> from vector<${MT}x${VECS}x${H_LOADS}x8x${T}>
            %dv = func.call @mma_step(%wr, %ht, %cv) : (vector<8x${T}>, vector<${H_LOADS}x8x${T}>, vector<4xf32>) -> vector<4xf32>
            scf.yield %dv : vector<4xf32>
          } {gatejit.unroll}
          %at2 = vector.insert %d, %at[%e] : vector<4xf32> into vector<${TILES}x4xf32>
          scf.yield %at2 : vector<${TILES}x4xf32>
        } {gatejit.unroll}
        scf.yield %a_r : vector<${TILES}x4xf32>
      } {gatejit.unroll}
      return %res : vector<${TILES}x4xf32>
    }
