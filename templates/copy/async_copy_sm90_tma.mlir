// kind: snippet
// param STAGES: stages in the ring
// param BARRIERS: byte offset of the stage barriers (after the stages)
// param STAGE_MEMREF: the memref type of one stage
// param BK: K elements of a stage
// param BN: weight rows (output columns) of a workgroup tile
// param WARPGROUPS: warpgroups that release a slot
// param COUNTERS_AFTER_BARRIERS: byte offset of the slot counters from the barriers
// param STAGE_BYTES: bytes of one stage
    // sm_90 copies for mma_tiled through the tensor memory accelerator (TMA):
    // one thread hands a whole stage to the copy engine as two boxes, BN
    // weight rows and BM hidden rows of BK = 64 elements, described by the
    // tensor maps the runtime encodes at launch (kernel_binary.h,
    // TensorMapBoxes). The engine writes them in the 128-byte swizzle the
    // stages use (chunk c of row r at slot c ^ (r mod 8); every operand
    // starts on a 1024-byte boundary), fills rows past N or M with zeros,
    // and counts the bytes landed on the stage's mbarrier. No thread spends
    // instructions or registers on addresses, and no copy waits in a warp's
    // scoreboard.
    //
    // Stage s's mbarrier is at byte BARRIERS + 8 s of the dynamic workgroup
    // memory, after the stages. The i-th tile of a split uses slot i mod
    // STAGES, the (i / STAGES)-th time the slot fills: the phase waited for
    // has that parity.
    //
    // No block barrier in the K loop: a slot is refilled (with the tile
    // STAGES - WGMMA_PENDING ahead) as soon as every warpgroup's wgmma of
    // the tile that used it has completed (@stage_refill, after the
    // products). With one
    // warpgroup its thread 0 issues the copy; with two, each warpgroup's
    // thread 0 counts itself in on the slot's counter (byte BARRIERS + 8
    // STAGES + 4 s, an increment that wraps to 0) and the last to arrive
    // issues it.

    // Thread 0 sets up the barriers (one arrival each: its own, with the
    // bytes to expect) before any thread uses them.
    func.func private @copies_begin(%smem: i64, %tid: index) -> i64 {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %stages = arith.constant ${STAGES} : index
      %offset = arith.constant ${BARRIERS} : i64
      %bars = arith.addi %smem, %offset : i64
      %first = arith.cmpi eq, %tid, %c0 : index
      scf.if %first {
        scf.for %s = %c0 to %stages step %c1 {
          %bar = func.call @stage_barrier_address(%bars, %s) : (i64, index) -> i64
          func.call @init_barrier(%bar) : (i64) -> ()
          %count = func.call @slot_counter_address(%bars, %s) : (i64, index) -> i64
          func.call @clear_counter(%count) : (i64) -> ()
        }
        func.call @fence_barrier_init() : () -> ()
      }
      gpu.barrier
      return %bars : i64
    }

    // The prologue's stages: thread 0 issues them. (%mlast: the chunk
    // copies' clamp; the tensor maps bound the rows themselves.)
    func.func private @stage_copy(%w_map: !llvm.ptr, %h_map: !llvm.ptr, %bars: i64, %pick: index,
                                  %stage: ${STAGE_MEMREF},
                                  %kt: index, %n0: index, %m0: index, %tid: index, %mlast: index) {
      %c0 = arith.constant 0 : index
      %first = arith.cmpi eq, %tid, %c0 : index
      scf.if %first {
        func.call @issue_stage(%w_map, %h_map, %bars, %pick, %stage, %kt, %n0, %m0)
            : (!llvm.ptr, !llvm.ptr, i64, index, ${STAGE_MEMREF}, index, index, index) -> ()
      }
      return
    }

    // Expect the stage's bytes on its barrier, then the two boxes at K = kt
    // BK of weight rows n0.. and hidden rows m0...
    func.func private @issue_stage(%w_map: !llvm.ptr, %h_map: !llvm.ptr, %bars: i64, %pick: index,
                                   %stage: ${STAGE_MEMREF}, %kt: index, %n0: index, %m0: index) {
      %c0 = arith.constant 0 : index
      %bk = arith.constant ${BK} : index
      %bn = arith.constant ${BN} : index
      %k = arith.muli %kt, %bk : index
      %bar = func.call @stage_barrier_address(%bars, %pick) : (i64, index) -> i64
      %w_dst = func.call @stage_address(%stage, %c0, %c0) : (${STAGE_MEMREF}, index, index) -> i64
      %h_dst = func.call @stage_address(%stage, %bn, %c0) : (${STAGE_MEMREF}, index, index) -> i64
      %k32 = arith.index_cast %k : index to i32
      %n32 = arith.index_cast %n0 : index to i32
      %m32 = arith.index_cast %m0 : index to i32
      func.call @copy_boxes(%w_map, %h_map, %bar, %w_dst, %h_dst, %k32, %n32, %m32)
          : (!llvm.ptr, !llvm.ptr, i64, i64, i64, i32, i32, i32) -> ()
      return
    }

    // After the products of tile i: the slot of tile i - WGMMA_PENDING is
    // free once every warpgroup has seen its wgmma group complete
    // (wait_group in @tile_products); the last warpgroup to get there
    // refills it.
    func.func private @stage_refill(%w_map: !llvm.ptr, %h_map: !llvm.ptr, %bars: i64, %pick: index,
                                    %stage: ${STAGE_MEMREF},
                                    %kt: index, %n0: index, %m0: index, %tid: index, %mlast: index) {
      %c0 = arith.constant 0 : index
      %wg_threads = arith.constant 128 : index
      %warpgroups = arith.constant ${WARPGROUPS} : index
      %in_wg = arith.remui %tid, %wg_threads : index
      %wg_first = arith.cmpi eq, %in_wg, %c0 : index
      scf.if %wg_first {
        %count = func.call @slot_counter_address(%bars, %pick) : (i64, index) -> i64
        %last = func.call @count_in(%count, %warpgroups) : (i64, index) -> i1
        scf.if %last {
          func.call @issue_stage(%w_map, %h_map, %bars, %pick, %stage, %kt, %n0, %m0)
              : (!llvm.ptr, !llvm.ptr, i64, index, ${STAGE_MEMREF}, index, index, index) -> ()
        }
      }
      return
    }
    // Whether this arrival is the last of `n` on the counter (which then
    // wraps back to 0 for the slot's next use). One warpgroup: always.
    func.func private @count_in(%count: i64, %n: index) -> i1 {
      %c1 = arith.constant 1 : index
      %one = arith.cmpi eq, %n, %c1 : index
      %last = scf.if %one -> (i1) {
        %t = arith.constant true
        scf.yield %t : i1
      } else {
        %n_1 = arith.subi %n, %c1 : index
        %limit = arith.index_cast %n_1 : index to i32
        %before = func.call @increment_wrapping(%count, %limit) : (i64, i32) -> i32
        %is = arith.cmpi eq, %before, %limit : i32
        scf.yield %is : i1
      }
      return %last : i1
    }

    // The engine's completion is the barrier's: nothing to commit.
    func.func private @commit_copies() {
      return
    }

    // Returns once tile i (in slot %slot) has landed: its barrier's phase
    // i / STAGES has completed. The barrier's acquire makes the bytes
    // visible to this thread.
    func.func private @wait_copies(%i: index, %ntiles: index, %bars: i64, %slot: index, %younger: index) {
      %c1 = arith.constant 1 : index
      %stages = arith.constant ${STAGES} : index
      %fill = arith.divui %i, %stages : index
      %parity_i = arith.andi %fill, %c1 : index
      %parity = arith.index_cast %parity_i : index to i32
      %bar = func.call @stage_barrier_address(%bars, %slot) : (i64, index) -> i64
      func.call @wait_barrier(%bar, %parity) : (i64, i32) -> ()
      return
    }

    // No block barrier per tile (@stage_refill frees the slots).
    func.func private @stage_barrier() {
      return
    }

    // The TMA copies never repeat a tile (REFILL_ALWAYS is off with TMA):
    // every one was waited for in the loop.
    func.func private @copies_done() {
      return
    }
    func.func private @fence_device() {
      llvm.fence syncscope("device") acq_rel
      return
    }

    func.func private @stage_barrier_address(%bars: i64, %s: index) -> i64 {
      %c8 = arith.constant 8 : index
      %off = arith.muli %s, %c8 : index
      %off64 = arith.index_cast %off : index to i64
      %a = arith.addi %bars, %off64 : i64
      return %a : i64
    }

    func.func private @slot_counter_address(%bars: i64, %s: index) -> i64 {
      %c4 = arith.constant 4 : index
      %after = arith.constant ${COUNTERS_AFTER_BARRIERS} : i64
      %off = arith.muli %s, %c4 : index
      %off64 = arith.index_cast %off : index to i64
      %base = arith.addi %bars, %after : i64
      %a = arith.addi %base, %off64 : i64
      return %a : i64
    }

    // The instructions, on byte addresses (NVVM ops have no inliner
    // interface: these callees take no memref).
    func.func private @init_barrier(%bar: i64) {
      %one = arith.constant 1 : i32
      %b = llvm.inttoptr %bar : i64 to !llvm.ptr<3>
      nvvm.mbarrier.init %b, %one : !llvm.ptr<3>, i32
      return
    }
    func.func private @clear_counter(%count: i64) {
      %zero = arith.constant 0 : i32
      %p = llvm.inttoptr %count : i64 to !llvm.ptr<3>
      llvm.store %zero, %p : i32, !llvm.ptr<3>
      return
    }
    // The counter's value before this increment (atom.inc: value + 1, or 0
    // past %limit); acquire-release, so the last warpgroup sees the others'
    // completed reads before it refills.
    func.func private @increment_wrapping(%count: i64, %limit: i32) -> i32 {
      %p = llvm.inttoptr %count : i64 to !llvm.ptr<3>
      // (NVPTX emits the atom without its ordering: the fences carry it.
      // They order the count, not the wgmma reads, which run in the async
      // proxy: those are complete before the count, as wait_group returned.)
      llvm.fence syncscope("block") release
      %before = llvm.atomicrmw uinc_wrap %p, %limit syncscope("block") acq_rel : !llvm.ptr<3>, i32
      llvm.fence syncscope("block") acquire
      return %before : i32
    }
    func.func private @fence_barrier_init() {
      nvvm.fence.mbarrier.init
      return
    }
    func.func private @copy_boxes(%w_map: !llvm.ptr, %h_map: !llvm.ptr, %bar: i64, %w_dst: i64, %h_dst: i64,
                                  %k: i32, %n0: i32, %m0: i32) {
      %bytes = arith.constant ${STAGE_BYTES} : i32
      %b = llvm.inttoptr %bar : i64 to !llvm.ptr<3>
      // A CTA's own workgroup address is its shared::cluster address.
      %w3 = llvm.inttoptr %w_dst : i64 to !llvm.ptr<3>
      %h3 = llvm.inttoptr %h_dst : i64 to !llvm.ptr<3>
      %w7 = llvm.addrspacecast %w3 : !llvm.ptr<3> to !llvm.ptr<7>
      %h7 = llvm.addrspacecast %h3 : !llvm.ptr<3> to !llvm.ptr<7>
      nvvm.mbarrier.arrive.expect_tx %b, %bytes : !llvm.ptr<3>, i32
      nvvm.cp.async.bulk.tensor.shared.cluster.global %w7, %w_map, %b, box[%k, %n0] : !llvm.ptr<7>, !llvm.ptr
      nvvm.cp.async.bulk.tensor.shared.cluster.global %h7, %h_map, %b, box[%k, %m0] : !llvm.ptr<7>, !llvm.ptr
      return
    }
    func.func private @wait_barrier(%bar: i64, %parity: i32) {
      // try_wait's suspend-time hint (ns); the op loops until the phase completes.
      %ticks = arith.constant 10000000 : i32
      %b = llvm.inttoptr %bar : i64 to !llvm.ptr<3>
      nvvm.mbarrier.try_wait.parity %b, %parity, %ticks : !llvm.ptr<3>, i32, i32
      return
    }
