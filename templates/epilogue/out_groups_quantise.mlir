// kind: snippet
// param N: output columns N
// param LDO: row stride of out (elements)
// param BANDS: the fp8 out's groups of 128 columns: N / 128
// param OUT_BLOCK_COLS: output columns a workgroup finishes (divides 128)
// param OUT_ROW_BLOCK: rows a workgroup finishes
// param GROUP_COUNTERS: arrival counters of the fp8 out's groups (row blocks x BANDS)
// param OUT_VEC: values a lane quantises at once in a band's row
// param OUT_VEC_BYTES: OUT_VEC values in attn's type, in bytes
// param T: the contract's element type: hidden, attn and the gated value (bf16 | f16 | f32)
// param OUT_ROW_LANES: lanes a row of a band: 128 / OUT_VEC
// param WAVE: lanes a wave (64 on gfx9, 32 on sm_90)
// param OUT_PASS_ROWS: rows of a band quantised in one pass of the workgroup
// param OUT_PASSES: passes over a band's rows
// param OUT_LDO_WIDE: whether every row's codes start on OUT_VEC bytes (whole stores)
// param OS_SIZE: elements of the fp8 out's scale memref (M_MAX x N / 128)
// param DEVICE_SCOPE: the target's name of the device-wide memory scope (agent | device)
// param STAGE_SIZE: elements of the fp8 out's stage of gated values (M_MAX x N)
// param O_SIZE: elements of the out memref
// param T_OUT: the element type of out (T, or i8 for an fp8 out)
    // @out_groups_done for an fp8 out, per token group of 128 columns
    // (contract.h's OutScale). A group's scale needs all its 128 gated
    // values, which several workgroups compute: each workgroup, having
    // staged its values (finish_piece_stage.mlir), counts them in for its
    // band of 128 columns and rows; the workgroup that completes the count
    // quantises the band (an arrival like the K split's, split_arrival.mlir:
    // no float atomics, the result independent of the arrival order) and
    // resets the counter for the next launch. Called by every thread of a
    // workgroup that finished outputs, uniformly, once: the workgroup's
    // outputs are the columns [col0, col0 + OUT_BLOCK_COLS) of the rows
    // [mrow0, min(mrow0 + OUT_ROW_BLOCK, M)).
    //   ${N} ${LDO} ${BANDS} (N / 128) ${OUT_BLOCK_COLS} (a divisor of 128)
    //   ${OUT_ROW_BLOCK} ${GROUP_COUNTERS} (BANDS x row blocks)
    //   ${OUT_VEC} ${OUT_VEC_BYTES} (elements and bytes of ${T} a lane)
    //   ${OUT_ROW_LANES} (128 / OUT_VEC) ${WAVE}
    //   ${OUT_PASS_ROWS} (threads / OUT_ROW_LANES) ${OUT_PASSES} (row block
    //   / OUT_PASS_ROWS, rounded up) ${OUT_LDO_WIDE} (LDO a multiple of OUT_VEC)
    //   ${OS_SIZE} ${DEVICE_SCOPE} ${STAGE_SIZE}
    memref.global "private" @gatejit_group_arrivals : memref<${GROUP_COUNTERS}xi32, #gpu.address_space<global>> = dense<0>
    memref.global "private" @gatejit_group_last : memref<1xi32, #gpu.address_space<workgroup>>

    func.func private @out_fence_device() {
      llvm.fence syncscope("${DEVICE_SCOPE}") acq_rel
      return
    }

    func.func private @out_groups_done(%out: memref<${O_SIZE}x${T_OUT}, #gpu.address_space<global>>,
                                       %tid: index, %col0: index, %mrow0: index, %m_i: index,
                                       %out_scale: memref<${OS_SIZE}xf32, #gpu.address_space<global>>) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c128 = arith.constant 128 : index
      %n = arith.constant ${N} : index
      %ldo = arith.constant ${LDO} : index
      %bands = arith.constant ${BANDS} : index
      %row_block = arith.constant ${OUT_ROW_BLOCK} : index
      %block_cols = arith.constant ${OUT_BLOCK_COLS} : index
      %zero_i = arith.constant 0 : i32
      %one_i = arith.constant 1 : i32
      %rows_left = arith.subi %m_i, %mrow0 : index
      %rows = arith.minui %rows_left, %row_block : index
      %band = arith.divui %col0, %c128 : index
      %row_band = arith.divui %mrow0, %row_block : index
      %slot_row = arith.muli %row_band, %bands : index
      %slot = arith.addi %slot_row, %band : index
      %mine = arith.muli %rows, %block_cols : index
      %all = arith.muli %rows, %c128 : index
      %mine_i = arith.index_cast %mine : index to i32
      %all_i = arith.index_cast %all : index to i32
      %arrivals = memref.get_global @gatejit_group_arrivals : memref<${GROUP_COUNTERS}xi32, #gpu.address_space<global>>
      %flag = memref.get_global @gatejit_group_last : memref<1xi32, #gpu.address_space<workgroup>>
      // Every thread's staged values visible device-wide, then one count.
      func.call @out_fence_device() : () -> ()
      gpu.barrier
      %first = arith.cmpi eq, %tid, %c0 : index
      scf.if %first {
        %before = memref.atomic_rmw addi %mine_i, %arrivals[%slot] : (i32, memref<${GROUP_COUNTERS}xi32, #gpu.address_space<global>>) -> i32
        %after = arith.addi %before, %mine_i : i32
        %is_last = arith.cmpi eq, %after, %all_i : i32
        %v = arith.select %is_last, %one_i, %zero_i : i32
        memref.store %v, %flag[%c0] : memref<1xi32, #gpu.address_space<workgroup>>
      }
      gpu.barrier
      %f = memref.load %flag[%c0] : memref<1xi32, #gpu.address_space<workgroup>>
      %last = arith.cmpi ne, %f, %zero_i : i32
      scf.if %last {
        func.call @out_fence_device() : () -> ()
        %stage = memref.get_global @gatejit_out_stage : memref<${STAGE_SIZE}x${T}, #gpu.address_space<global>>
        %row_lanes = arith.constant ${OUT_ROW_LANES} : index
        %vec = arith.constant ${OUT_VEC} : index
        %pass_rows = arith.constant ${OUT_PASS_ROWS} : index
        %passes = arith.constant ${OUT_PASSES} : index
        %wave = arith.constant ${WAVE} : index
        %last_row = arith.subi %rows, %c1 : index
        // A row's 128 values are OUT_ROW_LANES lanes of OUT_VEC; the
        // workgroup covers OUT_PASS_ROWS rows at once and reads every pass's
        // rows before it waits (one round trip, not one a row). Rows past
        // the block's read its last row and are never stored; a wave with
        // none of its rows in the block skips the band (it would only take
        // issue slots from the waves that quantise).
        %lane = arith.remui %tid, %row_lanes : index
        %row_in_pass = arith.divui %tid, %row_lanes : index
        %band_col = arith.muli %band, %c128 : index
        %lane_col = arith.muli %lane, %vec : index
        %col = arith.addi %band_col, %lane_col : index
        %w = arith.divui %tid, %wave : index
        %w_first = arith.muli %w, %wave : index
        %w_row0 = arith.divui %w_first, %row_lanes : index
        %busy = arith.cmpi ult, %w_row0, %rows : index
        scf.if %busy {
          %y_zero = arith.constant dense<0.0> : vector<${OUT_PASSES}x${OUT_VEC}x${T}>
          %ys = scf.for %p = %c0 to %passes step %c1 iter_args(%acc = %y_zero) -> (vector<${OUT_PASSES}x${OUT_VEC}x${T}>) {
            %pr = arith.muli %p, %pass_rows : index
            %r = arith.addi %pr, %row_in_pass : index
            %r_c = arith.minui %r, %last_row : index
            %row = arith.addi %mrow0, %r_c : index
            %s_row = arith.muli %row, %n : index
            %s_idx = arith.addi %s_row, %col : index
            %y = vector.load %stage[%s_idx] {alignment = ${OUT_VEC_BYTES}} : memref<${STAGE_SIZE}x${T}, #gpu.address_space<global>>, vector<${OUT_VEC}x${T}>
            %acc2 = vector.insert %y, %acc[%p] : vector<${OUT_VEC}x${T}> into vector<${OUT_PASSES}x${OUT_VEC}x${T}>
            scf.yield %acc2 : vector<${OUT_PASSES}x${OUT_VEC}x${T}>
          } {gatejit.unroll}
          // OUT_VEC-byte stores of the codes where out and its rows allow.
          %o_ptr = memref.extract_aligned_pointer_as_index %out : memref<${O_SIZE}x${T_OUT}, #gpu.address_space<global>> -> index
          %o_low = arith.remui %o_ptr, %vec : index
          %o_ok = arith.cmpi eq, %o_low, %c0 : index
          %ldo_ok = arith.constant ${OUT_LDO_WIDE}
          %wide = arith.andi %o_ok, %ldo_ok : i1
          %lead = arith.cmpi eq, %lane, %c0 : index
          scf.for %p = %c0 to %passes step %c1 {
            %pr = arith.muli %p, %pass_rows : index
            %r = arith.addi %pr, %row_in_pass : index
            %y = vector.extract %ys[%p] : vector<${OUT_VEC}x${T}> from vector<${OUT_PASSES}x${OUT_VEC}x${T}>
            // The row's maximum of |y|, taken on the bits (|y| >= 0 orders as
            // its bit pattern; NaN wins): float max would become a
            // device-library call on NVVM.
            %local = scf.for %e = %c0 to %vec step %c1 iter_args(%m = %zero_i) -> (i32) {
              %ye = vector.extract %y[%e] : ${T} from vector<${OUT_VEC}x${T}>
              %yf = func.call @to_f32(%ye) : (${T}) -> f32
              %ya = llvm.call_intrinsic "llvm.fabs.f32"(%yf) : (f32) -> f32
              %yb = arith.bitcast %ya : f32 to i32
              %m2 = arith.maxui %m, %yb : i32
              scf.yield %m2 : i32
            } {gatejit.unroll}
            %amax_bits = gpu.subgroup_reduce maxui %local cluster(size = ${OUT_ROW_LANES}) : (i32) -> i32
            %amax = arith.bitcast %amax_bits : i32 to f32
            %s = func.call @group_scale(%amax) : (f32) -> f32
            %q_zero = arith.constant dense<0> : vector<${OUT_VEC}xi8>
            %q = scf.for %e = %c0 to %vec step %c1 iter_args(%qv = %q_zero) -> (vector<${OUT_VEC}xi8>) {
              %ye = vector.extract %y[%e] : ${T} from vector<${OUT_VEC}x${T}>
              %yf = func.call @to_f32(%ye) : (${T}) -> f32
              %qe = func.call @quantise_e4m3(%yf, %s) : (f32, f32) -> i8
              %qv2 = vector.insert %qe, %qv[%e] : i8 into vector<${OUT_VEC}xi8>
              scf.yield %qv2 : vector<${OUT_VEC}xi8>
            } {gatejit.unroll}
            %in = arith.cmpi ult, %r, %rows : index
            scf.if %in {
              %row = arith.addi %mrow0, %r : index
              %o_row = arith.muli %row, %ldo : index
              %o_idx = arith.addi %o_row, %col : index
              scf.if %wide {
                vector.store %q, %out[%o_idx] {alignment = ${OUT_VEC}} : memref<${O_SIZE}x${T_OUT}, #gpu.address_space<global>>, vector<${OUT_VEC}xi8>
              } else {
                scf.for %e = %c0 to %vec step %c1 {
                  %qe = vector.extract %q[%e] : i8 from vector<${OUT_VEC}xi8>
                  %oe = arith.addi %o_idx, %e : index
                  memref.store %qe, %out[%oe] : memref<${O_SIZE}x${T_OUT}, #gpu.address_space<global>>
                } {gatejit.unroll}
              }
              scf.if %lead {
                %os_row = arith.muli %row, %bands : index
                %os_idx = arith.addi %os_row, %band : index
                memref.store %s, %out_scale[%os_idx] : memref<${OS_SIZE}xf32, #gpu.address_space<global>>
              }
            }
          } {gatejit.unroll}
        }
        scf.if %first {
          memref.store %zero_i, %arrivals[%slot] : memref<${GROUP_COUNTERS}xi32, #gpu.address_space<global>>
        }
      }
      return
    }
