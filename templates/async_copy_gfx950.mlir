    // gfx950 copies for mma_tiled: global_load_lds_dwordx4, 16 bytes per lane
    // from global memory straight into LDS (no registers, no ds_write). The
    // instruction writes a wave's 64 lanes to consecutive 16-byte slots from
    // one LDS base, which is how mma_tiled lays out a copy pass (lane l: row
    // l / 8 of the wave's 8 rows, slot l % 8), so the base is this lane's
    // slot less 16 bytes per lane before it.
    func.func private @copy_chunk(%src: i64, %dst: i64) {
      %lane = gpu.lane_id
      %lane_i = arith.index_cast %lane : index to i64
      %c16 = arith.constant 16 : i64
      %before = arith.muli %lane_i, %c16 : i64
      %base = arith.subi %dst, %before : i64
      %sp = llvm.inttoptr %src : i64 to !llvm.ptr<1>
      %dp = llvm.inttoptr %base : i64 to !llvm.ptr<3>
      rocdl.global.load.lds %sp, %dp, 16, 0, 0
      return
    }
    // The loads are counted per instruction (vmcnt), not in groups.
    func.func private @commit_copies() {
      return
    }
    // Returns once stage i (of ntiles) has landed: at most PENDING (=
    // (STAGES - 2) x this thread's loads per stage) loads in flight, or none
    // in the last STAGES - 2 tiles, after which fewer stages were issued.
    func.func private @wait_copies(%i: index, %ntiles: index) {
      %younger = arith.constant ${STAGES_PENDING} : index
      %younger_end = arith.addi %i, %younger : index
      %tail = arith.cmpi uge, %younger_end, %ntiles : index
      scf.if %tail {
        amdgpu.memory_counter_wait load(0)
      } else {
        amdgpu.memory_counter_wait load(${PENDING})
      }
      return
    }
    func.func private @fence_device() {
      llvm.fence syncscope("agent") acq_rel
      return
    }
