// mma: the matrix-core template, any M (decode on sm_90, batched decode and
// prefill on both targets; grid y tiles M past one block's M_BLOCK rows). The
// product runs on the matrix instructions, with the operands swapped the way
// small-M GEMMs want them: hidden is the M-side operand A (tiles of 16 rows,
// rows past M padded), the weight is B (TILE_W weight rows = output columns per tile), so
// the weight, the only large operand, is streamed once in 16-byte vectors
// straight from global memory into fragment registers.
//
// Because a dot product may sum its K terms in any order, each lane loads VECS
// x 8 consecutive K elements (VECS 16-byte vectors) of its rows per KSTEP
// (= 32 VECS), and the per-target snippet (mma_sm90 / mma_gfx950) hands them
// to the instruction as whatever K slots its fragment layout gives that lane:
// A and B use the same permutation, so the product is unchanged.
// compiler/src/mma_layout.cpp describes the fragment layouts and the load
// scheme and checks them on the host.
//
// A wave owns RT weight tiles (RT * TILE_W output columns) and every hidden
// tile (MT of them), for 1 / KSPLIT of the K steps (interleaved: wave kp of a
// group takes steps kp, kp + KSPLIT, ...). UNROLL steps are loaded before
// their products. The KSPLIT partial tiles meet in workgroup memory and are
// summed in a fixed order (deterministic); the epilogue runs on the
// accumulator elements, each owned by one lane of one wave.
//
// Parameters (compiler/src/kernel_plan.cpp):
//   ${T} ${SYMBOL} ${WAVE} ${BLOCK} ${KSPLIT} ${GROUPS} (column groups per block)
//   ${RT} ${MT} ${TILES} (= RT * MT) ${TILE_W} ${W_ROWS} (= RT * TILE_W)
//   ${H_LOADS} ${H_STRIDE}   16-byte hidden loads per lane per hidden tile, and
//                            the row distance between them (from the snippet)
//   ${VECS}                  16-byte vectors per lane and row in one step
//   ${KSTEP}                 K elements per step (32 VECS)
//   ${S_ALL}                 ceil(K / KSTEP) steps; the last may be partial
//   ${J_GROUPS} ${J_REM} ${J_ITERS}   per wave: UNROLL-step groups with every
//                            step in range, first step after them, all steps
//   ${M_BLOCK} ${H_LIVE_ROWS}  hidden rows per block (MT * 16; grid y = ceil(M / M_BLOCK))
//                            and the rows a block can actually have, min(M_MAX, M_BLOCK)
//   ${UNROLL} ${M_MAX} ${N} ${N_LAST} ${K} ${LDH} ${LDW} ${LDA} ${LDO}
//   ${H_SIZE} ${W_SIZE} ${A_SIZE} ${O_SIZE} ${PARTIALS}
module attributes {gpu.container_module} {
  gpu.module @gatejit {
    memref.global "private" @gatejit_mma_partials : memref<${PARTIALS}xf32, #gpu.address_space<workgroup>>

    gpu.func @${SYMBOL}(%hidden: memref<${H_SIZE}x${T}, #gpu.address_space<global>>,
                        %weight: memref<${W_SIZE}x${T}, #gpu.address_space<global>>,
                        %attn: memref<${A_SIZE}x${T}, #gpu.address_space<global>>,
                        %out: memref<${O_SIZE}x${T}, #gpu.address_space<global>>,
                        %m_actual: i64, %n_actual: i64, %k_actual: i64,
                        %ldh_actual: i64, %ldw_actual: i64, %lda_actual: i64, %ldo_actual: i64)
        kernel attributes {known_block_size = array<i32: ${BLOCK}, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %true = arith.constant true
      %false = arith.constant false
      %wave = arith.constant ${WAVE} : index
      %ksplit = arith.constant ${KSPLIT} : index
      %groups = arith.constant ${GROUPS} : index
      %w_rows = arith.constant ${W_ROWS} : index
      %unroll = arith.constant ${UNROLL} : index
      %jgroups = arith.constant ${J_GROUPS} : index
      %jrem = arith.constant ${J_REM} : index
      %jiters = arith.constant ${J_ITERS} : index
      %m_i = arith.index_cast %m_actual : i64 to index
      %mlast = arith.subi %m_i, %c1 : index
      %acc0 = arith.constant dense<0.0> : vector<${TILES}x4xf32>
      %wzero = arith.constant dense<0.0> : vector<${UNROLL}x${RT}x${VECS}x8x${T}>
      %hzero = arith.constant dense<0.0> : vector<${UNROLL}x${MT}x${VECS}x${H_LOADS}x8x${T}>

      %tid = gpu.thread_id x
      %bid = gpu.block_id x
      %lane = arith.remui %tid, %wave : index
      %wave_id = arith.divui %tid, %wave : index
      %kp = arith.remui %wave_id, %ksplit : index
      %group = arith.divui %wave_id, %ksplit : index
      %group_base = arith.muli %bid, %groups : index
      %group_index = arith.addi %group_base, %group : index
      %wrow0 = arith.muli %group_index, %w_rows : index
      // Hidden rows of this block: [mrow0, mrow0 + M_BLOCK) (grid y tiles M
      // when M_MAX exceeds one block's M_BLOCK rows).
      %bid_y = gpu.block_id y
      %m_block = arith.constant ${M_BLOCK} : index
      %mrow0 = arith.muli %bid_y, %m_block : index

      // Steps that are in range for every wave: UNROLL loads per operand in
      // flight, then their products.
      %acc_groups = scf.for %g = %c0 to %jgroups step %c1 iter_args(%acc = %acc0) -> (vector<${TILES}x4xf32>) {
        %j0 = arith.muli %g, %unroll : index
        %loaded:2 = scf.for %u = %c0 to %unroll step %c1 iter_args(%wv = %wzero, %hv = %hzero)
            -> (vector<${UNROLL}x${RT}x${VECS}x8x${T}>, vector<${UNROLL}x${MT}x${VECS}x${H_LOADS}x8x${T}>) {
          %j = arith.addi %j0, %u : index
          %w, %h = func.call @load_step(%hidden, %weight, %wrow0, %mrow0, %lane, %kp, %j, %mlast, %true)
              : (memref<${H_SIZE}x${T}, #gpu.address_space<global>>, memref<${W_SIZE}x${T}, #gpu.address_space<global>>,
                 index, index, index, index, index, index, i1) -> (vector<${RT}x${VECS}x8x${T}>, vector<${MT}x${VECS}x${H_LOADS}x8x${T}>)
          %wv2 = vector.insert %w, %wv[%u] : vector<${RT}x${VECS}x8x${T}> into vector<${UNROLL}x${RT}x${VECS}x8x${T}>
          %hv2 = vector.insert %h, %hv[%u] : vector<${MT}x${VECS}x${H_LOADS}x8x${T}> into vector<${UNROLL}x${MT}x${VECS}x${H_LOADS}x8x${T}>
          scf.yield %wv2, %hv2 : vector<${UNROLL}x${RT}x${VECS}x8x${T}>, vector<${UNROLL}x${MT}x${VECS}x${H_LOADS}x8x${T}>
        } {gatejit.unroll}
        %acc_g = scf.for %u = %c0 to %unroll step %c1 iter_args(%a = %acc) -> (vector<${TILES}x4xf32>) {
          %w = vector.extract %loaded#0[%u] : vector<${RT}x${VECS}x8x${T}> from vector<${UNROLL}x${RT}x${VECS}x8x${T}>
          %h = vector.extract %loaded#1[%u] : vector<${MT}x${VECS}x${H_LOADS}x8x${T}> from vector<${UNROLL}x${MT}x${VECS}x${H_LOADS}x8x${T}>
          %a2 = func.call @mma_tiles(%w, %h, %a)
              : (vector<${RT}x${VECS}x8x${T}>, vector<${MT}x${VECS}x${H_LOADS}x8x${T}>, vector<${TILES}x4xf32>) -> vector<${TILES}x4xf32>
          scf.yield %a2 : vector<${TILES}x4xf32>
        } {gatejit.unroll}
        scf.yield %acc_g : vector<${TILES}x4xf32>
      }
      // The rest, one step at a time; lanes past K (or waves past the last
      // step) load zeros but still join the wave-wide matrix instruction.
      %acc_all = scf.for %j = %jrem to %jiters step %c1 iter_args(%acc = %acc_groups) -> (vector<${TILES}x4xf32>) {
        %w, %h = func.call @load_step(%hidden, %weight, %wrow0, %mrow0, %lane, %kp, %j, %mlast, %false)
            : (memref<${H_SIZE}x${T}, #gpu.address_space<global>>, memref<${W_SIZE}x${T}, #gpu.address_space<global>>,
               index, index, index, index, index, index, i1) -> (vector<${RT}x${VECS}x8x${T}>, vector<${MT}x${VECS}x${H_LOADS}x8x${T}>)
        %a2 = func.call @mma_tiles(%w, %h, %acc)
            : (vector<${RT}x${VECS}x8x${T}>, vector<${MT}x${VECS}x${H_LOADS}x8x${T}>, vector<${TILES}x4xf32>) -> vector<${TILES}x4xf32>
        scf.yield %a2 : vector<${TILES}x4xf32>
      }

      // Partial tiles -> workgroup memory, element (tile, i) of lane l of wave w
      // at ((w * TILES + tile) * 4 + i) * WAVE + l (consecutive lanes, no bank
      // conflicts).
      %buf = memref.get_global @gatejit_mma_partials : memref<${PARTIALS}xf32, #gpu.address_space<workgroup>>
      %tiles = arith.constant ${TILES} : index
      %c4 = arith.constant 4 : index
      scf.for %e = %c0 to %tiles step %c1 {
        scf.for %i = %c0 to %c4 step %c1 {
          %x = vector.extract %acc_all[%e, %i] : f32 from vector<${TILES}x4xf32>
          %slot = func.call @partial_slot(%wave_id, %e, %i, %lane) : (index, index, index, index) -> index
          memref.store %x, %buf[%slot] : memref<${PARTIALS}xf32, #gpu.address_space<workgroup>>
        } {gatejit.unroll}
      } {gatejit.unroll}
      gpu.barrier

      // Accumulator element (tile, i) is finished by wave (tile * 4 + i) mod
      // KSPLIT of the group: it sums the KSPLIT partials in order, applies the
      // epilogue and stores.
      %mt = arith.constant ${MT} : index
      %tile_w = arith.constant ${TILE_W} : index
      %c16 = arith.constant 16 : index
      %n = arith.constant ${N} : index
      %lda = arith.constant ${LDA} : index
      %ldo = arith.constant ${LDO} : index
      %fzero = arith.constant 0.0 : f32
      %first_wave = arith.muli %group, %ksplit : index
      scf.for %e = %c0 to %tiles step %c1 {
        scf.for %i = %c0 to %c4 step %c1 {
          %e4 = arith.muli %e, %c4 : index
          %ei = arith.addi %e4, %i : index
          %finisher = arith.remui %ei, %ksplit : index
          %mine = arith.cmpi eq, %kp, %finisher : index
          %r = arith.divui %e, %mt : index
          %t = arith.remui %e, %mt : index
          %h_in_tile = func.call @lane_c_h(%lane, %i) : (index, index) -> index
          %w_in_tile = func.call @lane_c_w(%lane, %i) : (index, index) -> index
          %h_base = arith.muli %t, %c16 : index
          %row_in_block = arith.addi %h_base, %h_in_tile : index
          %row = arith.addi %mrow0, %row_in_block : index
          %w_tile = arith.muli %r, %tile_w : index
          %w_off = arith.addi %w_tile, %w_in_tile : index
          %col = arith.addi %wrow0, %w_off : index
          %row_ok = arith.cmpi ult, %row, %m_i : index
          %col_ok = arith.cmpi ult, %col, %n : index
          %in = arith.andi %row_ok, %col_ok : i1
          %go = arith.andi %in, %mine : i1
          scf.if %go {
            %dot = scf.for %s = %c0 to %ksplit step %c1 iter_args(%sum = %fzero) -> (f32) {
              %w_s = arith.addi %first_wave, %s : index
              %slot = func.call @partial_slot(%w_s, %e, %i, %lane) : (index, index, index, index) -> index
              %x = memref.load %buf[%slot] : memref<${PARTIALS}xf32, #gpu.address_space<workgroup>>
              %sum2 = arith.addf %sum, %x : f32
              scf.yield %sum2 : f32
            } {gatejit.unroll}
            %a_row = arith.muli %row, %lda : index
            %a_idx = arith.addi %a_row, %col : index
            %o_row = arith.muli %row, %ldo : index
            %o_idx = arith.addi %o_row, %col : index
            %a = memref.load %attn[%a_idx] : memref<${A_SIZE}x${T}, #gpu.address_space<global>>
            %o = func.call @gate_epilogue(%dot, %a) : (f32, ${T}) -> ${T}
            memref.store %o, %out[%o_idx] : memref<${O_SIZE}x${T}, #gpu.address_space<global>>
          }
        } {gatejit.unroll}
      } {gatejit.unroll}
      gpu.return
    }

    func.func private @partial_slot(%w: index, %e: index, %i: index, %lane: index) -> index {
      %tiles = arith.constant ${TILES} : index
      %c4 = arith.constant 4 : index
      %wave = arith.constant ${WAVE} : index
      %a = arith.muli %w, %tiles : index
      %b = arith.addi %a, %e : index
      %c = arith.muli %b, %c4 : index
      %d = arith.addi %c, %i : index
      %f = arith.muli %d, %wave : index
      %s = arith.addi %f, %lane : index
      return %s : index
    }

    // One K step of one wave: the lane's 16-byte vector of each of its RT
    // weight rows and of its hidden rows (H_LOADS per hidden tile). Weight rows
    // past N read row N - 1 and hidden rows past M read row M - 1 (in bounds;
    // only padding outputs see them); hidden rows past M_MAX are not loaded.
    // `in_range` says the step is known to lie inside K for every wave; when
    // false, the step and the lane's K offset are checked and zeros loaded
    // past the end.
    func.func private @load_step(%hidden: memref<${H_SIZE}x${T}, #gpu.address_space<global>>,
                                 %weight: memref<${W_SIZE}x${T}, #gpu.address_space<global>>,
                                 %wrow0: index, %mrow0: index, %lane: index, %kp: index, %j: index, %mlast: index,
                                 %in_range: i1) -> (vector<${RT}x${VECS}x8x${T}>, vector<${MT}x${VECS}x${H_LOADS}x8x${T}>) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c16 = arith.constant 16 : index
      %ksplit = arith.constant ${KSPLIT} : index
      %kstep = arith.constant ${KSTEP} : index
      %s_all = arith.constant ${S_ALL} : index
      %rt = arith.constant ${RT} : index
      %mt = arith.constant ${MT} : index
      %hl = arith.constant ${H_LOADS} : index
      %h_stride = arith.constant ${H_STRIDE} : index
      %tile_w = arith.constant ${TILE_W} : index
      %h_live = arith.constant ${H_LIVE_ROWS} : index
      %nlast = arith.constant ${N_LAST} : index
      %ldh = arith.constant ${LDH} : index
      %ldw = arith.constant ${LDW} : index
      %vzero = arith.constant dense<0.0> : vector<8x${T}>
      %wzero = arith.constant dense<0.0> : vector<${RT}x${VECS}x8x${T}>
      %hzero = arith.constant dense<0.0> : vector<${MT}x${VECS}x${H_LOADS}x8x${T}>
      %js = arith.muli %j, %ksplit : index
      %s = arith.addi %js, %kp : index
      %k_base = arith.muli %s, %kstep : index
      %k_lane = func.call @lane_k(%lane) : (index) -> index
      %vecs = arith.constant ${VECS} : index
      %k_lane_v = arith.muli %k_lane, %vecs : index
      %k0 = arith.addi %k_base, %k_lane_v : index
      %s_ok = arith.cmpi ult, %s, %s_all : index
      %w_lane = func.call @lane_w_row(%lane) : (index) -> index
      %ws = scf.for %r = %c0 to %rt step %c1 iter_args(%acc = %wzero) -> (vector<${RT}x${VECS}x8x${T}>) {
        %r_base = arith.muli %r, %tile_w : index
        %r_off = arith.addi %r_base, %w_lane : index
        %row = arith.addi %wrow0, %r_off : index
        %row_ld = arith.minui %row, %nlast : index
        %base = arith.muli %row_ld, %ldw : index
        %acc_r = scf.for %v = %c0 to %vecs step %c1 iter_args(%acc_v = %acc) -> (vector<${RT}x${VECS}x8x${T}>) {
          %kv = func.call @vector_k(%k0, %v) : (index, index) -> index
          %idx = arith.addi %base, %kv : index
          %ok_v = func.call @vector_ok(%in_range, %s_ok, %kv) : (i1, i1, index) -> i1
          %x = scf.if %ok_v -> (vector<8x${T}>) {
            %y = vector.load %weight[%idx] {alignment = 16} : memref<${W_SIZE}x${T}, #gpu.address_space<global>>, vector<8x${T}>
            scf.yield %y : vector<8x${T}>
          } else {
            scf.yield %vzero : vector<8x${T}>
          }
          %acc_v2 = vector.insert %x, %acc_v[%r, %v] : vector<8x${T}> into vector<${RT}x${VECS}x8x${T}>
          scf.yield %acc_v2 : vector<${RT}x${VECS}x8x${T}>
        } {gatejit.unroll}
        scf.yield %acc_r : vector<${RT}x${VECS}x8x${T}>
      } {gatejit.unroll}
      %h_lane = func.call @lane_h_row(%lane) : (index) -> index
      %hs = scf.for %t = %c0 to %mt step %c1 iter_args(%acc = %hzero) -> (vector<${MT}x${VECS}x${H_LOADS}x8x${T}>) {
        %acc_t = scf.for %q = %c0 to %hl step %c1 iter_args(%acc_q = %acc) -> (vector<${MT}x${VECS}x${H_LOADS}x8x${T}>) {
          // Row group (t, q) starts at block row 16 t + H_STRIDE q: a
          // constant once unrolled, so groups past H_LIVE_ROWS (the rows a
          // block can have: min(M_MAX, M_BLOCK)) fold to zeros.
          %t_base = arith.muli %t, %c16 : index
          %q_base = arith.muli %q, %h_stride : index
          %g_base = arith.addi %t_base, %q_base : index
          %live = arith.cmpi ult, %g_base, %h_live : index
          %row_in_block = arith.addi %g_base, %h_lane : index
          %row = arith.addi %mrow0, %row_in_block : index
          %row_ld = arith.minui %row, %mlast : index
          %base = arith.muli %row_ld, %ldh : index
          %acc_q2 = scf.for %v = %c0 to %vecs step %c1 iter_args(%acc_v = %acc_q) -> (vector<${MT}x${VECS}x${H_LOADS}x8x${T}>) {
            %kv = func.call @vector_k(%k0, %v) : (index, index) -> index
            %idx = arith.addi %base, %kv : index
            %ok_v = func.call @vector_ok(%in_range, %s_ok, %kv) : (i1, i1, index) -> i1
            %load_v = arith.andi %live, %ok_v : i1
            %x = scf.if %load_v -> (vector<8x${T}>) {
              %y = vector.load %hidden[%idx] {alignment = 16} : memref<${H_SIZE}x${T}, #gpu.address_space<global>>, vector<8x${T}>
              scf.yield %y : vector<8x${T}>
            } else {
              scf.yield %vzero : vector<8x${T}>
            }
            %acc_v2 = vector.insert %x, %acc_v[%t, %v, %q] : vector<8x${T}> into vector<${MT}x${VECS}x${H_LOADS}x8x${T}>
            scf.yield %acc_v2 : vector<${MT}x${VECS}x${H_LOADS}x8x${T}>
          } {gatejit.unroll}
          scf.yield %acc_q2 : vector<${MT}x${VECS}x${H_LOADS}x8x${T}>
        } {gatejit.unroll}
        scf.yield %acc_t : vector<${MT}x${VECS}x${H_LOADS}x8x${T}>
      } {gatejit.unroll}
      return %ws, %hs : vector<${RT}x${VECS}x8x${T}>, vector<${MT}x${VECS}x${H_LOADS}x8x${T}>
    }

    // A lane's VECS vectors of a step are consecutive in K (one longer run per
    // row: 32 bytes with VECS = 2, so the 4 lanes that share a row on sm_90
    // fill a 128-byte line): vector v starts at k0 + 8 v.
    func.func private @vector_k(%k0: index, %v: index) -> index {
      %c8 = arith.constant 8 : index
      %off = arith.muli %v, %c8 : index
      %kv = arith.addi %k0, %off : index
      return %kv : index
    }
    // Whether a vector is loaded: always in the steps known to be in range
    // (the constant `true` folds the check away), else when its step exists
    // and it starts before K (K is a whole number of vectors).
    func.func private @vector_ok(%in_range: i1, %step_ok: i1, %kv: index) -> i1 {
      %k = arith.constant ${K} : index
      %in = arith.cmpi ult, %kv, %k : index
      %checked = arith.andi %step_ok, %in : i1
      %ok = arith.ori %in_range, %checked : i1
      return %ok : i1
    }

${EPILOGUE}
  }
}
