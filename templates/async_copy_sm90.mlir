    // sm_90 asynchronous copies for mma_tiled: cp.async.cg (16 bytes, cached
    // in L2 only: a chunk is read once per block), committed in groups, one
    // group per stage; and the device-scope fence of the K-split meeting.
    // One 16-byte chunk from global byte address %src to shared byte address %dst.
    func.func private @copy_chunk(%src: i64, %dst: i64) {
      %sp = llvm.inttoptr %src : i64 to !llvm.ptr<1>
      %dp = llvm.inttoptr %dst : i64 to !llvm.ptr<3>
      nvvm.cp.async.shared.global %dp, %sp, 16, cache = cg : !llvm.ptr<3>, !llvm.ptr<1>
      return
    }
    func.func private @commit_copies() {
      nvvm.cp.async.commit.group
      return
    }
    // Returns once at most PENDING (= STAGES_AHEAD - 1) of this thread's groups are
    // in flight: the oldest stage has landed. Every iteration commits a group
    // (empty past the last tile), so the count holds in the tail too.
    func.func private @wait_copies(%i: index, %ntiles: index) {
      nvvm.cp.async.wait.group ${PENDING}
      return
    }
    func.func private @fence_device() {
      llvm.fence syncscope("device") acq_rel
      return
    }
