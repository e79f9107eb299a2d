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
    // STAGES - 1 ahead) as soon as every warpgroup's wgmma of the tile that
    // used it has completed (@stage_refill, after the products). With one
    // warpgroup its thread 0 issues the copy; with two, each warpgroup's
    // thread 0 counts itself in on the slot's counter (byte BARRIERS + 8
    // STAGES + 4 s, an increment that wraps to 0) and the last to arrive
    // issues it.
    //
    // Clusters (CLUSTERED, CLUSTER_N blocks along grid x: neighbouring
    // weight tiles of the same hidden rows and K range): the hidden box is
    // fetched from L2 once per cluster and multicast to every block's
    // stage, which divides the hidden rows' L2 traffic by CLUSTER_N. The
    // slot counters of block rank 0 count the warpgroups of the whole
    // cluster (WARPGROUPS x CLUSTER_N); the last to free a slot issues the
    // stage for every block: its weight box to each (a one-block multicast)
    // and the hidden box to all, with each block's barrier told the bytes
    // to expect. Every block's barriers are set up before any block issues
    // (a cluster barrier), and no block leaves while a peer may still
    // address its workgroup memory (@copies_end).

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
      %clustered = arith.constant ${CLUSTERED}
      scf.if %clustered {
        func.call @cluster_barrier() : () -> ()
      } else {
        gpu.barrier
      }
      return %bars : i64
    }

    func.func private @copies_end() {
      %clustered = arith.constant ${CLUSTERED}
      scf.if %clustered {
        func.call @cluster_barrier() : () -> ()
      }
      return
    }

    // The prologue's stages: issued by thread 0 (of block rank 0 in a
    // cluster). (%mlast: the chunk copies' clamp; the tensor maps bound the
    // rows themselves.)
    func.func private @stage_copy(%w_map: !llvm.ptr, %h_map: !llvm.ptr, %bars: i64, %pick: index,
                                  %stage: ${STAGE_MEMREF},
                                  %kt: index, %n0: index, %m0: index, %tid: index, %mlast: index) {
      %c0 = arith.constant 0 : index
      %first = arith.cmpi eq, %tid, %c0 : index
      %rank = func.call @cluster_rank() : () -> index
      %rank0 = arith.cmpi eq, %rank, %c0 : index
      %issuer = arith.andi %first, %rank0 : i1
      scf.if %issuer {
        func.call @issue_stage(%w_map, %h_map, %bars, %pick, %stage, %kt, %n0, %m0)
            : (!llvm.ptr, !llvm.ptr, i64, index, ${STAGE_MEMREF}, index, index, index) -> ()
      }
      return
    }

    // Expect the stage's bytes on its barrier, then the boxes at K = kt BK:
    // weight rows n0.. and hidden rows m0.. (clustered: every block's
    // weight rows, and the hidden rows multicast to all).
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
      %m32 = arith.index_cast %m0 : index to i32
      %clustered = arith.constant ${CLUSTERED}
      scf.if %clustered {
        // Block rank r of the cluster holds weight rows n0 + (r - rank) BN.
        %rank = func.call @cluster_rank() : () -> index
        %rank_rows = arith.muli %rank, %bn : index
        %n_first = arith.subi %n0, %rank_rows : index
        %n32 = arith.index_cast %n_first : index to i32
        func.call @copy_boxes_cluster(%w_map, %h_map, %bar, %w_dst, %h_dst, %k32, %n32, %m32)
            : (!llvm.ptr, !llvm.ptr, i64, i64, i64, i32, i32, i32) -> ()
      } else {
        %n32 = arith.index_cast %n0 : index to i32
        func.call @copy_boxes(%w_map, %h_map, %bar, %w_dst, %h_dst, %k32, %n32, %m32)
            : (!llvm.ptr, !llvm.ptr, i64, i64, i64, i32, i32, i32) -> ()
      }
      return
    }

    // After the products of tile i: tile i - 1's slot is free once every
    // warpgroup has seen its wgmma group complete (wait_group 1 in
    // @tile_products); the last warpgroup to get there refills it.
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
        %clustered = arith.constant ${CLUSTERED}
        %last = scf.if %clustered -> (i1) {
          %all = arith.constant ${CLUSTER_WARPGROUPS} : i32
          %l = func.call @count_in_cluster(%count, %all) : (i64, i32) -> i1
          scf.yield %l : i1
        } else {
          %l = func.call @count_in(%count, %warpgroups) : (i64, index) -> i1
          scf.yield %l : i1
        }
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

    // The same on block rank 0's counter, for all `n` warpgroups of the
    // cluster.
    func.func private @count_in_cluster(%count: i64, %n: i32) -> i1 {
      %c1 = arith.constant 1 : i32
      %limit = arith.subi %n, %c1 : i32
      %before = func.call @increment_wrapping_rank0(%count, %limit) : (i64, i32) -> i32
      %is = arith.cmpi eq, %before, %limit : i32
      return %is : i1
    }

    // The engine's completion is the barrier's: nothing to commit.
    func.func private @commit_copies() {
      return
    }

    // Returns once tile i (in slot %slot) has landed: its barrier's phase
    // i / STAGES has completed. The barrier's acquire makes the bytes
    // visible to this thread.
    func.func private @wait_copies(%i: index, %ntiles: index, %bars: i64, %slot: index) {
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
      %after = arith.constant ${COUNTERS} : i64
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
      // (NVPTX emits the atom without its ordering: the fences carry it.)
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
    // Per block of the cluster: its barrier expects a stage, its weight box
    // lands in it alone; then the hidden box lands in every block.
    func.func private @copy_boxes_cluster(%w_map: !llvm.ptr, %h_map: !llvm.ptr, %bar: i64, %w_dst: i64, %h_dst: i64,
                                          %k: i32, %n_first: i32, %m0: i32) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %blocks = arith.constant ${CLUSTER_N} : index
      %bytes = arith.constant ${STAGE_BYTES} : i32
      %bn = arith.constant ${BN} : i32
      %one = arith.constant 1 : i16
      %all = arith.constant ${CLUSTER_MASK} : i16
      %b = llvm.inttoptr %bar : i64 to !llvm.ptr<3>
      %w3 = llvm.inttoptr %w_dst : i64 to !llvm.ptr<3>
      %h3 = llvm.inttoptr %h_dst : i64 to !llvm.ptr<3>
      %w7 = llvm.addrspacecast %w3 : !llvm.ptr<3> to !llvm.ptr<7>
      %h7 = llvm.addrspacecast %h3 : !llvm.ptr<3> to !llvm.ptr<7>
      scf.for %r = %c0 to %blocks step %c1 {
        %r32 = arith.index_cast %r : index to i32
        %r16 = arith.index_cast %r : index to i16
        %mask = arith.shli %one, %r16 : i16
        %rows = arith.muli %r32, %bn : i32
        %n = arith.addi %n_first, %rows : i32
        llvm.inline_asm has_side_effects "{ .reg .b64 remote; mapa.shared::cluster.u64 remote, $0, $1; mbarrier.arrive.expect_tx.release.cluster.shared::cluster.b64 _, [remote], $2; }", "l,r,r" %bar, %r32, %bytes : (i64, i32, i32) -> ()
        nvvm.cp.async.bulk.tensor.shared.cluster.global %w7, %w_map, %b, box[%k, %n] multicast_mask = %mask : !llvm.ptr<7>, !llvm.ptr
      }
      nvvm.cp.async.bulk.tensor.shared.cluster.global %h7, %h_map, %b, box[%k, %m0] multicast_mask = %all : !llvm.ptr<7>, !llvm.ptr
      return
    }
    // atom.inc on block rank 0's copy of a counter (the same offset there).
    func.func private @increment_wrapping_rank0(%count: i64, %limit: i32) -> i32 {
      %rank0 = arith.constant 0 : i32
      %before = llvm.inline_asm has_side_effects "{ .reg .b64 remote; mapa.shared::cluster.u64 remote, $1, $2; atom.acq_rel.cluster.shared::cluster.inc.u32 $0, [remote], $3; }", "=r,l,r,r" %count, %rank0, %limit : (i64, i32, i32) -> i32
      return %before : i32
    }
    func.func private @cluster_rank() -> index {
      %clustered = arith.constant ${CLUSTERED}
      %rank = scf.if %clustered -> (index) {
        %r = nvvm.read.ptx.sreg.cluster.ctarank : i32
        %ri = arith.index_cast %r : i32 to index
        scf.yield %ri : index
      } else {
        %z = arith.constant 0 : index
        scf.yield %z : index
      }
      return %rank : index
    }
    func.func private @cluster_barrier() {
      nvvm.cluster.arrive
      nvvm.cluster.wait
      return
    }
    func.func private @wait_barrier(%bar: i64, %parity: i32) {
      // try_wait's suspend-time hint (ns); the op loops until the phase completes.
      %ticks = arith.constant 10000000 : i32
      %b = llvm.inttoptr %bar : i64 to !llvm.ptr<3>
      nvvm.mbarrier.try_wait.parity %b, %parity, %ticks : !llvm.ptr<3>, i32, i32
      return
    }
