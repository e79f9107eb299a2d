// kind: snippet
// param STAGE_BYTES: bytes of one stage
// param T: the contract's element type: hidden, attn and the gated value (bf16 | f16 | f32)
// param STAGE_MEMREF: the memref type of one stage
// param WAIT_YOUNGER_CASES: gfx950's waits for a tile with 1 .. STAGES_AHEAD - 1 tiles issued after it
// param REFILL_ALWAYS: whether every tile refills a slot, past the end with the last tile again (no branch before the reads)
    // gfx950 copies for mma_tiled: global_load_lds_dwordx4, 16 bytes per lane
    // from global memory straight into LDS (no registers, no ds_write). The
    // instruction writes a wave's 64 lanes to consecutive 16-byte slots from
    // the base that lane 0 names, which is how mma_tiled lays out a copy
    // pass (lane l: row l / 8 of the wave's 8 rows, slot l % 8; the XOR
    // swizzle is on the chunk a lane fetches), so every lane names its own
    // slot and lane 0's is the wave's base.
    //
    // Each stage is its own workgroup global (stage_pick_gfx950.mlir picks
    // one by a constant slot; those past STAGES are never picked and
    // dropped): LLVM then knows which stage's LDS-DMA loads a ds_read waits
    // for, instead of all of them (s_waitcnt vmcnt(0)). They are bytes, viewed
    // as ROWS x BK elements by the copies and as f32 parts of the staged
    // epilogue's tile once the K loop is over (epilogue_part_gfx950.mlir).
    memref.global "private" @gatejit_stage_0 : memref<${STAGE_BYTES}xi8, #gpu.address_space<workgroup>> {alignment = 16}
    memref.global "private" @gatejit_stage_1 : memref<${STAGE_BYTES}xi8, #gpu.address_space<workgroup>> {alignment = 16}
    memref.global "private" @gatejit_stage_2 : memref<${STAGE_BYTES}xi8, #gpu.address_space<workgroup>> {alignment = 16}
    memref.global "private" @gatejit_stage_3 : memref<${STAGE_BYTES}xi8, #gpu.address_space<workgroup>> {alignment = 16}
    memref.global "private" @gatejit_stage_4 : memref<${STAGE_BYTES}xi8, #gpu.address_space<workgroup>> {alignment = 16}
    memref.global "private" @gatejit_stage_5 : memref<${STAGE_BYTES}xi8, #gpu.address_space<workgroup>> {alignment = 16}
    memref.global "private" @gatejit_stage_6 : memref<${STAGE_BYTES}xi8, #gpu.address_space<workgroup>> {alignment = 16}
    memref.global "private" @gatejit_stage_7 : memref<${STAGE_BYTES}xi8, #gpu.address_space<workgroup>> {alignment = 16}
    func.func private @copy_to_stage(%src: memref<?x${T}, #gpu.address_space<global>>, %idx: index,
                                     %stage: ${STAGE_MEMREF}, %row: index, %col: index) {
      amdgpu.gather_to_lds %src[%idx], %stage[%row, %col] : vector<8x${T}>, memref<?x${T}, #gpu.address_space<global>>, ${STAGE_MEMREF}
      return
    }
    // Each wave has waited for its own loads of the stage (@wait_copies,
    // s_waitcnt vmcnt) and consumed its reads of the slot being refilled
    // before it arrives, so the barrier itself needs no memory fence: a
    // workgroup fence would make the backend wait for every LDS-DMA load in
    // flight (vmcnt(0)) and the stages would not overlap. The wavefront
    // fences keep the compiler from moving LDS accesses across it.
    func.func private @stage_barrier() {
      llvm.fence syncscope("wavefront") release
      rocdl.s.barrier
      llvm.fence syncscope("wavefront") acquire
      return
    }
    // The loads are counted per instruction (vmcnt), not in groups.
    func.func private @commit_copies() {
      return
    }
    // Returns once stage i (of ntiles) has landed: at most `younger` (the
    // tiles issued after it, at most STAGES - 2) stages of this thread's
    // loads in flight. A constant wherever the K loop knows it (every
    // position of a ring, REFILL_ALWAYS or DRAIN): the switch folds to one
    // s_waitcnt vmcnt.
    func.func private @wait_copies(%i: index, %ntiles: index, %bars: i64, %slot: index, %younger: index) {
      scf.index_switch %younger
${WAIT_YOUNGER_CASES}
      default {
        amdgpu.memory_counter_wait load(0)
        scf.yield
      }
      return
    }
    // Every copy landed (REFILL_ALWAYS: the repeated last tiles too;
    // otherwise the last tile's wait left none in flight).
    func.func private @copies_done() {
      %always = arith.constant ${REFILL_ALWAYS}
      scf.if %always {
        amdgpu.memory_counter_wait load(0)
      }
      return
    }
    func.func private @fence_device() {
      llvm.fence syncscope("agent") acq_rel
      return
    }
