// kind: snippet
// param RT: weight tiles a wave (TILE_W rows each)
// param VECS: 16-byte vectors a lane takes of each row in one step
// param T: the contract's element type: hidden, attn and the gated value (bf16 | f16 | f32)
// param MT: hidden tiles a wave (16 rows each)
// param H_LOADS: 16-byte hidden loads a lane makes for one hidden tile
// param TILES: tiles a wave multiplies: RT x MT
// param SCALE_PARAM: the weight snippets' scale parameters: the scales and their K blocks (empty for 16-bit weights)
// param TILE_W: weight rows of one matrix instruction's tile (8 on sm_90, 16 on gfx950)
// param N_LAST: N - 1
// param K: the reduction length K
// param S_SIZE: elements of an fp8 weight's scale memref
    // A 128 x 128 block scale changes along K: each step's products are made
    // from zero and added to the accumulator times their weight tile's
    // scale in fp32 (@step_scales loaded it with the step's operands).
    func.func private @accumulate_decoded(%w: vector<${RT}x${VECS}x8x${T}>, %h: vector<${MT}x${VECS}x${H_LOADS}x8x${T}>,
                                          %acc: vector<${TILES}x4xf32>, %scales: vector<${RT}xf32>) -> vector<${TILES}x4xf32> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %rt = arith.constant ${RT} : index
      %mt = arith.constant ${MT} : index
      %zero = arith.constant dense<0.0> : vector<${TILES}x4xf32>
      %p = func.call @mma_tiles(%w, %h, %zero)
          : (vector<${RT}x${VECS}x8x${T}>, vector<${MT}x${VECS}x${H_LOADS}x8x${T}>, vector<${TILES}x4xf32>) -> vector<${TILES}x4xf32>
      %res = scf.for %r = %c0 to %rt step %c1 iter_args(%a = %acc) -> (vector<${TILES}x4xf32>) {
        %x = vector.extract %scales[%r] : f32 from vector<${RT}xf32>
        %s = vector.broadcast %x : f32 to vector<4xf32>
        %a_r = scf.for %t = %c0 to %mt step %c1 iter_args(%at = %a) -> (vector<${TILES}x4xf32>) {
          %e0 = arith.muli %r, %mt : index
          %e = arith.addi %e0, %t : index
          %pe = vector.extract %p[%e] : vector<4xf32> from vector<${TILES}x4xf32>
          %ae = vector.extract %at[%e] : vector<4xf32> from vector<${TILES}x4xf32>
          %sum = vector.fma %pe, %s, %ae : vector<4xf32>
          %at2 = vector.insert %sum, %at[%e] : vector<4xf32> into vector<${TILES}x4xf32>
          scf.yield %at2 : vector<${TILES}x4xf32>
        } {gatejit.unroll}
        scf.yield %a_r : vector<${TILES}x4xf32>
      } {gatejit.unroll}
      return %res : vector<${TILES}x4xf32>
    }
    // The block scale of each of the lane's RT weight tiles in the step at
    // K offset k_base: one 128 x 128 block holds a whole tile (TILE_W
    // divides 128) and a whole step (KSTEP divides 128), row-major over
    // ceil(N/128) x ceil(K/128). A tile's first row and k_base are clamped
    // to the last row and K element: padding tiles, and the steps past K that
    // a wave still joins with zeros, read a scale that exists.
    func.func private @step_scales(%wrow0: index, %k_base: index${SCALE_PARAM}) -> vector<${RT}xf32> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %rt = arith.constant ${RT} : index
      %tile_w = arith.constant ${TILE_W} : index
      %nlast = arith.constant ${N_LAST} : index
      %kk = arith.constant ${K} : index
      %klast = arith.subi %kk, %c1 : index
      %block = arith.constant 128 : index
      %k_in = arith.minui %k_base, %klast : index
      %kb = arith.divui %k_in, %block : index
      %zero = arith.constant dense<0.0> : vector<${RT}xf32>
      %s = scf.for %r = %c0 to %rt step %c1 iter_args(%acc = %zero) -> (vector<${RT}xf32>) {
        %r_off = arith.muli %r, %tile_w : index
        %row0 = arith.addi %wrow0, %r_off : index
        %row = arith.minui %row0, %nlast : index
        %nb = arith.divui %row, %block : index
        %base = arith.muli %nb, %scale_kb : index
        %at = arith.addi %base, %kb : index
        %x = memref.load %weight_scale[%at] : memref<${S_SIZE}xf32, #gpu.address_space<global>>
        %acc2 = vector.insert %x, %acc[%r] : f32 into vector<${RT}xf32>
        scf.yield %acc2 : vector<${RT}xf32>
      } {gatejit.unroll}
      return %s : vector<${RT}xf32>
    }
