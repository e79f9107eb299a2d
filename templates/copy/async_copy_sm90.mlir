// kind: snippet
// param T: the contract's element type: hidden, attn and the gated value (bf16 | f16 | f32)
// param STAGE_MEMREF: the memref type of one stage
// param PENDING: what the target's wait counts for STAGES_PENDING stages (copy groups, or loads)
// param REFILL_ALWAYS: whether every tile refills a slot, past the end with the last tile again (no branch before the reads)
    // sm_90 asynchronous copies for mma_tiled: cp.async.cg (16 bytes, cached
    // in L2 only: a chunk is read once per block), committed in groups, one
    // group per stage; and the device-scope fence of the K-split meeting.
    // One 16-byte chunk, src[idx ...] -> stage[row, col ...], as byte
    // addresses for cp.async (@copy_chunk: the instruction has no inliner
    // interface, so it takes no memref).
    func.func private @copy_to_stage(%src: memref<?x${T}, #gpu.address_space<global>>, %idx: index,
                                     %stage: ${STAGE_MEMREF}, %row: index, %col: index) {
      %s = func.call @global_address(%src, %idx) : (memref<?x${T}, #gpu.address_space<global>>, index) -> i64
      %d = func.call @stage_address(%stage, %row, %col) : (${STAGE_MEMREF}, index, index) -> i64
      func.call @copy_chunk(%s, %d) : (i64, i64) -> ()
      return
    }
    func.func private @global_address(%src: memref<?x${T}, #gpu.address_space<global>>, %idx: index) -> i64 {
      %eb = arith.constant 2 : index
      %base = memref.extract_aligned_pointer_as_index %src : memref<?x${T}, #gpu.address_space<global>> -> index
      %off = arith.muli %idx, %eb : index
      %addr = arith.addi %base, %off : index
      %a = arith.index_cast %addr : index to i64
      return %a : i64
    }
    // The stages share barriers with the K-split meeting: a plain barrier.
    func.func private @stage_barrier() {
      gpu.barrier
      return
    }
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
    func.func private @wait_copies(%i: index, %ntiles: index, %bars: i64, %slot: index, %younger: index) {
      nvvm.cp.async.wait.group ${PENDING}
      return
    }
    // Every copy group landed (REFILL_ALWAYS: the repeated last tiles too;
    // otherwise the groups past the range were empty).
    func.func private @copies_done() {
      %always = arith.constant ${REFILL_ALWAYS}
      scf.if %always {
        nvvm.cp.async.wait.group 0
      }
      return
    }
    func.func private @fence_device() {
      llvm.fence syncscope("device") acq_rel
      return
    }
