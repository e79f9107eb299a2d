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
    //   ${OUT_ROW_BLOCK} ${GROUP_COUNTERS} (BANDS x row blocks) ${WAVE}
    //   ${BLOCK_WAVES} (waves of the workgroup) ${OUT_LANE_ELEMS} (128 / WAVE)
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
      %wave = arith.constant ${WAVE} : index
      %waves = arith.constant ${BLOCK_WAVES} : index
      %elems = arith.constant ${OUT_LANE_ELEMS} : index
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
        %lane = arith.remui %tid, %wave : index
        %w = arith.divui %tid, %wave : index
        %band_col = arith.muli %band, %c128 : index
        %lane_col = arith.muli %lane, %elems : index
        %col = arith.addi %band_col, %lane_col : index
        // One wave a row: each lane holds OUT_LANE_ELEMS consecutive values,
        // the wave's maximum of |y| gives the scale. The maximum is taken on
        // the bits (|y| >= 0 orders as its bit pattern; NaN wins): float
        // max would become a device-library call on NVVM.
        scf.for %r = %w to %rows step %waves {
          %row = arith.addi %mrow0, %r : index
          %s_row = arith.muli %row, %n : index
          %s_idx = arith.addi %s_row, %col : index
          %y = vector.load %stage[%s_idx] : memref<${STAGE_SIZE}x${T}, #gpu.address_space<global>>, vector<${OUT_LANE_ELEMS}x${T}>
          %local = scf.for %e = %c0 to %elems step %c1 iter_args(%m = %zero_i) -> (i32) {
            %ye = vector.extract %y[%e] : ${T} from vector<${OUT_LANE_ELEMS}x${T}>
            %yf = func.call @to_f32(%ye) : (${T}) -> f32
            %ya = llvm.call_intrinsic "llvm.fabs.f32"(%yf) : (f32) -> f32
            %yb = arith.bitcast %ya : f32 to i32
            %m2 = arith.maxui %m, %yb : i32
            scf.yield %m2 : i32
          } {gatejit.unroll}
          %amax_bits = gpu.subgroup_reduce maxui %local : (i32) -> i32
          %amax = arith.bitcast %amax_bits : i32 to f32
          %s = func.call @group_scale(%amax) : (f32) -> f32
          %o_row = arith.muli %row, %ldo : index
          %o_idx = arith.addi %o_row, %col : index
          scf.for %e = %c0 to %elems step %c1 {
            %ye = vector.extract %y[%e] : ${T} from vector<${OUT_LANE_ELEMS}x${T}>
            %yf = func.call @to_f32(%ye) : (${T}) -> f32
            %q = func.call @quantise_e4m3(%yf, %s) : (f32, f32) -> i8
            %oe = arith.addi %o_idx, %e : index
            memref.store %q, %out[%oe] : memref<${O_SIZE}x${T_OUT}, #gpu.address_space<global>>
          } {gatejit.unroll}
          %lead = arith.cmpi eq, %lane, %c0 : index
          scf.if %lead {
            %os_row = arith.muli %row, %bands : index
            %os_idx = arith.addi %os_row, %band : index
            memref.store %s, %out_scale[%os_idx] : memref<${OS_SIZE}xf32, #gpu.address_space<global>>
          }
        }
        scf.if %first {
          memref.store %zero_i, %arrivals[%slot] : memref<${GROUP_COUNTERS}xi32, #gpu.address_space<global>>
        }
      }
      return
    }
