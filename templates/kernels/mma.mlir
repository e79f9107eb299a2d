// kind: kernel
// param T: the contract's element type: hidden, attn and the gated value (bf16 | f16 | f32)
// param SYMBOL: the kernel's symbol
// param WAVE: lanes a wave (64 on gfx9, 32 on sm_90)
// param BLOCK: threads a workgroup
// param KSPLIT: waves that split the K range of one column group
// param GROUPS: column groups a workgroup
// param T_WEIGHT: the weight's storage type (the 16-bit type, or i8 for e4m3)
// param W_ZERO: a zero of the weight's storage type (0.0, or 0 for e4m3)
// param W_VEC_ALIGN: byte alignment of a lane's 8-element weight vector
// param W_RUN_LOAD: whether a lane's VECS weight vectors of a row load as one run (e4m3 on sm_90)
// param W_RUN: elements of that run: 8 x VECS
// param W_RUN_ALIGN: byte alignment of that run
// param KERNEL_SCALE_PARAM: the fp8 weight's scales as the kernel's last argument (empty for 16-bit weights)
// param SCALE_PARAM: the weight snippets' scale parameters: the scales and their K blocks (empty for 16-bit weights)
// param SCALE_ARG: the scale arguments passed to the weight snippets (empty for 16-bit weights)
// param SCALE_TYPE: the types of SCALE_ARG (empty for 16-bit weights)
// param SCALE_KB: 128-wide K blocks of a block-scaled weight: ceil(K / 128)
// param RT: weight tiles a wave (TILE_W rows each)
// param MT: hidden tiles a wave (16 rows each)
// param TILES: tiles a wave multiplies: RT x MT
// param TILE_W: weight rows of one matrix instruction's tile (8 on sm_90, 16 on gfx950)
// param W_ROWS: weight rows a column group owns: RT x TILE_W
// param H_LOADS: 16-byte hidden loads a lane makes for one hidden tile
// param H_STRIDE: rows between a lane's hidden loads of one tile
// param VECS: 16-byte vectors a lane takes of each row in one step
// param KSTEP: K elements a step: 32 x VECS
// param S_ALL: steps: ceil(K / KSTEP), the last may be partial
// param J_GROUPS: a wave's groups of UNROLL steps, every step in range
// param J_ITERS: a wave's steps, in range or not
// param M_STRIDE: hidden rows a grid row owns: grid y = ceil(M / M_STRIDE), M_STRIDE <= M_BLOCK
// param THIN_ROWS: whether M_STRIDE < M_BLOCK (the tiles' other rows are clamped copies, never stored)
// param H_LIVE_ROWS: the rows a workgroup can have: min(M_MAX, M_STRIDE)
// param UNROLL: steps loaded before their products
// param N: output columns N
// param N_LAST: N - 1
// param K: the reduction length K
// param LDH: row stride of hidden (elements)
// param LDW: row stride of weight (elements)
// param H_SIZE: elements of the hidden memref
// param W_SIZE: elements of the weight memref
// param A_SIZE: elements of the attn memref
// param O_SIZE: elements of the out memref
// param PARTIALS: floats of the workgroup's partial sums of a K split
// param SPLITS: workgroups that split the K range of a tile (grid z)
// param KSPLIT_ALL: K slices of all splits: KSPLIT x SPLITS
// param SPLIT_K: whether SPLITS > 1
// param TILES_N: column tiles of the grid (grid x)
// param WS_SIZE: floats of the K split's workspace (1 without a split: folded away)
// param WS_TILES: arrival counters of the K split (1 without a split)
// param DEVICE_SCOPE: the target's name of the device-wide memory scope (agent | device)
// param SPLIT_POLL: 1 where the splits meet by poll, 0 by arrival counter
// param WS_INIT: the workspace's initial value (zeroed for the poll)
// param ELEMENTS: accumulator elements a lane holds: TILES x 4
// param OWN: accumulator elements a wave finishes: ceil(ELEMENTS / KSPLIT)
// param GROUP_OUTPUTS: outputs of a column group: M_BLOCK x W_ROWS
// param BLOCK_OUTPUTS: outputs of a workgroup: GROUPS x GROUP_OUTPUTS
// param SUMS: floats of the workgroup's finished sums
// param PIECES: the workgroup's pieces
// param PIECE_SLOTS: pieces a thread finishes: ceil(PIECES / BLOCK)
// param ROW_PIECES: pieces of one row
// param GROUP_PIECES: pieces of one column group
// param VW: outputs of an epilogue piece: consecutive columns of one row
// param T_OUT: the element type of out (T, or i8 for an fp8 out)
// param KERNEL_OUT_SCALE_PARAM: the fp8 out's scales as the kernel's last argument (empty otherwise)
// param ATTN_BEFORE_LOOP: whether attn is loaded before the K loop
// param ATTN_AFTER_LOOP: whether attn is loaded right after the K loop
// param ATTN_PREFETCH: whether attn's lines are asked into L2 at the kernel's start
// param OUT_SCALE_ARG: the out scales passed to the out's entry points (empty otherwise)
// param OUT_SCALE_TYPE: the type of OUT_SCALE_ARG (empty otherwise)
// param ELEMENT_FINISH: whether each wave finishes the outputs it sums itself (no K split, an out in attn's dtype, a 16-bit weight)
// param EPILOGUE: the snippets the kernel calls, filled in
// mma: the matrix-core template, any M (decode on sm_90, batched decode and
// prefill on both targets; grid y tiles M past one block's M_STRIDE rows). The
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
// summed in a fixed order (deterministic) by the wave that owns each
// accumulator element; the sums go to workgroup memory in output order, and
// the block finishes them in pieces of VW columns of a row
// (epilogue_pieces.mlir: 16-byte attn loads and out stores where allowed).
// With ELEMENT_FINISH the wave that sums an output also finishes it (one
// element: its attn value loaded where the plan places attn's load, 2-byte
// stores): for the few outputs of a decode block that saves the sums' second
// trip through workgroup memory and its barrier.
//
// With SPLITS > 1, grid z also splits K: block z takes the steps of waves
// z * KSPLIT .. z * KSPLIT + KSPLIT - 1 of KSPLIT_ALL (= KSPLIT * SPLITS)
// interleaved slices, so a grid of few row tiles still fills every CU. The
// blocks of one tile meet in a module-level workspace: each stores its block
// sums, counts itself in; the last to arrive sums the SPLITS partials in
// split order (independent of arrival order, no float atomics), applies the
// epilogue and resets the counter for the next launch (or, with SPLIT_POLL,
// the last split polls the others' partials: split_poll_pieces.mlir). Launches that overlap
// must not share the module: the runtime loads one instance per stream.
module attributes {gpu.container_module} {
  gpu.module @gatejit {
    memref.global "private" @gatejit_mma_partials : memref<${PARTIALS}xf32, #gpu.address_space<workgroup>>
    memref.global "private" @gatejit_split_sums : memref<${WS_SIZE}xf32, #gpu.address_space<global>> = ${WS_INIT} {alignment = 16}
    memref.global "private" @gatejit_split_arrivals : memref<${WS_TILES}xi32, #gpu.address_space<global>> = dense<0>
    memref.global "private" @gatejit_split_last : memref<1xi32, #gpu.address_space<workgroup>>
    memref.global "private" @gatejit_mma_sums : memref<${SUMS}xf32, #gpu.address_space<workgroup>> {alignment = 16}

    gpu.func @${SYMBOL}(%hidden: memref<${H_SIZE}x${T}, #gpu.address_space<global>>,
                        %weight: memref<${W_SIZE}x${T_WEIGHT}, #gpu.address_space<global>>,
                        %attn: memref<${A_SIZE}x${T}, #gpu.address_space<global>>,
                        %out: memref<${O_SIZE}x${T_OUT}, #gpu.address_space<global>>,
                        %m_actual: i64, %n_actual: i64, %k_actual: i64,
                        %ldh_actual: i64, %ldw_actual: i64, %lda_actual: i64, %ldo_actual: i64${KERNEL_SCALE_PARAM}${KERNEL_OUT_SCALE_PARAM})
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
      %jrem = arith.muli %jgroups, %unroll : index
      %jiters = arith.constant ${J_ITERS} : index
      %scale_kb = arith.constant ${SCALE_KB} : index
      %m_all = arith.index_cast %m_actual : i64 to index
      %mlast_all = arith.subi %m_all, %c1 : index
      %acc0 = arith.constant dense<0.0> : vector<${TILES}x4xf32>
      %wzero = arith.constant dense<${W_ZERO}> : vector<${UNROLL}x${RT}x${VECS}x8x${T_WEIGHT}>
      %hzero = arith.constant dense<0.0> : vector<${UNROLL}x${MT}x${VECS}x${H_LOADS}x8x${T}>
      %szero = arith.constant dense<0.0> : vector<${UNROLL}x${RT}xf32>

      %tid = gpu.thread_id x
      %bid = gpu.block_id x
      %lane = arith.remui %tid, %wave : index
      %wave_id = arith.divui %tid, %wave : index
      %kp = arith.remui %wave_id, %ksplit : index
      %group = arith.divui %wave_id, %ksplit : index
      %group_base = arith.muli %bid, %groups : index
      %group_index = arith.addi %group_base, %group : index
      %wrow0 = arith.muli %group_index, %w_rows : index
      // Hidden rows of this block: [mrow0, mrow0 + M_STRIDE) (grid y tiles M
      // when M_MAX exceeds one block's M_STRIDE rows). With THIN_ROWS the
      // block's rows end there: m_i, the end of the rows it loads and
      // stores, is the lesser of M and that.
      %bid_y = gpu.block_id y
      %m_stride = arith.constant ${M_STRIDE} : index
      %mrow0 = arith.muli %bid_y, %m_stride : index
      %thin_rows = arith.constant ${THIN_ROWS}
      %stride_end = arith.addi %mrow0, %m_stride : index
      %block_end = arith.minui %m_all, %stride_end : index
      %m_i = arith.select %thin_rows, %block_end, %m_all : index
      %block_last = arith.subi %block_end, %c1 : index
      %mlast = arith.select %thin_rows, %block_last, %mlast_all : index
      // K slice of this wave among all KSPLIT_ALL (split 0 without a K split:
      // the remainder by 1 folds away).
      %bid_z = gpu.block_id z
      %splits = arith.constant ${SPLITS} : index
      %split = arith.remui %bid_z, %splits : index
      %kp_block = arith.muli %split, %ksplit : index
      %kp_all = arith.addi %kp_block, %kp : index
      // The attn values of this thread's epilogue pieces, loaded early so
      // that the epilogue waits on no global load: before the main loop
      // (ATTN_BEFORE_LOOP: held across it) or right after it
      // (ATTN_AFTER_LOOP: in flight while the block reduces). Only without a
      // K split, where the block that loads a piece finishes it.
      %aligned = func.call @pieces_aligned(%attn, %out)
          : (memref<${A_SIZE}x${T}, #gpu.address_space<global>>, memref<${O_SIZE}x${T_OUT}, #gpu.address_space<global>>) -> i1
      %attn_before = arith.constant ${ATTN_BEFORE_LOOP}
      %attn_after = arith.constant ${ATTN_AFTER_LOOP}
      %attn_prefetch = arith.constant ${ATTN_PREFETCH}
      scf.if %attn_prefetch {
        func.call @prefetch_pieces_attn(%attn, %tid, %bid, %mrow0, %m_i)
            : (memref<${A_SIZE}x${T}, #gpu.address_space<global>>, index, index, index, index) -> ()
      }
      // ELEMENT_FINISH: the attn values are those of the elements this wave
      // finishes (@load_owned_attn), before or after the loop as the pieces' would be.
      %element_finish = arith.constant ${ELEMENT_FINISH}
      %pieces = arith.xori %element_finish, %true : i1
      %pieces_before = arith.andi %attn_before, %pieces : i1
      %owned_before = arith.andi %attn_before, %element_finish : i1
      %owned_zero = arith.constant dense<0.0> : vector<${OWN}x${T}>
      %owned_start = scf.if %owned_before -> (vector<${OWN}x${T}>) {
        %oa = func.call @load_owned_attn(%attn, %kp, %lane, %wrow0, %mrow0, %m_i)
            : (memref<${A_SIZE}x${T}, #gpu.address_space<global>>, index, index, index, index, index) -> vector<${OWN}x${T}>
        scf.yield %oa : vector<${OWN}x${T}>
      } else {
        scf.yield %owned_zero : vector<${OWN}x${T}>
      }
      %attn_zero = arith.constant dense<0.0> : vector<${PIECE_SLOTS}x${VW}x${T}>
      %attn_start = scf.if %pieces_before -> (vector<${PIECE_SLOTS}x${VW}x${T}>) {
        %pre = func.call @load_pieces_attn(%attn, %tid, %bid, %mrow0, %m_i, %aligned)
            : (memref<${A_SIZE}x${T}, #gpu.address_space<global>>, index, index, index, index, i1) -> vector<${PIECE_SLOTS}x${VW}x${T}>
        scf.yield %pre : vector<${PIECE_SLOTS}x${VW}x${T}>
      } else {
        scf.yield %attn_zero : vector<${PIECE_SLOTS}x${VW}x${T}>
      }

      // Steps that are in range for every wave: UNROLL loads per operand in
      // flight, then their products.
      %acc_groups = scf.for %g = %c0 to %jgroups step %c1 iter_args(%acc = %acc0) -> (vector<${TILES}x4xf32>) {
        %j0 = arith.muli %g, %unroll : index
        %loaded:3 = scf.for %u = %c0 to %unroll step %c1 iter_args(%wv = %wzero, %hv = %hzero, %sv = %szero)
            -> (vector<${UNROLL}x${RT}x${VECS}x8x${T_WEIGHT}>, vector<${UNROLL}x${MT}x${VECS}x${H_LOADS}x8x${T}>,
                vector<${UNROLL}x${RT}xf32>) {
          %j = arith.addi %j0, %u : index
          %w, %h = func.call @load_step(%hidden, %weight, %wrow0, %mrow0, %lane, %kp_all, %j, %mlast, %true)
              : (memref<${H_SIZE}x${T}, #gpu.address_space<global>>, memref<${W_SIZE}x${T_WEIGHT}, #gpu.address_space<global>>,
                 index, index, index, index, index, index, i1) -> (vector<${RT}x${VECS}x8x${T_WEIGHT}>, vector<${MT}x${VECS}x${H_LOADS}x8x${T}>)
          // The step's weight scales (block128; none otherwise) load with its
          // operands, not after the next steps' loads.
          %k_base = func.call @step_k_base(%kp_all, %j) : (index, index) -> index
          %sc = func.call @step_scales(%wrow0, %k_base${SCALE_ARG}) : (index, index${SCALE_TYPE}) -> vector<${RT}xf32>
          %wv2 = vector.insert %w, %wv[%u] : vector<${RT}x${VECS}x8x${T_WEIGHT}> into vector<${UNROLL}x${RT}x${VECS}x8x${T_WEIGHT}>
          %hv2 = vector.insert %h, %hv[%u] : vector<${MT}x${VECS}x${H_LOADS}x8x${T}> into vector<${UNROLL}x${MT}x${VECS}x${H_LOADS}x8x${T}>
          %sv2 = vector.insert %sc, %sv[%u] : vector<${RT}xf32> into vector<${UNROLL}x${RT}xf32>
          scf.yield %wv2, %hv2, %sv2 : vector<${UNROLL}x${RT}x${VECS}x8x${T_WEIGHT}>, vector<${UNROLL}x${MT}x${VECS}x${H_LOADS}x8x${T}>,
                                       vector<${UNROLL}x${RT}xf32>
        } {gatejit.unroll}
        %acc_g = scf.for %u = %c0 to %unroll step %c1 iter_args(%a = %acc) -> (vector<${TILES}x4xf32>) {
          %w = vector.extract %loaded#0[%u] : vector<${RT}x${VECS}x8x${T_WEIGHT}> from vector<${UNROLL}x${RT}x${VECS}x8x${T_WEIGHT}>
          %h = vector.extract %loaded#1[%u] : vector<${MT}x${VECS}x${H_LOADS}x8x${T}> from vector<${UNROLL}x${MT}x${VECS}x${H_LOADS}x8x${T}>
          %sc = vector.extract %loaded#2[%u] : vector<${RT}xf32> from vector<${UNROLL}x${RT}xf32>
          %a2 = func.call @accumulate_step(%w, %h, %a, %sc)
              : (vector<${RT}x${VECS}x8x${T_WEIGHT}>, vector<${MT}x${VECS}x${H_LOADS}x8x${T}>, vector<${TILES}x4xf32>,
                 vector<${RT}xf32>) -> vector<${TILES}x4xf32>
          scf.yield %a2 : vector<${TILES}x4xf32>
        } {gatejit.unroll}
        scf.yield %acc_g : vector<${TILES}x4xf32>
      }
      // The rest, one step at a time; lanes past K (or waves past the last
      // step) load zeros but still join the wave-wide matrix instruction.
      %acc_all = scf.for %j = %jrem to %jiters step %c1 iter_args(%acc = %acc_groups) -> (vector<${TILES}x4xf32>) {
        %w, %h = func.call @load_step(%hidden, %weight, %wrow0, %mrow0, %lane, %kp_all, %j, %mlast, %false)
            : (memref<${H_SIZE}x${T}, #gpu.address_space<global>>, memref<${W_SIZE}x${T_WEIGHT}, #gpu.address_space<global>>,
               index, index, index, index, index, index, i1) -> (vector<${RT}x${VECS}x8x${T_WEIGHT}>, vector<${MT}x${VECS}x${H_LOADS}x8x${T}>)
        %k_base = func.call @step_k_base(%kp_all, %j) : (index, index) -> index
        %sc = func.call @step_scales(%wrow0, %k_base${SCALE_ARG}) : (index, index${SCALE_TYPE}) -> vector<${RT}xf32>
        %a2 = func.call @accumulate_step(%w, %h, %acc, %sc)
            : (vector<${RT}x${VECS}x8x${T_WEIGHT}>, vector<${MT}x${VECS}x${H_LOADS}x8x${T}>, vector<${TILES}x4xf32>,
               vector<${RT}xf32>) -> vector<${TILES}x4xf32>
        scf.yield %a2 : vector<${TILES}x4xf32>
      }

      // ELEMENT_FINISH, attn not loaded before the loop: the owned elements'
      // attn now, in flight while the block reduces.
      %not_before = arith.xori %attn_before, %true : i1
      %owned_after = arith.andi %element_finish, %not_before : i1
      %own_attn = scf.if %owned_after -> (vector<${OWN}x${T}>) {
        %oa = func.call @load_owned_attn(%attn, %kp, %lane, %wrow0, %mrow0, %m_i)
            : (memref<${A_SIZE}x${T}, #gpu.address_space<global>>, index, index, index, index, index) -> vector<${OWN}x${T}>
        scf.yield %oa : vector<${OWN}x${T}>
      } else {
        scf.yield %owned_start : vector<${OWN}x${T}>
      }
      %pieces_after = arith.andi %attn_after, %pieces : i1
      %attn_pre = scf.if %pieces_after -> (vector<${PIECE_SLOTS}x${VW}x${T}>) {
        %post = func.call @load_pieces_attn(%attn, %tid, %bid, %mrow0, %m_i, %aligned)
            : (memref<${A_SIZE}x${T}, #gpu.address_space<global>>, index, index, index, index, i1) -> vector<${PIECE_SLOTS}x${VW}x${T}>
        scf.yield %post : vector<${PIECE_SLOTS}x${VW}x${T}>
      } else {
        scf.yield %attn_start : vector<${PIECE_SLOTS}x${VW}x${T}>
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

      // Wave kp of the group finishes accumulator elements kp, kp + KSPLIT,
      // ... of the TILES * 4 (element 4 e + i is register i of tile e): OWN
      // slots, so the code a wave runs is the code it has, and the loads of
      // all its slots are issued together. Each sums the KSPLIT partials in
      // order, then applies the epilogue (or, with a K split, meets the
      // other blocks of its row tile first).
      %fzero = arith.constant 0.0 : f32
      %first_wave = arith.muli %group, %ksplit : index
      %own = arith.constant ${OWN} : index
      %dzero = arith.constant dense<0.0> : vector<${OWN}xf32>
      %dots = scf.for %o = %c0 to %own step %c1 iter_args(%d = %dzero) -> (vector<${OWN}xf32>) {
        %e, %i, %at, %exists = func.call @owned_element(%o, %kp, %lane)
            : (index, index, index) -> (index, index, index, i1)
        %dot = scf.for %s = %c0 to %ksplit step %c1 iter_args(%sum = %fzero) -> (f32) {
          %w_s = arith.addi %first_wave, %s : index
          %slot = func.call @partial_slot(%w_s, %e, %i, %lane) : (index, index, index, index) -> index
          %x = memref.load %buf[%slot] : memref<${PARTIALS}xf32, #gpu.address_space<workgroup>>
          %sum2 = arith.addf %sum, %x : f32
          scf.yield %sum2 : f32
        } {gatejit.unroll}
        %d2 = vector.insert %dot, %d[%o] : f32 into vector<${OWN}xf32>
        scf.yield %d2 : vector<${OWN}xf32>
      } {gatejit.unroll}

      // The group's sums in output order (row-major M_BLOCK x W_ROWS): in
      // workgroup memory, or with a K split in this split's part of the
      // workspace. Then each thread finishes pieces of VW consecutive
      // columns of one row (@finish_pieces).
      %group_out = arith.constant ${GROUP_OUTPUTS} : index
      %group_sums = arith.muli %group, %group_out : index
      %sums = memref.get_global @gatejit_mma_sums : memref<${SUMS}xf32, #gpu.address_space<workgroup>>
      %ws = memref.get_global @gatejit_split_sums : memref<${WS_SIZE}xf32, #gpu.address_space<global>>
      %tiles_n = arith.constant ${TILES_N} : index
      %tile_row = arith.muli %bid_y, %tiles_n : index
      %tile = arith.addi %tile_row, %bid : index
      %split_k = arith.constant ${SPLIT_K}
      // The block's first output column (@out_groups_done: an fp8 out's group).
      %block_group0 = arith.muli %bid, %groups : index
      %out_col0 = arith.muli %block_group0, %w_rows : index
      // How the block ends: with a K split the blocks of a row tile meet by
      // arrival (every split stores, the last to arrive finishes) or by poll
      // (SPLIT_POLL: every split but the last stores, the last polls;
      // split_poll_pieces.mlir); without one, and as the polling split, the block
      // finishes its sums from workgroup memory.
      %poll = arith.constant ${SPLIT_POLL} : i1
      %splits_last = arith.subi %splits, %c1 : index
      %polling = arith.cmpi eq, %split, %splits_last : index
      %no_poll = arith.xori %poll, %true : i1
      %arrive = arith.andi %split_k, %no_poll : i1
      %not_polling = arith.xori %polling, %true : i1
      %store_only = arith.andi %poll, %not_polling : i1
      scf.if %arrive {
        // The blocks of a row tile meet: each stores its sums, the last to
        // arrive adds all SPLITS in split order and finishes the outputs.
        %arrivals = memref.get_global @gatejit_split_arrivals : memref<${WS_TILES}xi32, #gpu.address_space<global>>
        %flag = memref.get_global @gatejit_split_last : memref<1xi32, #gpu.address_space<workgroup>>
        %mine = func.call @split_base(%tile, %split) : (index, index) -> index
        %mine_g = arith.addi %mine, %group_sums : index
        scf.for %o = %c0 to %own step %c1 {
          %e, %i, %at, %exists = func.call @owned_element(%o, %kp, %lane)
              : (index, index, index) -> (index, index, index, i1)
          scf.if %exists {
            %dot = vector.extract %dots[%o] : f32 from vector<${OWN}xf32>
            %w_at = arith.addi %mine_g, %at : index
            memref.store %dot, %ws[%w_at] : memref<${WS_SIZE}xf32, #gpu.address_space<global>>
          }
        } {gatejit.unroll}
        // No block reads a workspace line before the last block.
        %last = func.call @split_arrive(%arrivals, %flag, %tile, %tid)
            : (memref<${WS_TILES}xi32, #gpu.address_space<global>>, memref<1xi32, #gpu.address_space<workgroup>>,
               index, index) -> i1
        scf.if %last {
          func.call @fence_device() : () -> ()
          func.call @finish_pieces(%attn, %out, %sums, %ws, %tile, %tid, %bid, %mrow0, %m_i, %aligned, %attn_pre${SCALE_ARG})
              : (memref<${A_SIZE}x${T}, #gpu.address_space<global>>, memref<${O_SIZE}x${T_OUT}, #gpu.address_space<global>>,
                 memref<${SUMS}xf32, #gpu.address_space<workgroup>>, memref<${WS_SIZE}xf32, #gpu.address_space<global>>,
                 index, index, index, index, index, i1, vector<${PIECE_SLOTS}x${VW}x${T}>${SCALE_TYPE}) -> ()
          func.call @split_reset(%arrivals, %tile, %tid) : (memref<${WS_TILES}xi32, #gpu.address_space<global>>, index, index) -> ()
          func.call @out_groups_done(%out, %tid, %out_col0, %mrow0, %m_i${OUT_SCALE_ARG})
              : (memref<${O_SIZE}x${T_OUT}, #gpu.address_space<global>>, index, index, index, index${OUT_SCALE_TYPE}) -> ()
        }
      } else {
        scf.if %store_only {
          // A polled split: its sums that the polling split will read (rows
          // inside M_I, pieces starting inside N), and done.
          %vw = arith.constant ${VW} : index
          %n = arith.constant ${N} : index
          %group_col0 = arith.muli %group_index, %w_rows : index
          scf.for %o = %c0 to %own step %c1 {
            %e, %i, %at, %exists = func.call @owned_element(%o, %kp, %lane)
                : (index, index, index) -> (index, index, index, i1)
            %row_in_block = arith.divui %at, %w_rows : index
            %col_in_group = arith.remui %at, %w_rows : index
            %row = arith.addi %mrow0, %row_in_block : index
            %col_in_piece = arith.remui %col_in_group, %vw : index
            %piece_col = arith.subi %col_in_group, %col_in_piece : index
            %col = arith.addi %group_col0, %piece_col : index
            %row_ok = arith.cmpi ult, %row, %m_i : index
            %col_ok = arith.cmpi ult, %col, %n : index
            %inside = arith.andi %row_ok, %col_ok : i1
            %store = arith.andi %exists, %inside : i1
            scf.if %store {
              %dot = vector.extract %dots[%o] : f32 from vector<${OWN}xf32>
              %o_at = arith.addi %group_sums, %at : index
              func.call @poll_store(%ws, %tile, %o_at, %split, %dot)
                  : (memref<${WS_SIZE}xf32, #gpu.address_space<global>>, index, index, index, f32) -> ()
            }
          } {gatejit.unroll}
        } else {
          scf.if %element_finish {
            func.call @finish_owned(%out, %dots, %own_attn, %kp, %lane, %wrow0, %mrow0, %m_i)
                : (memref<${O_SIZE}x${T_OUT}, #gpu.address_space<global>>, vector<${OWN}xf32>, vector<${OWN}x${T}>,
                   index, index, index, index, index) -> ()
          } else {
            scf.for %o = %c0 to %own step %c1 {
              %e, %i, %at, %exists = func.call @owned_element(%o, %kp, %lane)
                  : (index, index, index) -> (index, index, index, i1)
              scf.if %exists {
                %dot = vector.extract %dots[%o] : f32 from vector<${OWN}xf32>
                %s_at = arith.addi %group_sums, %at : index
                memref.store %dot, %sums[%s_at] : memref<${SUMS}xf32, #gpu.address_space<workgroup>>
              }
            } {gatejit.unroll}
            gpu.barrier
            func.call @finish_pieces(%attn, %out, %sums, %ws, %tile, %tid, %bid, %mrow0, %m_i, %aligned, %attn_pre${SCALE_ARG})
                : (memref<${A_SIZE}x${T}, #gpu.address_space<global>>, memref<${O_SIZE}x${T_OUT}, #gpu.address_space<global>>,
                   memref<${SUMS}xf32, #gpu.address_space<workgroup>>, memref<${WS_SIZE}xf32, #gpu.address_space<global>>,
                   index, index, index, index, index, i1, vector<${PIECE_SLOTS}x${VW}x${T}>${SCALE_TYPE}) -> ()
            func.call @out_groups_done(%out, %tid, %out_col0, %mrow0, %m_i${OUT_SCALE_ARG})
                : (memref<${O_SIZE}x${T_OUT}, #gpu.address_space<global>>, index, index, index, index${OUT_SCALE_TYPE}) -> ()
          }
        }
      }
      gpu.return
    }

    // Slot o of wave kp: element ei = o * KSPLIT + kp, i.e. register i = ei
    // mod 4 of tile e = ei / 4 (clamped to the last element past the end),
    // the element's place in the group's row-major M_BLOCK x W_ROWS
    // outputs, and whether the element exists.
    func.func private @owned_element(%o: index, %kp: index, %lane: index) -> (index, index, index, i1) {
      %c4 = arith.constant 4 : index
      %c16 = arith.constant 16 : index
      %ksplit = arith.constant ${KSPLIT} : index
      %c1 = arith.constant 1 : index
      %elements = arith.constant ${ELEMENTS} : index
      %last = arith.subi %elements, %c1 : index
      %mt = arith.constant ${MT} : index
      %tile_w = arith.constant ${TILE_W} : index
      %w_rows = arith.constant ${W_ROWS} : index
      %ob = arith.muli %o, %ksplit : index
      %ei = arith.addi %ob, %kp : index
      %exists = arith.cmpi ult, %ei, %elements : index
      %ei_c = arith.minui %ei, %last : index
      %e = arith.divui %ei_c, %c4 : index
      %i = arith.remui %ei_c, %c4 : index
      // Tile e is weight tile r = e / MT, hidden tile t = e mod MT.
      %r = arith.divui %e, %mt : index
      %t = arith.remui %e, %mt : index
      %h_in_tile = func.call @lane_c_h(%lane, %i) : (index, index) -> index
      %w_in_tile = func.call @lane_c_w(%lane, %i) : (index, index) -> index
      %h_base = arith.muli %t, %c16 : index
      %row = arith.addi %h_base, %h_in_tile : index
      %w_base = arith.muli %r, %tile_w : index
      %col = arith.addi %w_base, %w_in_tile : index
      %row_at = arith.muli %row, %w_rows : index
      %at = arith.addi %row_at, %col : index
      return %e, %i, %at, %exists : index, index, index, i1
    }

    // Workspace offset of split s of row tile `tile` (its GROUPS groups'
    // outputs, each row-major M_BLOCK x W_ROWS).
    func.func private @split_base(%tile: index, %s: index) -> index {
      %splits = arith.constant ${SPLITS} : index
      %block_out = arith.constant ${BLOCK_OUTPUTS} : index
      %a = arith.muli %tile, %splits : index
      %b = arith.addi %a, %s : index
      %at = arith.muli %b, %block_out : index
      return %at : index
    }

    // Piece q of thread tid (pieces tid, tid + BLOCK, ...: VW consecutive
    // columns of one output row): its place in the block's sums (row-major
    // M_BLOCK x W_ROWS per group), its output row and column, and whether it
    // is an output at all.
    func.func private @piece_place(%q: index, %tid: index, %bid: index, %mrow0: index, %m_i: index)
        -> (index, index, index, i1) {
      %vw = arith.constant ${VW} : index
      %block = arith.constant ${BLOCK} : index
      %pieces = arith.constant ${PIECES} : index
      %row_pieces = arith.constant ${ROW_PIECES} : index
      %group_pieces = arith.constant ${GROUP_PIECES} : index
      %group_out = arith.constant ${GROUP_OUTPUTS} : index
      %w_rows = arith.constant ${W_ROWS} : index
      %groups = arith.constant ${GROUPS} : index
      %n = arith.constant ${N} : index
      %q_base = arith.muli %q, %block : index
      %p = arith.addi %q_base, %tid : index
      %p_ok = arith.cmpi ult, %p, %pieces : index
      %group = arith.divui %p, %group_pieces : index
      %in_group = arith.remui %p, %group_pieces : index
      %row_in_block = arith.divui %in_group, %row_pieces : index
      %piece_in_row = arith.remui %in_group, %row_pieces : index
      %col_in_group = arith.muli %piece_in_row, %vw : index
      %g_base = arith.muli %group, %group_out : index
      %r_off = arith.muli %row_in_block, %w_rows : index
      %g_row = arith.addi %g_base, %r_off : index
      %at = arith.addi %g_row, %col_in_group : index
      %block_group = arith.muli %bid, %groups : index
      %col_group = arith.addi %block_group, %group : index
      %col_base = arith.muli %col_group, %w_rows : index
      %col = arith.addi %col_base, %col_in_group : index
      %row = arith.addi %mrow0, %row_in_block : index
      %row_ok = arith.cmpi ult, %row, %m_i : index
      %col_ok = arith.cmpi ult, %col, %n : index
      %in_a = arith.andi %p_ok, %row_ok : i1
      %in = arith.andi %in_a, %col_ok : i1
      return %at, %row, %col, %in : index, index, index, i1
    }

    // The epilogue, a piece at a time (epilogue_pieces.mlir). A piece's sums
    // come from workgroup memory (one vector read) or, with a K split, from
    // every split's part of the workspace, added in split order, and take
    // their weight scales (@scale_sums: per channel, or none); its attn
    // values were loaded early (ATTN_BEFORE_LOOP / ATTN_AFTER_LOOP) or are
    // loaded here.
    func.func private @finish_pieces(%attn: memref<${A_SIZE}x${T}, #gpu.address_space<global>>,
                                     %out: memref<${O_SIZE}x${T_OUT}, #gpu.address_space<global>>,
                                     %sums: memref<${SUMS}xf32, #gpu.address_space<workgroup>>,
                                     %ws: memref<${WS_SIZE}xf32, #gpu.address_space<global>>,
                                     %tile: index, %tid: index, %bid: index, %mrow0: index, %m_i: index,
                                     %aligned: i1, %attn_pre: vector<${PIECE_SLOTS}x${VW}x${T}>${SCALE_PARAM}) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %true = arith.constant true
      %piece_slots = arith.constant ${PIECE_SLOTS} : index
      %splits = arith.constant ${SPLITS} : index
      %split_k = arith.constant ${SPLIT_K}
      %poll = arith.constant ${SPLIT_POLL} : i1
      %no_poll = arith.xori %poll, %true : i1
      %before = arith.constant ${ATTN_BEFORE_LOOP}
      %after = arith.constant ${ATTN_AFTER_LOOP}
      %attn_early = arith.ori %before, %after : i1
      %fzero = arith.constant dense<0.0> : vector<${VW}xf32>
      scf.for %q = %c0 to %piece_slots step %c1 {
        %at, %row, %col, %in = func.call @piece_place(%q, %tid, %bid, %mrow0, %m_i)
            : (index, index, index, index, index) -> (index, index, index, i1)
        scf.if %in {
          // The polling split loads attn before it polls: both in one round trip.
          %attn_first = arith.ori %attn_early, %no_poll : i1
          %a_polled = scf.if %attn_first -> (vector<${VW}x${T}>) {
            %az = arith.constant dense<0.0> : vector<${VW}x${T}>
            scf.yield %az : vector<${VW}x${T}>
          } else {
            %now = func.call @load_piece_attn(%attn, %row, %col, %aligned, %true)
                : (memref<${A_SIZE}x${T}, #gpu.address_space<global>>, index, index, i1, i1) -> vector<${VW}x${T}>
            scf.yield %now : vector<${VW}x${T}>
          }
          %arrived = arith.andi %split_k, %no_poll : i1
          %dots = scf.if %arrived -> (vector<${VW}xf32>) {
            // Split order, whatever the arrival order.
            %t = scf.for %s = %c0 to %splits step %c1 iter_args(%acc = %fzero) -> (vector<${VW}xf32>) {
              %base_s = func.call @split_base(%tile, %s) : (index, index) -> index
              %w_at = arith.addi %base_s, %at : index
              %x = vector.load %ws[%w_at] {alignment = 16} : memref<${WS_SIZE}xf32, #gpu.address_space<global>>, vector<${VW}xf32>
              %acc2 = arith.addf %acc, %x : vector<${VW}xf32>
              scf.yield %acc2 : vector<${VW}xf32>
            } {gatejit.unroll}
            scf.yield %t : vector<${VW}xf32>
          } else {
            %x = vector.load %sums[%at] {alignment = 16} : memref<${SUMS}xf32, #gpu.address_space<workgroup>>, vector<${VW}xf32>
            // The polling split: the others' partials in split order, then its own.
            %all = scf.if %poll -> (vector<${VW}xf32>) {
              %others = func.call @poll_piece(%ws, %tile, %at)
                  : (memref<${WS_SIZE}xf32, #gpu.address_space<global>>, index, index) -> vector<${VW}xf32>
              %t = arith.addf %others, %x : vector<${VW}xf32>
              scf.yield %t : vector<${VW}xf32>
            } else {
              scf.yield %x : vector<${VW}xf32>
            }
            scf.yield %all : vector<${VW}xf32>
          }
          %a = scf.if %attn_early -> (vector<${VW}x${T}>) {
            %pre = vector.extract %attn_pre[%q] : vector<${VW}x${T}> from vector<${PIECE_SLOTS}x${VW}x${T}>
            scf.yield %pre : vector<${VW}x${T}>
          } else {
            %a_now = scf.if %poll -> (vector<${VW}x${T}>) {
              scf.yield %a_polled : vector<${VW}x${T}>
            } else {
              %now = func.call @load_piece_attn(%attn, %row, %col, %aligned, %true)
                  : (memref<${A_SIZE}x${T}, #gpu.address_space<global>>, index, index, i1, i1) -> vector<${VW}x${T}>
              scf.yield %now : vector<${VW}x${T}>
            }
            scf.yield %a_now : vector<${VW}x${T}>
          }
          %scaled = func.call @scale_sums(%dots, %col${SCALE_ARG}) : (vector<${VW}xf32>, index${SCALE_TYPE}) -> vector<${VW}xf32>
          func.call @finish_piece(%out, %scaled, %a, %row, %col, %aligned)
              : (memref<${O_SIZE}x${T_OUT}, #gpu.address_space<global>>, vector<${VW}xf32>, vector<${VW}x${T}>,
                 index, index, i1) -> ()
        }
      } {gatejit.unroll}
      return
    }

    func.func private @fence_device() {
      llvm.fence syncscope("${DEVICE_SCOPE}") acq_rel
      return
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
    // past N read row N - 1 and hidden rows past the block's last row (M - 1,
    // or its stride's end with THIN_ROWS) read that row (in bounds; only
    // padding outputs see them); rows past H_LIVE_ROWS are not loaded.
    // `in_range` says the step is known to lie inside K for every wave; when
    // false, the step and the lane's K offset are checked and zeros loaded
    // past the end.
    func.func private @load_step(%hidden: memref<${H_SIZE}x${T}, #gpu.address_space<global>>,
                                 %weight: memref<${W_SIZE}x${T_WEIGHT}, #gpu.address_space<global>>,
                                 %wrow0: index, %mrow0: index, %lane: index, %kp: index, %j: index, %mlast: index,
                                 %in_range: i1) -> (vector<${RT}x${VECS}x8x${T_WEIGHT}>, vector<${MT}x${VECS}x${H_LOADS}x8x${T}>) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c16 = arith.constant 16 : index
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
      %vzero_w = arith.constant dense<${W_ZERO}> : vector<8x${T_WEIGHT}>
      %vrow_zero = arith.constant dense<${W_ZERO}> : vector<${VECS}x8x${T_WEIGHT}>
      %run_load = arith.constant ${W_RUN_LOAD}
      %wzero = arith.constant dense<${W_ZERO}> : vector<${RT}x${VECS}x8x${T_WEIGHT}>
      %hzero = arith.constant dense<0.0> : vector<${MT}x${VECS}x${H_LOADS}x8x${T}>
      %s = func.call @step_index(%kp, %j) : (index, index) -> index
      %k_base = func.call @step_k_base(%kp, %j) : (index, index) -> index
      %k_lane = func.call @lane_k(%lane) : (index) -> index
      %vecs = arith.constant ${VECS} : index
      %k_lane_v = arith.muli %k_lane, %vecs : index
      %k0 = arith.addi %k_base, %k_lane_v : index
      %s_ok = arith.cmpi ult, %s, %s_all : index
      %w_lane = func.call @lane_w_row(%lane) : (index) -> index
      %ws = scf.for %r = %c0 to %rt step %c1 iter_args(%acc = %wzero) -> (vector<${RT}x${VECS}x8x${T_WEIGHT}>) {
        %r_base = arith.muli %r, %tile_w : index
        %r_off = arith.addi %r_base, %w_lane : index
        %row = arith.addi %wrow0, %r_off : index
        %row_ld = arith.minui %row, %nlast : index
        %base = arith.muli %row_ld, %ldw : index
        // W_RUN_LOAD (e4m3): in the steps known to be in range, the lane's
        // VECS vectors of the row are one contiguous run (VECS x 8 bytes,
        // 16-byte aligned), loaded at once: 16 bytes at VECS 2 instead of two
        // 8-byte loads. 16-bit weights load vector by vector (the constant
        // folds the other branch away).
        %whole = arith.andi %in_range, %run_load : i1
        %row_w = scf.if %whole -> (vector<${VECS}x8x${T_WEIGHT}>) {
          %idx0 = arith.addi %base, %k0 : index
          %y = vector.load %weight[%idx0] {alignment = ${W_RUN_ALIGN}} : memref<${W_SIZE}x${T_WEIGHT}, #gpu.address_space<global>>, vector<${W_RUN}x${T_WEIGHT}>
          %yv = vector.shape_cast %y : vector<${W_RUN}x${T_WEIGHT}> to vector<${VECS}x8x${T_WEIGHT}>
          scf.yield %yv : vector<${VECS}x8x${T_WEIGHT}>
        } else {
          %each = scf.for %v = %c0 to %vecs step %c1 iter_args(%acc_v = %vrow_zero) -> (vector<${VECS}x8x${T_WEIGHT}>) {
            %kv = func.call @vector_k(%k0, %v) : (index, index) -> index
            %idx = arith.addi %base, %kv : index
            %ok_v = func.call @vector_ok(%in_range, %s_ok, %kv) : (i1, i1, index) -> i1
            %x = scf.if %ok_v -> (vector<8x${T_WEIGHT}>) {
              %y = vector.load %weight[%idx] {alignment = ${W_VEC_ALIGN}} : memref<${W_SIZE}x${T_WEIGHT}, #gpu.address_space<global>>, vector<8x${T_WEIGHT}>
              scf.yield %y : vector<8x${T_WEIGHT}>
            } else {
              scf.yield %vzero_w : vector<8x${T_WEIGHT}>
            }
            %acc_v2 = vector.insert %x, %acc_v[%v] : vector<8x${T_WEIGHT}> into vector<${VECS}x8x${T_WEIGHT}>
            scf.yield %acc_v2 : vector<${VECS}x8x${T_WEIGHT}>
          } {gatejit.unroll}
          scf.yield %each : vector<${VECS}x8x${T_WEIGHT}>
        }
        %acc_r = vector.insert %row_w, %acc[%r] : vector<${VECS}x8x${T_WEIGHT}> into vector<${RT}x${VECS}x8x${T_WEIGHT}>
        scf.yield %acc_r : vector<${RT}x${VECS}x8x${T_WEIGHT}>
      } {gatejit.unroll}
      %h_lane = func.call @lane_h_row(%lane) : (index) -> index
      %hs = scf.for %t = %c0 to %mt step %c1 iter_args(%acc = %hzero) -> (vector<${MT}x${VECS}x${H_LOADS}x8x${T}>) {
        %acc_t = scf.for %q = %c0 to %hl step %c1 iter_args(%acc_q = %acc) -> (vector<${MT}x${VECS}x${H_LOADS}x8x${T}>) {
          // Row group (t, q) starts at block row 16 t + H_STRIDE q: a
          // constant once unrolled, so groups past H_LIVE_ROWS (the rows a
          // block can have: min(M_MAX, M_STRIDE)) fold to zeros.
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
      return %ws, %hs : vector<${RT}x${VECS}x8x${T_WEIGHT}>, vector<${MT}x${VECS}x${H_LOADS}x8x${T}>
    }

    // Step j of K slice kp among the S_ALL steps (the slices interleave:
    // step j * KSPLIT_ALL + kp), and its first K element.
    func.func private @step_index(%kp: index, %j: index) -> index {
      %ksplit = arith.constant ${KSPLIT_ALL} : index
      %js = arith.muli %j, %ksplit : index
      %s = arith.addi %js, %kp : index
      return %s : index
    }
    func.func private @step_k_base(%kp: index, %j: index) -> index {
      %kstep = arith.constant ${KSTEP} : index
      %s = func.call @step_index(%kp, %j) : (index, index) -> index
      %k = arith.muli %s, %kstep : index
      return %k : index
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
