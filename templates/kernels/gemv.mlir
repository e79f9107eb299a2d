// kind: kernel
// param T: the contract's element type: hidden, attn and the gated value (bf16 | f16 | f32)
// param T_HIDDEN: the element type of hidden (bf16 | f16)
// param T_WEIGHT: the weight's storage type (the 16-bit type, or i8 for e4m3)
// param T_DOT: what @weight_pairs gives @dot2: T_WEIGHT, or f32 for a decoded e4m3 weight
// param KERNEL_SCALE_PARAM: the fp8 weight's scales as the kernel's last argument (empty for 16-bit weights)
// param SCALE_PARAM: the weight snippets' scale parameters: the scales and their K blocks (empty for 16-bit weights)
// param SCALE_ARG: the scale arguments passed to the weight snippets (empty for 16-bit weights)
// param SCALE_TYPE: the types of SCALE_ARG (empty for 16-bit weights)
// param SCALE_KB: 128-wide K blocks of a block-scaled weight: ceil(K / 128)
// param WAVE: lanes a wave (64 on gfx9, 32 on sm_90)
// param WAVES: waves a workgroup
// param BLOCK: threads a workgroup
// param ROWS: weight rows (output columns) a wave owns
// param UNROLL: steps loaded before their products
// param VEC: elements of a 16-byte weight vector (hidden: as many)
// param M_MAX: rows of hidden the kernel is specialised for (M <= M_MAX)
// param PAIRS: element pairs of a 16-byte vector: VEC / 2
// param PART: independent partial sums an accumulator keeps (dot chains in flight)
// param ACC_LEN: accumulator elements: ROWS x M_MAX accumulators x PART
// param OWN_SLOTS: outputs a lane owns in the epilogue: ceil(ROWS x M_MAX / WAVE)
// param N: output columns N
// param N_LAST: N - 1
// param KVECS: 16-byte vectors of a row: K / VEC
// param KSPLIT: waves that split the K range of one column group
// param K_FULL_ALL: wave-wide steps in which every lane has a vector: KVECS / WAVE
// param K_FULL: full steps a wave: K_FULL_ALL / KSPLIT
// param K_GROUPS: trips of UNROLL full steps a wave
// param LDH: row stride of hidden (elements)
// param LDW: row stride of weight (elements)
// param H_SIZE: elements of the hidden memref
// param W_SIZE: elements of the weight memref
// param A_SIZE: elements of the attn memref
// param O_SIZE: elements of the out memref
// param SYMBOL: the kernel's symbol
// param BLOCK_COLS: output columns of a workgroup
// param SUMS: floats of the workgroup's finished sums
// param PIECES: the workgroup's pieces
// param PIECE_SLOTS: pieces a thread finishes: ceil(PIECES / BLOCK)
// param ROW_PIECES: pieces of one row
// param VW: outputs of an epilogue piece: consecutive columns of one row
// param T_OUT: the element type of out (T, or i8 for an fp8 out)
// param KERNEL_OUT_SCALE_PARAM: the fp8 out's scales as the kernel's last argument (empty otherwise)
// param ATTN_BEFORE_LOOP: whether attn is loaded before the K loop
// param ATTN_AFTER_LOOP: whether attn is loaded right after the K loop
// param ATTN_PREFETCH: whether attn's lines are asked into L2 at the kernel's start
// param GROUP_WEIGHTS_FIRST: whether a group's weight loads all go out before its hidden loads
// param W_ZERO: a zero of the weight's storage type (0.0, or 0 for e4m3)
// param OUT_SCALE_ARG: the out scales passed to the out's entry points (empty otherwise)
// param OUT_SCALE_TYPE: the type of OUT_SCALE_ARG (empty otherwise)
// param EPILOGUE: the snippets the kernel calls, filled in
// gemv: the decode-path template (M <= 16). Each wave owns ROWS output
// columns n (ROWS rows of weight); each lane streams 16-byte vectors of those
// rows, UNROLL vectors per row in flight, and keeps one fp32 accumulator per
// (column, hidden row): every hidden vector it loads serves ROWS weight rows.
// The wave then reduces each accumulator with cross-lane operations
// (gpu.subgroup_reduce: DPP on AMD, shuffles on NVIDIA); the workgroup then
// finishes its outputs in pieces of VW columns of a row, 16 or 8 bytes wide
// where attn and out allow (epilogue_pieces.mlir). The weight is read
// exactly once.
// Products go through @dot2 (a per-target snippet: fp32 FMAs, or the gfx950
// packed dot instruction).
module attributes {gpu.container_module} {
  gpu.module @gatejit {
    memref.global "private" @gatejit_gemv_sums : memref<${SUMS}xf32, #gpu.address_space<workgroup>> {alignment = 16}
    gpu.func @${SYMBOL}(%hidden: memref<${H_SIZE}x${T_HIDDEN}, #gpu.address_space<global>>,
                        %weight: memref<${W_SIZE}x${T_WEIGHT}, #gpu.address_space<global>>,
                        %attn: memref<${A_SIZE}x${T}, #gpu.address_space<global>>,
                        %out: memref<${O_SIZE}x${T_OUT}, #gpu.address_space<global>>,
                        %m_actual: i64, %n_actual: i64, %k_actual: i64,
                        %ldh_actual: i64, %ldw_actual: i64, %lda_actual: i64, %ldo_actual: i64${KERNEL_SCALE_PARAM}${KERNEL_OUT_SCALE_PARAM})
        kernel attributes {known_block_size = array<i32: ${BLOCK}, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %wave = arith.constant ${WAVE} : index
      %waves = arith.constant ${WAVES} : index
      %rows = arith.constant ${ROWS} : index
      %unroll = arith.constant ${UNROLL} : index
      %kvecs = arith.constant ${KVECS} : index
      %kgroups = arith.constant ${K_GROUPS} : index
      %krem = arith.muli %kgroups, %unroll : index
      %kfull = arith.constant ${K_FULL} : index
      %kfull_all = arith.constant ${K_FULL_ALL} : index
      %kiters = arith.ceildivui %kvecs, %wave : index
      %ksplit = arith.constant ${KSPLIT} : index
      %m_i = arith.index_cast %m_actual : i64 to index
      %mlast = arith.subi %m_i, %c1 : index
      %scale_kb = arith.constant ${SCALE_KB} : index
      %zero = arith.constant dense<0.0> : vector<${ACC_LEN}xf32>

      %tid = gpu.thread_id x
      %bid = gpu.block_id x
      %lane = arith.remui %tid, %wave : index
      %wave_id = arith.divui %tid, %wave : index
      // KSPLIT waves share ROWS columns, each summing K_FULL consecutive steps
      // (wave kp of the group starts at step kp * K_FULL).
      %group = arith.divui %wave_id, %ksplit : index
      %kp = arith.remui %wave_id, %ksplit : index
      %groups = arith.divui %waves, %ksplit : index
      %group_global = arith.muli %bid, %groups : index
      %group_index = arith.addi %group_global, %group : index
      %col0 = arith.muli %group_index, %rows : index
      %step0 = arith.muli %kp, %kfull : index
      // The attn values of this thread's epilogue pieces, loaded early so
      // that the epilogue waits on no global load: before the main loop
      // (ATTN_BEFORE_LOOP: held across it) or right after it
      // (ATTN_AFTER_LOOP: in flight while the block reduces). Only the
      // thread that loads a piece stores it, so out may still be attn.
      %aligned = func.call @pieces_aligned(%attn, %out)
          : (memref<${A_SIZE}x${T}, #gpu.address_space<global>>, memref<${O_SIZE}x${T_OUT}, #gpu.address_space<global>>) -> i1
      %piece_slots = arith.constant ${PIECE_SLOTS} : index
      %attn_before = arith.constant ${ATTN_BEFORE_LOOP}
      %attn_after = arith.constant ${ATTN_AFTER_LOOP}
      %attn_prefetch = arith.constant ${ATTN_PREFETCH}
      scf.if %attn_prefetch {
        func.call @prefetch_pieces_attn(%attn, %tid, %bid, %c0, %m_i)
            : (memref<${A_SIZE}x${T}, #gpu.address_space<global>>, index, index, index, index) -> ()
      }
      %attn_zero = arith.constant dense<0.0> : vector<${PIECE_SLOTS}x${VW}x${T}>
      %attn_start = scf.if %attn_before -> (vector<${PIECE_SLOTS}x${VW}x${T}>) {
        %pre = func.call @load_pieces_attn(%attn, %tid, %bid, %c0, %m_i, %aligned)
            : (memref<${A_SIZE}x${T}, #gpu.address_space<global>>, index, index, index, index, i1) -> vector<${PIECE_SLOTS}x${VW}x${T}>
        scf.yield %pre : vector<${PIECE_SLOTS}x${VW}x${T}>
      } else {
        scf.yield %attn_zero : vector<${PIECE_SLOTS}x${VW}x${T}>
      }

      // Full steps, UNROLL at a time: UNROLL independent loads per row in flight.
      // GROUP_WEIGHTS_FIRST: the weight vectors of all UNROLL steps are loaded
      // before the first step's hidden loads (a step's hidden loads would
      // otherwise sit between the weight loads of successive steps); else
      // each step loads its weights, then its hidden rows.
      %weights_first = arith.constant ${GROUP_WEIGHTS_FIRST}
      %acc_groups = scf.for %g = %c0 to %kgroups step %c1 iter_args(%acc = %zero) -> (vector<${ACC_LEN}xf32>) {
        %g0 = arith.muli %g, %unroll : index
        %acc_g = scf.if %weights_first -> (vector<${ACC_LEN}xf32>) {
          %wg0 = arith.constant dense<${W_ZERO}> : vector<${UNROLL}x${ROWS}x${VEC}x${T_WEIGHT}>
          %wgroup = scf.for %u = %c0 to %unroll step %c1 iter_args(%wg = %wg0) -> (vector<${UNROLL}x${ROWS}x${VEC}x${T_WEIGHT}>) {
            %step_local = arith.addi %g0, %u : index
            %step = arith.addi %step0, %step_local : index
            %v_base = arith.muli %step, %wave : index
            %v = arith.addi %v_base, %lane : index
            %wr = func.call @load_weights(%weight, %col0, %v)
                : (memref<${W_SIZE}x${T_WEIGHT}, #gpu.address_space<global>>, index, index) -> vector<${ROWS}x${VEC}x${T_WEIGHT}>
            %wg2 = vector.insert %wr, %wg[%u] : vector<${ROWS}x${VEC}x${T_WEIGHT}> into vector<${UNROLL}x${ROWS}x${VEC}x${T_WEIGHT}>
            scf.yield %wg2 : vector<${UNROLL}x${ROWS}x${VEC}x${T_WEIGHT}>
          } {gatejit.unroll}
          %a_all = scf.for %u = %c0 to %unroll step %c1 iter_args(%a = %acc) -> (vector<${ACC_LEN}xf32>) {
            %step_local = arith.addi %g0, %u : index
            %step = arith.addi %step0, %step_local : index
            %v_base = arith.muli %step, %wave : index
            %v = arith.addi %v_base, %lane : index
            %wr = vector.extract %wgroup[%u] : vector<${ROWS}x${VEC}x${T_WEIGHT}> from vector<${UNROLL}x${ROWS}x${VEC}x${T_WEIGHT}>
            %a2 = func.call @accumulate_loaded(%hidden, %wr, %a, %col0, %v, %mlast${SCALE_ARG})
                : (memref<${H_SIZE}x${T_HIDDEN}, #gpu.address_space<global>>, vector<${ROWS}x${VEC}x${T_WEIGHT}>,
                   vector<${ACC_LEN}xf32>, index, index, index${SCALE_TYPE}) -> vector<${ACC_LEN}xf32>
            scf.yield %a2 : vector<${ACC_LEN}xf32>
          } {gatejit.unroll}
          scf.yield %a_all : vector<${ACC_LEN}xf32>
        } else {
          %a_steps = scf.for %u = %c0 to %unroll step %c1 iter_args(%a = %acc) -> (vector<${ACC_LEN}xf32>) {
            %step_local = arith.addi %g0, %u : index
            %step = arith.addi %step0, %step_local : index
            %v_base = arith.muli %step, %wave : index
            %v = arith.addi %v_base, %lane : index
            %a2 = func.call @accumulate_vector(%hidden, %weight, %a, %col0, %v, %mlast${SCALE_ARG})
                : (memref<${H_SIZE}x${T_HIDDEN}, #gpu.address_space<global>>, memref<${W_SIZE}x${T_WEIGHT}, #gpu.address_space<global>>,
                   vector<${ACC_LEN}xf32>, index, index, index${SCALE_TYPE}) -> vector<${ACC_LEN}xf32>
            scf.yield %a2 : vector<${ACC_LEN}xf32>
          } {gatejit.unroll}
          scf.yield %a_steps : vector<${ACC_LEN}xf32>
        }
        scf.yield %acc_g : vector<${ACC_LEN}xf32>
      }
      // Full steps left over from the groups.
      %acc_full = scf.for %step_local = %krem to %kfull step %c1 iter_args(%acc = %acc_groups) -> (vector<${ACC_LEN}xf32>) {
        %step = arith.addi %step0, %step_local : index
        %v_base = arith.muli %step, %wave : index
        %v = arith.addi %v_base, %lane : index
        %a2 = func.call @accumulate_vector(%hidden, %weight, %acc, %col0, %v, %mlast${SCALE_ARG})
            : (memref<${H_SIZE}x${T_HIDDEN}, #gpu.address_space<global>>, memref<${W_SIZE}x${T_WEIGHT}, #gpu.address_space<global>>,
               vector<${ACC_LEN}xf32>, index, index, index${SCALE_TYPE}) -> vector<${ACC_LEN}xf32>
        scf.yield %a2 : vector<${ACC_LEN}xf32>
      }
      // Tail: the last, partial step (none when KVECS is a multiple of WAVE),
      // summed by the group's last wave.
      %kp_last = arith.subi %ksplit, %c1 : index
      %is_last = arith.cmpi eq, %kp, %kp_last : index
      %acc_all = scf.for %step = %kfull_all to %kiters step %c1 iter_args(%acc = %acc_full) -> (vector<${ACC_LEN}xf32>) {
        %v_base = arith.muli %step, %wave : index
        %v = arith.addi %v_base, %lane : index
        %in_k = arith.cmpi ult, %v, %kvecs : index
        %in = arith.andi %in_k, %is_last : i1
        %acc_next = scf.if %in -> (vector<${ACC_LEN}xf32>) {
          %r = func.call @accumulate_vector(%hidden, %weight, %acc, %col0, %v, %mlast${SCALE_ARG})
              : (memref<${H_SIZE}x${T_HIDDEN}, #gpu.address_space<global>>, memref<${W_SIZE}x${T_WEIGHT}, #gpu.address_space<global>>,
                 vector<${ACC_LEN}xf32>, index, index, index${SCALE_TYPE}) -> vector<${ACC_LEN}xf32>
          scf.yield %r : vector<${ACC_LEN}xf32>
        } else {
          scf.yield %acc : vector<${ACC_LEN}xf32>
        }
        scf.yield %acc_next : vector<${ACC_LEN}xf32>
      }

      %attn_pre = scf.if %attn_after -> (vector<${PIECE_SLOTS}x${VW}x${T}>) {
        %post = func.call @load_pieces_attn(%attn, %tid, %bid, %c0, %m_i, %aligned)
            : (memref<${A_SIZE}x${T}, #gpu.address_space<global>>, index, index, index, index, i1) -> vector<${PIECE_SLOTS}x${VW}x${T}>
        scf.yield %post : vector<${PIECE_SLOTS}x${VW}x${T}>
      } else {
        scf.yield %attn_start : vector<${PIECE_SLOTS}x${VW}x${T}>
      }

      // Reduce every accumulator across the wave; lane (i mod WAVE) owns
      // output i = r * M_MAX + m and keeps its sum in slot i / WAVE.
      %n = arith.constant ${N} : index
      %mmax = arith.constant ${M_MAX} : index
      %fzero = arith.constant 0.0 : f32
      %outputs = arith.muli %rows, %mmax : index
      %slots = arith.constant ${OWN_SLOTS} : index
      %owned0 = arith.constant dense<0.0> : vector<${OWN_SLOTS}xf32>
      %owned = scf.for %r = %c0 to %rows step %c1 iter_args(%own_r = %owned0) -> (vector<${OWN_SLOTS}xf32>) {
        %own_rm = scf.for %m = %c0 to %mmax step %c1 iter_args(%own = %own_r) -> (vector<${OWN_SLOTS}xf32>) {
          %i_row = arith.muli %r, %mmax : index
          %i = arith.addi %i_row, %m : index
          %part = arith.constant ${PART} : index
          %p0 = arith.muli %i, %part : index
          %partial = scf.for %p = %c0 to %part step %c1 iter_args(%sum = %fzero) -> (f32) {
            %j = arith.addi %p0, %p : index
            %x = vector.extract %acc_all[%j] : f32 from vector<${ACC_LEN}xf32>
            %s2 = arith.addf %sum, %x : f32
            scf.yield %s2 : f32
          } {gatejit.unroll}
          %dot_wave = gpu.subgroup_reduce add %partial : (f32) -> f32
          // Sum the group's KSPLIT waves (identity when KSPLIT = 1).
          %dot = func.call @combine_partials(%dot_wave, %i, %wave_id, %group, %lane) : (f32, index, index, index, index) -> f32
          %owner = arith.remui %i, %wave : index
          %slot = arith.divui %i, %wave : index
          %mine = arith.cmpi eq, %lane, %owner : index
          %kept = vector.extract %own[%slot] : f32 from vector<${OWN_SLOTS}xf32>
          %val = arith.select %mine, %dot, %kept : f32
          %own2 = vector.insert %val, %own[%slot] : f32 into vector<${OWN_SLOTS}xf32>
          scf.yield %own2 : vector<${OWN_SLOTS}xf32>
        } {gatejit.unroll}
        scf.yield %own_rm : vector<${OWN_SLOTS}xf32>
      } {gatejit.unroll}
      // Slot k of this lane is output i = k * WAVE + lane of its group:
      // column r = i / M_MAX of the group's ROWS, row m = i mod M_MAX. The
      // group's first wave puts its outputs in workgroup memory in output
      // order (row-major M_MAX x BLOCK_COLS); after a barrier each thread
      // finishes pieces of VW columns of one row (epilogue_pieces.mlir).
      %lead = arith.cmpi eq, %kp, %c0 : index
      %sums = memref.get_global @gatejit_gemv_sums : memref<${SUMS}xf32, #gpu.address_space<workgroup>>
      %block_cols = arith.constant ${BLOCK_COLS} : index
      %group_col = arith.muli %group, %rows : index
      scf.for %k = %c0 to %slots step %c1 {
        %base = arith.muli %k, %wave : index
        %i = arith.addi %base, %lane : index
        %i_ok = arith.cmpi ult, %i, %outputs : index
        %ok = arith.andi %i_ok, %lead : i1
        scf.if %ok {
          %r = arith.divui %i, %mmax : index
          %m = arith.remui %i, %mmax : index
          %m_at = arith.muli %m, %block_cols : index
          %c_at = arith.addi %group_col, %r : index
          %at = arith.addi %m_at, %c_at : index
          %dot = vector.extract %owned[%k] : f32 from vector<${OWN_SLOTS}xf32>
          memref.store %dot, %sums[%at] : memref<${SUMS}xf32, #gpu.address_space<workgroup>>
        }
      } {gatejit.unroll}
      gpu.barrier
      %attn_early = arith.ori %attn_before, %attn_after : i1
      scf.for %q = %c0 to %piece_slots step %c1 {
        %at, %row, %col, %in = func.call @piece_place(%q, %tid, %bid, %c0, %m_i)
            : (index, index, index, index, index) -> (index, index, index, i1)
        scf.if %in {
          %dots = vector.load %sums[%at] {alignment = 16} : memref<${SUMS}xf32, #gpu.address_space<workgroup>>, vector<${VW}xf32>
          %a = scf.if %attn_early -> (vector<${VW}x${T}>) {
            %pre = vector.extract %attn_pre[%q] : vector<${VW}x${T}> from vector<${PIECE_SLOTS}x${VW}x${T}>
            scf.yield %pre : vector<${VW}x${T}>
          } else {
            %true = arith.constant true
            %now = func.call @load_piece_attn(%attn, %row, %col, %aligned, %true)
                : (memref<${A_SIZE}x${T}, #gpu.address_space<global>>, index, index, i1, i1) -> vector<${VW}x${T}>
            scf.yield %now : vector<${VW}x${T}>
          }
          func.call @finish_piece(%out, %dots, %a, %row, %col, %aligned)
              : (memref<${O_SIZE}x${T_OUT}, #gpu.address_space<global>>, vector<${VW}xf32>, vector<${VW}x${T}>,
                 index, index, i1) -> ()
        }
      } {gatejit.unroll}
      // The block's outputs are final, or (an fp8 out) wait for their group.
      %out_col0 = arith.muli %bid, %block_cols : index
      func.call @out_groups_done(%out, %tid, %out_col0, %c0, %m_i${OUT_SCALE_ARG})
          : (memref<${O_SIZE}x${T_OUT}, #gpu.address_space<global>>, index, index, index, index${OUT_SCALE_TYPE}) -> ()
      gpu.return
    }

    // Piece q of thread tid (pieces tid, tid + BLOCK, ...: VW consecutive
    // columns of one output row): its place in the block's sums (row-major
    // M_MAX x BLOCK_COLS), its output row and column, and whether it is an
    // output at all.
    // (mrow0 is 0: a gemv block has every row; the argument keeps the
    // signature epilogue_pieces.mlir's @load_pieces_attn calls.)
    func.func private @piece_place(%q: index, %tid: index, %bid: index, %mrow0: index, %m_i: index)
        -> (index, index, index, i1) {
      %vw = arith.constant ${VW} : index
      %block = arith.constant ${BLOCK} : index
      %pieces = arith.constant ${PIECES} : index
      %row_pieces = arith.constant ${ROW_PIECES} : index
      %block_cols = arith.constant ${BLOCK_COLS} : index
      %n = arith.constant ${N} : index
      %q_base = arith.muli %q, %block : index
      %p = arith.addi %q_base, %tid : index
      %p_ok = arith.cmpi ult, %p, %pieces : index
      %row = arith.divui %p, %row_pieces : index
      %piece = arith.remui %p, %row_pieces : index
      %col_in_block = arith.muli %piece, %vw : index
      %block_col0 = arith.muli %bid, %block_cols : index
      %col = arith.addi %block_col0, %col_in_block : index
      %row_ok = arith.cmpi ult, %row, %m_i : index
      %col_ok = arith.cmpi ult, %col, %n : index
      %in_a = arith.andi %p_ok, %row_ok : i1
      %in = arith.andi %in_a, %col_ok : i1
      %row_at = arith.muli %row, %block_cols : index
      %at = arith.addi %row_at, %col_in_block : index
      return %at, %row, %col, %in : index, index, index, i1
    }

    // The ROWS weight vectors of 16-byte step v for columns col0 .. col0 +
    // ROWS - 1 (rows past N read row N - 1: in bounds, never stored).
    func.func private @load_weights(%weight: memref<${W_SIZE}x${T_WEIGHT}, #gpu.address_space<global>>,
                                    %col0: index, %v: index) -> vector<${ROWS}x${VEC}x${T_WEIGHT}> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %vec = arith.constant ${VEC} : index
      %rows = arith.constant ${ROWS} : index
      %nlast = arith.constant ${N_LAST} : index
      %ldw = arith.constant ${LDW} : index
      %k0 = arith.muli %v, %vec : index
      %wraw0 = arith.constant dense<${W_ZERO}> : vector<${ROWS}x${VEC}x${T_WEIGHT}>
      %wraw = scf.for %r = %c0 to %rows step %c1 iter_args(%wacc = %wraw0) -> (vector<${ROWS}x${VEC}x${T_WEIGHT}>) {
        %col = arith.addi %col0, %r : index
        %col_ld = arith.minui %col, %nlast : index
        %w_row = arith.muli %col_ld, %ldw : index
        %w_idx = arith.addi %w_row, %k0 : index
        %w = vector.load %weight[%w_idx] {alignment = 16} : memref<${W_SIZE}x${T_WEIGHT}, #gpu.address_space<global>>, vector<${VEC}x${T_WEIGHT}>
        %wacc2 = vector.insert %w, %wacc[%r] : vector<${VEC}x${T_WEIGHT}> into vector<${ROWS}x${VEC}x${T_WEIGHT}>
        scf.yield %wacc2 : vector<${ROWS}x${VEC}x${T_WEIGHT}>
      } {gatejit.unroll}
      return %wraw : vector<${ROWS}x${VEC}x${T_WEIGHT}>
    }

    // One step with its weights loaded: see @accumulate_vector.
    func.func private @accumulate_loaded(%hidden: memref<${H_SIZE}x${T_HIDDEN}, #gpu.address_space<global>>,
                                         %wraw: vector<${ROWS}x${VEC}x${T_WEIGHT}>,
                                         %acc: vector<${ACC_LEN}xf32>, %col0: index, %v: index,
                                         %mlast: index${SCALE_PARAM}) -> vector<${ACC_LEN}xf32> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %vec = arith.constant ${VEC} : index
      %rows = arith.constant ${ROWS} : index
      %mmax = arith.constant ${M_MAX} : index
      %nlast = arith.constant ${N_LAST} : index
      %ldh = arith.constant ${LDH} : index
            %k0 = arith.muli %v, %vec : index
      %pairs = arith.constant ${PAIRS} : index
      %part = arith.constant ${PART} : index
      // Every hidden load of the step before the first product, then the
      // weights as PAIRS pairs of what the dot snippet multiplies
      // (@weight_pairs: the storage type itself, or decoded fp8 times its
      // scale).
      %hzero = arith.constant dense<0.0> : vector<${M_MAX}x${PAIRS}x2x${T_HIDDEN}>
      %hs = scf.for %m = %c0 to %mmax step %c1 iter_args(%hacc = %hzero) -> (vector<${M_MAX}x${PAIRS}x2x${T_HIDDEN}>) {
        %hm = arith.minui %m, %mlast : index
        %h_row = arith.muli %hm, %ldh : index
        %h_idx = arith.addi %h_row, %k0 : index
        %h = vector.load %hidden[%h_idx] {alignment = 16} : memref<${H_SIZE}x${T_HIDDEN}, #gpu.address_space<global>>, vector<${VEC}x${T_HIDDEN}>
        %h2 = vector.shape_cast %h : vector<${VEC}x${T_HIDDEN}> to vector<${PAIRS}x2x${T_HIDDEN}>
        %hacc2 = vector.insert %h2, %hacc[%m] : vector<${PAIRS}x2x${T_HIDDEN}> into vector<${M_MAX}x${PAIRS}x2x${T_HIDDEN}>
        scf.yield %hacc2 : vector<${M_MAX}x${PAIRS}x2x${T_HIDDEN}>
      } {gatejit.unroll}
      %wzero = arith.constant dense<0.0> : vector<${ROWS}x${PAIRS}x2x${T_DOT}>
      %ws = scf.for %r = %c0 to %rows step %c1 iter_args(%wacc = %wzero) -> (vector<${ROWS}x${PAIRS}x2x${T_DOT}>) {
        %col = arith.addi %col0, %r : index
        %col_ld = arith.minui %col, %nlast : index
        %w = vector.extract %wraw[%r] : vector<${VEC}x${T_WEIGHT}> from vector<${ROWS}x${VEC}x${T_WEIGHT}>
        %w2 = func.call @weight_pairs(%w, %col_ld, %k0${SCALE_ARG})
            : (vector<${VEC}x${T_WEIGHT}>, index, index${SCALE_TYPE}) -> vector<${PAIRS}x2x${T_DOT}>
        %wacc2 = vector.insert %w2, %wacc[%r] : vector<${PAIRS}x2x${T_DOT}> into vector<${ROWS}x${PAIRS}x2x${T_DOT}>
        scf.yield %wacc2 : vector<${ROWS}x${PAIRS}x2x${T_DOT}>
      } {gatejit.unroll}
      %res = scf.for %m = %c0 to %mmax step %c1 iter_args(%a = %acc) -> (vector<${ACC_LEN}xf32>) {
        %h2 = vector.extract %hs[%m] : vector<${PAIRS}x2x${T_HIDDEN}> from vector<${M_MAX}x${PAIRS}x2x${T_HIDDEN}>
        %a_m = scf.for %r = %c0 to %rows step %c1 iter_args(%ar = %a) -> (vector<${ACC_LEN}xf32>) {
          %wr = vector.extract %ws[%r] : vector<${PAIRS}x2x${T_DOT}> from vector<${ROWS}x${PAIRS}x2x${T_DOT}>
          %i_row = arith.muli %r, %mmax : index
          %i = arith.addi %i_row, %m : index
          %p0 = arith.muli %i, %part : index
          // Pair q of the vector goes to partial sum q mod PART: PART
          // independent dot chains per accumulator hide the FMA latency.
          %ar2 = scf.for %q = %c0 to %pairs step %c1 iter_args(%av = %ar) -> (vector<${ACC_LEN}xf32>) {
            %pq = arith.remui %q, %part : index
            %j = arith.addi %p0, %pq : index
            %sum = vector.extract %av[%j] : f32 from vector<${ACC_LEN}xf32>
            %wq = vector.extract %wr[%q] : vector<2x${T_DOT}> from vector<${PAIRS}x2x${T_DOT}>
            %hq = vector.extract %h2[%q] : vector<2x${T_HIDDEN}> from vector<${PAIRS}x2x${T_HIDDEN}>
            %next = func.call @dot2(%wq, %hq, %sum) : (vector<2x${T_DOT}>, vector<2x${T_HIDDEN}>, f32) -> f32
            %av2 = vector.insert %next, %av[%j] : f32 into vector<${ACC_LEN}xf32>
            scf.yield %av2 : vector<${ACC_LEN}xf32>
          } {gatejit.unroll}
          scf.yield %ar2 : vector<${ACC_LEN}xf32>
        } {gatejit.unroll}
        scf.yield %a_m : vector<${ACC_LEN}xf32>
      } {gatejit.unroll}
      return %res : vector<${ACC_LEN}xf32>
    }


    // acc[r * M_MAX + m] += dot(weight[col0 + r, 16-byte vector v], hidden[m, vector v])
    // for r < ROWS, m < M_MAX: the step's weights loaded, then its hidden
    // rows (rows m >= M read row M - 1: in bounds, never stored).
    func.func private @accumulate_vector(%hidden: memref<${H_SIZE}x${T_HIDDEN}, #gpu.address_space<global>>,
                                         %weight: memref<${W_SIZE}x${T_WEIGHT}, #gpu.address_space<global>>,
                                         %acc: vector<${ACC_LEN}xf32>, %col0: index, %v: index,
                                         %mlast: index${SCALE_PARAM}) -> vector<${ACC_LEN}xf32> {
      %wraw = func.call @load_weights(%weight, %col0, %v)
          : (memref<${W_SIZE}x${T_WEIGHT}, #gpu.address_space<global>>, index, index) -> vector<${ROWS}x${VEC}x${T_WEIGHT}>
      %r = func.call @accumulate_loaded(%hidden, %wraw, %acc, %col0, %v, %mlast${SCALE_ARG})
          : (memref<${H_SIZE}x${T_HIDDEN}, #gpu.address_space<global>>, vector<${ROWS}x${VEC}x${T_WEIGHT}>,
             vector<${ACC_LEN}xf32>, index, index, index${SCALE_TYPE}) -> vector<${ACC_LEN}xf32>
      return %r : vector<${ACC_LEN}xf32>
    }

${EPILOGUE}
  }
}
