// kind: snippet
// param TILES: tiles a wave multiplies: RT x MT
// param STAGE_MEMREF: the memref type of one stage
// param VECS: 16-byte vectors a lane takes of each row in one step
// param RT: weight tiles a wave (TILE_W rows each)
// param MT: hidden tiles a wave (16 rows each)
// param H_LOADS: 16-byte hidden loads a lane makes for one hidden tile
// param H_STRIDE: rows between a lane's hidden loads of one tile
// param TILE_W: weight rows of one matrix instruction's tile (8 on sm_90, 16 on gfx950)
// param BN: weight rows (output columns) of a workgroup tile
// param T: the contract's element type: hidden, attn and the gated value (bf16 | f16 | f32)
    // Products of one stage for mma_tiled from per-lane fragments (mma.sync on
    // sm_90, MFMA on gfx950): each warp reads its operands from workgroup
    // memory into registers and hands them to @mma_tiles.
    // Nothing to order between the copies landing and the reads: both are
    // the generic proxy.
    func.func private @stage_landed() {
      return
    }
    func.func private @acc_begin() -> vector<${TILES}x4xf32> {
      %z = arith.constant dense<0.0> : vector<${TILES}x4xf32>
      return %z : vector<${TILES}x4xf32>
    }
    func.func private @acc_end(%acc: vector<${TILES}x4xf32>) -> vector<${TILES}x4xf32> {
      return %acc : vector<${TILES}x4xf32>
    }
    // One K tile of products for one warp: its RT weight and MT hidden
    // fragments (VECS = 2 chunks per row) from workgroup memory, then every
    // (weight tile, hidden tile) pair.
    func.func private @tile_products(%stage: ${STAGE_MEMREF}, %sub: index, %wn: index, %wm: index, %lane: index,
                                     %acc: vector<${TILES}x4xf32>) -> vector<${TILES}x4xf32> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %vecs = arith.constant ${VECS} : index
      %c8 = arith.constant 8 : index
      %c16 = arith.constant 16 : index
      %rt = arith.constant ${RT} : index
      %mt = arith.constant ${MT} : index
      %hl = arith.constant ${H_LOADS} : index
      %h_stride = arith.constant ${H_STRIDE} : index
      %tile_w = arith.constant ${TILE_W} : index
      %bn = arith.constant ${BN} : index
      %wzero = arith.constant dense<0.0> : vector<${RT}x${VECS}x8x${T}>
      %hzero = arith.constant dense<0.0> : vector<${MT}x${VECS}x${H_LOADS}x8x${T}>
      %w_lane = func.call @lane_w_row(%lane) : (index) -> index
      %h_lane = func.call @lane_h_row(%lane) : (index) -> index
      %k_lane = func.call @lane_k(%lane) : (index) -> index
      // The lane's first chunk: K lane_k * VECS, in chunks of 8, within the
      // 64-element part `sub` of the stage.
      %chunk0 = arith.divui %k_lane, %c8 : index
      %chunk_lane = arith.muli %chunk0, %vecs : index
      %sub_chunks = arith.muli %sub, %c8 : index
      %chunk_base = arith.addi %chunk_lane, %sub_chunks : index
      %wn_rows = arith.muli %wn, %rt : index
      %w_row0 = arith.muli %wn_rows, %tile_w : index
      %wm_tiles = arith.muli %wm, %mt : index
      %h_tile0 = arith.muli %wm_tiles, %c16 : index
      %h_row0 = arith.addi %bn, %h_tile0 : index
      %ws = scf.for %r = %c0 to %rt step %c1 iter_args(%wa = %wzero) -> (vector<${RT}x${VECS}x8x${T}>) {
        %r_off = arith.muli %r, %tile_w : index
        %r_base = arith.addi %w_row0, %r_off : index
        %row = arith.addi %r_base, %w_lane : index
        %wa2 = scf.for %v = %c0 to %vecs step %c1 iter_args(%wv = %wa) -> (vector<${RT}x${VECS}x8x${T}>) {
          %chunk = arith.addi %chunk_base, %v : index
          %col = func.call @swizzled_col(%row, %chunk) : (index, index) -> index
          %x = vector.load %stage[%row, %col] {alignment = 16} : ${STAGE_MEMREF}, vector<8x${T}>
          %wv2 = vector.insert %x, %wv[%r, %v] : vector<8x${T}> into vector<${RT}x${VECS}x8x${T}>
          scf.yield %wv2 : vector<${RT}x${VECS}x8x${T}>
        } {gatejit.unroll}
        scf.yield %wa2 : vector<${RT}x${VECS}x8x${T}>
      } {gatejit.unroll}
      %hs = scf.for %t = %c0 to %mt step %c1 iter_args(%ha = %hzero) -> (vector<${MT}x${VECS}x${H_LOADS}x8x${T}>) {
        %ha2 = scf.for %q = %c0 to %hl step %c1 iter_args(%hq = %ha) -> (vector<${MT}x${VECS}x${H_LOADS}x8x${T}>) {
          %t16 = arith.muli %t, %c16 : index
          %q_off = arith.muli %q, %h_stride : index
          %tq = arith.addi %t16, %q_off : index
          %tq_row = arith.addi %h_row0, %tq : index
          %row = arith.addi %tq_row, %h_lane : index
          %hq2 = scf.for %v = %c0 to %vecs step %c1 iter_args(%hv = %hq) -> (vector<${MT}x${VECS}x${H_LOADS}x8x${T}>) {
            %chunk = arith.addi %chunk_base, %v : index
            %col = func.call @swizzled_col(%row, %chunk) : (index, index) -> index
            %x = vector.load %stage[%row, %col] {alignment = 16} : ${STAGE_MEMREF}, vector<8x${T}>
            %hv2 = vector.insert %x, %hv[%t, %v, %q] : vector<8x${T}> into vector<${MT}x${VECS}x${H_LOADS}x8x${T}>
            scf.yield %hv2 : vector<${MT}x${VECS}x${H_LOADS}x8x${T}>
          } {gatejit.unroll}
          scf.yield %hq2 : vector<${MT}x${VECS}x${H_LOADS}x8x${T}>
        } {gatejit.unroll}
        scf.yield %ha2 : vector<${MT}x${VECS}x${H_LOADS}x8x${T}>
      } {gatejit.unroll}
      %res = func.call @mma_tiles(%ws, %hs, %acc)
          : (vector<${RT}x${VECS}x8x${T}>, vector<${MT}x${VECS}x${H_LOADS}x8x${T}>, vector<${TILES}x4xf32>) -> vector<${TILES}x4xf32>
      return %res : vector<${TILES}x4xf32>
    }
