// kind: kernel
// param T: the contract's element type: hidden, attn and the gated value (bf16 | f16 | f32)
// param SYMBOL: the kernel's symbol
// param WAVE: lanes a wave (64 on gfx9, 32 on sm_90)
// param BLOCK: threads a workgroup
// param WARPS_N: warps along the tile's weight rows
// param RT: weight tiles a wave (TILE_W rows each)
// param MT: hidden tiles a wave (16 rows each)
// param TILES: tiles a wave multiplies: RT x MT
// param TILE_W: weight rows of one matrix instruction's tile (8 on sm_90, 16 on gfx950)
// param BN: weight rows (output columns) of a workgroup tile
// param BM: hidden rows of a workgroup tile
// param ROWS: rows of a stage: BN weight rows, then BM hidden rows
// param BK: K elements of a stage
// param KSUB: 64-element parts of a stage: BK / 64
// param REFILL_ALWAYS: whether every tile refills a slot, past the end with the last tile again (no branch before the reads)
// param DRAIN: whether the last ring is peeled: no copy past the end, nothing in flight when the K loop ends
// param DRAIN_S0_KNOWN: whether every split has as many tiles, so the first ring's idle positions are a constant
// param DRAIN_S0: the first ring's idle positions, where DRAIN_S0_KNOWN
// param STAGES: stages in the ring
// param STAGES_AHEAD: tiles in flight ahead of the one in use (STAGES - 1; wgmma with cp.async STAGES - 2; TMA STAGES - WGMMA_PENDING)
// param SPLIT_ROUND: splits summed together in one round of the reduction
// param SPLIT_ROUNDS_END: SPLITS rounded up to whole rounds
// param KT: K tiles: K / BK
// param SPLITS: workgroups that split the K range of a tile (grid z)
// param SPLIT_K: whether SPLITS > 1
// param TILES_N: column tiles of the grid (grid x)
// param WS_SIZE: floats of the K split's workspace (1 without a split: folded away)
// param WS_TILES: arrival counters of the K split (1 without a split)
// param WS_INIT: the workspace's initial value (zeroed for the poll)
// param SPLIT_POLL: 1 where the splits meet by poll, 0 by arrival counter
// param LDO: row stride of out (elements)
// param H_SIZE: elements of the hidden memref
// param W_SIZE: elements of the weight memref
// param A_SIZE: elements of the attn memref
// param O_SIZE: elements of the out memref
// param ACC: the products' accumulator type: TILES x 4 floats, or wgmma's array of accumulators
// param EPI_STAGED: 1 where the epilogue goes through a tile of workgroup memory in row pieces
// param EPI_ATTN_EARLY: 1 where the staged epilogue's attn is loaded before the K loop
// param EPI_LD: floats between rows of the staged epilogue's tile
// param EPI_PART_FLOATS: floats of one part: EPI_PART_ROWS x EPI_LD
// param EPI_PIECES_PER_THREAD: pieces a thread finishes
// param PERSISTENT: whether the grid is persistent (workgroups loop over the tiles)
// param PERSISTENT_WORKGROUPS: workgroups of a persistent grid
// param DIES: dies the tiles are spread over (their order)
// param KERNEL_ATTRS: the target's kernel attributes (sm_90: blocks per SM, which bounds registers a thread; TMA's tensor maps)
// param T_OUT: the element type of out (T, or i8 for an fp8 out)
// param COPY_ARGS: the copies' sources among the kernel arguments (TMA's tensor maps; empty otherwise)
// param COPY_SOURCES: fragment: what the stage copies read, as %w_src and %h_src
// param SLOT_RING: slots of the K loop's ring: STAGES where a slot is a constant, 1 otherwise
// param PICK_STAGE: fragment: the stage of slot %pick, as %stage
// param COPY_SRC: the type of what a copy reads (a tensor map pointer, or a global memref)
// param STAGE_MEMREF: the memref type of one stage
// param REFILL_EARLY: whether a slot is refilled before the products (after a barrier), not after them
// param PICK_EPILOGUE_PART: fragment: the staged tile's part %part, as %tile
// param EPILOGUE: the snippets the kernel calls, filled in
// mma_tiled: the matrix-core template in the usual GEMM shape (auto: sm_90
// above M = 16, with wgmma products above M = 32; gfx950 when asked,
// docs/templates.md). A block owns a tile of BN weight rows (output columns) x BM hidden rows
// and 1 / SPLITS of the K range (grid z splits K). Its K range streams
// through workgroup memory in tiles of BK = 64 or 128 elements, STAGES of them in
// flight: the per-target snippet copies 16-byte chunks asynchronously
// (cp.async on sm_90, global_load_lds on gfx950), so the bytes in flight per SM are bounded by
// workgroup memory, not by registers. Each hidden chunk fetched from L2
// serves BN weight rows and each weight chunk BM hidden rows: the L2 traffic
// that bounds the register-streamed mma template (hidden re-read by every
// 16-row column group) falls by BN / 16.
//
// Workgroup memory holds, per stage, BN weight rows then BM hidden rows of
// BK elements (CHUNKS = BK / 8 chunks of 16 bytes); chunk c of row r sits at
// chunk slot c ^ (r mod 8), so the 8 lanes of a quarter warp reading one
// 16-byte chunk each of rows r and r + 1 hit 8 different 16-byte bank groups
// (no bank conflicts). The products take a stage 64 elements (KSUB parts) at
// a time.
//
// The copies come from a snippet too: every thread copies 16-byte chunks
// (stage_copy_chunks.mlir with async_copy_sm90 / async_copy_gfx950), or on
// sm_90 with wgmma one thread hands each stage to the tensor memory
// accelerator, which counts the bytes landed on the stage's mbarrier
// (async_copy_sm90_tma.mlir; @copies_begin, @stage_copy, @commit_copies,
// @wait_copies, @stage_barrier).
//
// The products of a stage and the loop's accumulator come from a snippet
// (@tile_products, @acc_begin / @acc_end, @stage_landed):
// tile_products_fragments.mlir reads per-lane fragments from the same
// lane-to-row/K maps as the mma template into mma.sync / MFMA;
// tile_products_wgmma.mlir has the tensor cores read the stage itself
// (sm_90a warpgroup MMA). Either way the accumulator ends as TILES x 4
// floats in the mma.sync / MFMA C layout (@lane_c_h, @lane_c_w), which the
// K-split meeting and the epilogue below take.
//
// Warps: WARPS_N x WARPS_M; warp (wn, wm) owns RT weight tiles (TILE_W rows
// each) and MT hidden tiles (16 rows each) of the block tile (wgmma: WARPS_N
// = 1, a warpgroup of 4 warps per 64 hidden rows).
//
// With SPLITS > 1 the blocks of one output tile meet in global memory: each
// writes its fp32 partial tile to a module-level workspace, then counts itself
// in; the last to arrive sums the SPLITS partials in split order (the result
// does not depend on arrival order), applies the epilogue and resets the
// counter for the next launch. Launches that overlap must not share the
// module: the runtime loads one instance per stream (docs/runtime.md).
// With SPLIT_POLL the blocks meet by poll instead (split_poll_tile.mlir):
// every split but the last stores its partials, the last polls them.
module attributes {gpu.container_module} {
  gpu.module @gatejit {
    memref.global "private" @gatejit_partials : memref<${WS_SIZE}xf32, #gpu.address_space<global>> = ${WS_INIT} {alignment = 16}
    memref.global "private" @gatejit_arrivals : memref<${WS_TILES}xi32, #gpu.address_space<global>> = dense<0>

    gpu.func @${SYMBOL}(%hidden: memref<${H_SIZE}x${T}, #gpu.address_space<global>>,
                        %weight: memref<${W_SIZE}x${T}, #gpu.address_space<global>>,
                        %attn: memref<${A_SIZE}x${T}, #gpu.address_space<global>>,
                        %out: memref<${O_SIZE}x${T_OUT}, #gpu.address_space<global>>,
                        %m_actual: i64, %n_actual: i64, %k_actual: i64,
                        %ldh_actual: i64, %ldw_actual: i64, %lda_actual: i64, %ldo_actual: i64${COPY_ARGS})
        kernel attributes {known_block_size = array<i32: ${BLOCK}, 1, 1>${KERNEL_ATTRS}} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %true = arith.constant true
      %wave = arith.constant ${WAVE} : index
      %warps_n = arith.constant ${WARPS_N} : index
      %bn = arith.constant ${BN} : index
      %bm = arith.constant ${BM} : index
      %kt_all = arith.constant ${KT} : index
      %splits = arith.constant ${SPLITS} : index
      %stages = arith.constant ${STAGES} : index
      %ahead = arith.constant ${STAGES_AHEAD} : index
      %m_i = arith.index_cast %m_actual : i64 to index
      %mlast = arith.subi %m_i, %c1 : index

      %tid = gpu.thread_id x
      %lane = arith.remui %tid, %wave : index
      %warp = arith.divui %tid, %wave : index
      %wn = arith.remui %warp, %warps_n : index
      %wm = arith.divui %warp, %warps_n : index
      %bx_wg = gpu.block_id x
      %by_wg = gpu.block_id y
      %bz = gpu.block_id z
      // The output tiles this workgroup finishes (tile_order.mlir): its own
      // once, or with PERSISTENT a loop over tiles in steps of the grid.
      // Between two tiles every warp is done with the workgroup memory (the
      // staged epilogue's parts lie over the stages the next tile refills):
      // a barrier at the end of each.
      // (Written out here: a call left directly in the kernel's body would
      // not be inlined, and without PERSISTENT these fold to one pass.)
      %persistent = arith.constant ${PERSISTENT}
      %tiles_n_c = arith.constant ${TILES_N} : index
      %persistent_wgs = arith.constant ${PERSISTENT_WORKGROUPS} : index
      %dies = arith.constant ${DIES} : index
      %bm_m1 = arith.subi %bm, %c1 : index
      %m_up = arith.addi %m_i, %bm_m1 : index
      %tiles_m_run = arith.divui %m_up, %bm : index
      %tiles_all = arith.muli %tiles_m_run, %tiles_n_c : index
      %wg_row = arith.muli %by_wg, %tiles_n_c : index
      %wg = arith.addi %wg_row, %bx_wg : index
      %grid_p = arith.minui %tiles_all, %persistent_wgs : index
      // Die bands: workgroup wg runs on die wg mod DIES; it starts at
      // (wg mod DIES) x (grid / DIES) + wg / DIES where the grid is whole
      // multiples of DIES (else at wg); one past the grid (a launch of a
      // workgroup a tile) starts past the end.
      %die = arith.remui %wg, %dies : index
      %per_die = arith.divui %grid_p, %dies : index
      %in_die = arith.divui %wg, %dies : index
      %band = arith.muli %die, %per_die : index
      %banded = arith.addi %band, %in_die : index
      %grid_rem = arith.remui %grid_p, %dies : index
      %whole = arith.cmpi eq, %grid_rem, %c0 : index
      %first_b = arith.select %whole, %banded, %wg : index
      %extra = arith.cmpi uge, %wg, %grid_p : index
      %first_p = arith.select %extra, %tiles_all, %first_b : index
      %tile_first = arith.select %persistent, %first_p, %c0 : index
      %tile_end = arith.select %persistent, %tiles_all, %c1 : index
      %tile_step = arith.select %persistent, %grid_p, %c1 : index
      scf.for %tile_id = %tile_first to %tile_end step %tile_step {
      %bx, %by = func.call @tile_at(%tile_id, %bx_wg, %by_wg, %tiles_m_run) : (index, index, index, index) -> (index, index)
      %n0 = arith.muli %bx, %bn : index
      %m0 = arith.muli %by, %bm : index
      // This split's K tiles: bz, bz + SPLITS, ... (interleaved, so the
      // blocks of one output tile read neighbouring 128-byte pieces of the
      // same weight rows at about the same time: DRAM page locality).
      %kt_left = arith.subi %kt_all, %bz : index
      %splits_m1 = arith.subi %splits, %c1 : index
      %kt_left_up = arith.addi %kt_left, %splits_m1 : index
      %ntiles = arith.divui %kt_left_up, %splits : index

      // The staged epilogue (below) for this launch: the planner's shape
      // (EPI_STAGED: N and both row strides whole 8-element pieces) and, at
      // run time, attn and out on 16 bytes (the contract's align speaks for
      // hidden and weight only). Its attn pieces are loaded now where the
      // registers allow (EPI_ATTN_EARLY): their latency hides behind the K
      // loop instead of opening the epilogue. Every piece is read
      // before any out piece is stored at the end, out may be attn.
      %staged = func.call @staged_epilogue_applies(%attn, %out)
          : (memref<${A_SIZE}x${T}, #gpu.address_space<global>>, memref<${O_SIZE}x${T_OUT}, #gpu.address_space<global>>) -> i1
      %early_c = arith.constant ${EPI_ATTN_EARLY} : i1
      %attn_early_now = arith.andi %staged, %early_c : i1
      %pieces_none = arith.constant dense<0.0> : vector<${EPI_PIECES_PER_THREAD}x8x${T}>
      %attn_early = scf.if %attn_early_now -> (vector<${EPI_PIECES_PER_THREAD}x8x${T}>) {
        %v = func.call @load_attn_pieces(%attn, %tid, %m0, %n0, %m_i)
            : (memref<${A_SIZE}x${T}, #gpu.address_space<global>>, index, index, index, index) -> vector<${EPI_PIECES_PER_THREAD}x8x${T}>
        scf.yield %v : vector<${EPI_PIECES_PER_THREAD}x8x${T}>
      } else {
        scf.yield %pieces_none : vector<${EPI_PIECES_PER_THREAD}x8x${T}>
      }

      // What @stage_copy copies from (%w_src, %h_src of type COPY_SRC): the
      // weight and hidden memrefs (COPY_SOURCES, where every thread copies
      // chunks), or the kernel's tensor map arguments (COPY_ARGS, TMA).
${COPY_SOURCES}
      // Workgroup memory: the stages, STAGES x ROWS x BK elements, and after
      // the K loop the K-split flag at byte 0 of the dynamic workgroup memory
      // (LaunchGeometry::shared_bytes). Where the stages live is the
      // target's (PICK_STAGE below, which turns a slot %pick into its stage
      // %stage): sm_90 keeps them in the dynamic memory (the flag reuses
      // their bytes: every copy has landed and every warp has left the loop
      // by then); gfx950 gives each stage its own workgroup global, so LLVM
      // can tell which LDS-DMA loads a read waits for.
      %smem = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %tiles = memref.view %smem[%c0][] : memref<?xi8, #gpu.address_space<workgroup>>
          to memref<${STAGES}x${ROWS}x${BK}x${T}, #gpu.address_space<workgroup>>
      // The copies' own state (TMA: a barrier per stage that counts the
      // bytes landed, after the stages), set up before the first copy.
      %smem_ptr = memref.extract_aligned_pointer_as_index %smem : memref<?xi8, #gpu.address_space<workgroup>> -> index
      %smem_addr = arith.index_cast %smem_ptr : index to i64
      %bars = func.call @copies_begin(%smem_addr, %tid) : (i64, index) -> i64

      // Prologue: the first STAGES_AHEAD tiles in flight, one copy group each
      // (on sm_90 empty groups past the range keep the group count uniform;
      // gfx950 counts loads and waits for all of them in the tail).
      // (REFILL_ALWAYS: every prologue copy is issued, past the last tile
      // with the last tile again, so each tile's wait finds the same count
      // of copies in flight behind it.)
      // DRAIN instead: the K loop runs in slot positions v = i + S0,
      // S0 = (-ntiles) mod STAGES, so that the last tile takes the last slot
      // of a whole ring: that ring is peeled with its refills and waits
      // known (no copy past the end, nothing in flight after the last
      // tile). The first S0 positions are idle: the prologue copies nothing
      // for them, and in the first ring they only refill (no wait, no
      // barrier, no products), so the first STAGES_AHEAD tiles still leave
      // at once.
      %always = arith.constant ${REFILL_ALWAYS}
      %drain = arith.constant ${DRAIN}
      %ntiles_last = arith.subi %ntiles, %c1 : index
      %ring = arith.constant ${SLOT_RING} : index
      %ring_rem = arith.remui %ntiles, %ring : index
      %s0_up = arith.subi %ring, %ring_rem : index
      %s0_ring = arith.remui %s0_up, %ring : index
      // (A constant where every split has as many tiles: then the first
      // ring's idle checks fold away.)
      %s0_known = arith.constant ${DRAIN_S0_KNOWN}
      %s0_fixed = arith.constant ${DRAIN_S0} : index
      %s0_drain = arith.select %s0_known, %s0_fixed, %s0_ring : index
      %s0 = arith.select %drain, %s0_drain, %c0 : index
      scf.for %p0 = %c0 to %ahead step %c1 {
        // (Always true then, but not folded here: a call left directly in
        // the kernel's body would not be inlined.)
        %p_last = arith.minui %p0, %ntiles_last : index
        %p_always = arith.select %always, %p_last, %p0 : index
        %p_shift = arith.subi %p0, %s0 : index
        %p = arith.select %drain, %p_shift, %p_always : index
        %p_in = arith.cmpi ult, %p, %ntiles : index
        %p_started = arith.cmpi uge, %p0, %s0 : index
        %have = arith.select %drain, %p_started, %p_in : i1
        scf.if %have {
          %p_s = arith.muli %p, %splits : index
          %kt = arith.addi %bz, %p_s : index
          %pick = arith.addi %p0, %c0 : index
${PICK_STAGE}
          func.call @stage_copy(%w_src, %h_src, %bars, %pick, %stage, %kt, %n0, %m0, %tid, %mlast)
              : (${COPY_SRC}, ${COPY_SRC}, i64, index, ${STAGE_MEMREF}, index, index, index, index, index) -> ()
        }
        func.call @commit_copies() : () -> ()
      } {gatejit.unroll}

      // The products' accumulator (ACC: the TILES x 4 vector, or the
      // struct of an asynchronous wgmma kept in its registers across tiles).
      %acc0 = func.call @acc_begin() : () -> ${ACC}
      // The K tiles, SLOT_RING at a time: 1 (the slot of tile i is i mod
      // STAGES), or STAGES where each stage is its own object: then the
      // inner loop is unrolled and every slot is a constant.
      %by_ring = arith.cmpi ugt, %ring, %c1 : index
      // Whole rings first, every tile of them live: no branch joins inside
      // the loop (on gfx950 a join before a slot's reads made the backend
      // wait for every LDS-DMA load in flight, s_waitcnt vmcnt(0));
      // then the last partial ring, each tile under its check, once. (A
      // SLOT_RING of 1 leaves no partial ring: that loop folds away.)
      // DRAIN: the first ring (its first S0 positions idle), the whole
      // rings, and the last ring, whose refills and
      // waits are constants (the planner asks for it where every split has
      // more than STAGES tiles: two rings at least).
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %ntiles_whole = arith.subi %ntiles, %ring_rem : index
      %v_end = arith.addi %ntiles, %s0 : index
      %v_last = arith.subi %v_end, %ring : index
      %stages_m1 = arith.subi %stages, %c1 : index
      %ahead_m1 = arith.subi %ahead, %c1 : index
      %acc_k = scf.for %phase = %c0 to %c3 step %c1 iter_args(%ap = %acc0) -> (${ACC}) {
      %first_ring = arith.cmpi eq, %phase, %c0 : index
      %tail = arith.cmpi eq, %phase, %c2 : index
      // Without DRAIN: nothing, the whole rings, the partial ring (checked).
      %lo_whole = arith.select %tail, %ntiles_whole, %c0 : index
      %hi_whole = arith.select %tail, %ntiles, %ntiles_whole : index
      %lo_plain = arith.select %first_ring, %c0, %lo_whole : index
      %hi_plain = arith.select %first_ring, %c0, %hi_whole : index
      // With DRAIN: [0, ring), [ring, v_last), [v_last, v_end).
      %lo_mid = arith.select %tail, %v_last, %ring : index
      %hi_mid = arith.select %tail, %v_end, %v_last : index
      %lo_drain = arith.select %first_ring, %c0, %lo_mid : index
      %hi_drain = arith.select %first_ring, %ring, %hi_mid : index
      %lo = arith.select %drain, %lo_drain, %lo_plain : index
      %hi = arith.select %drain, %hi_drain, %hi_plain : index
      %tail_checked = arith.andi %tail, %by_ring : i1
      %not_drain = arith.xori %drain, %true : i1
      %checked = arith.andi %tail_checked, %not_drain : i1
      %unchecked = arith.xori %checked, %true : i1
      %last_ring = arith.andi %tail, %drain : i1
      %starting = arith.andi %first_ring, %drain : i1
      %acc_p = scf.for %v0 = %lo to %hi step %ring iter_args(%a0 = %ap) -> (${ACC}) {
        %a_ring = scf.for %r = %c0 to %ring step %c1 iter_args(%a = %a0) -> (${ACC}) {
          %vpos = arith.addi %v0, %r : index
          %i = arith.subi %vpos, %s0 : index
          %i_slot = arith.remui %i, %stages : index
          %slot = arith.select %by_ring, %r, %i_slot : index
          %in_range = arith.cmpi ult, %i, %ntiles : index
          %live = arith.ori %in_range, %unchecked : i1
          // DRAIN: the first S0 positions of the first ring only refill.
          %before = arith.cmpi ult, %vpos, %s0 : index
          %idle = arith.andi %starting, %before : i1
          %computes = arith.xori %idle, %true : i1
          // Tiles issued after this one: STAGES_AHEAD - 1, fewer in the
          // last STAGES_AHEAD - 1 tiles (DRAIN: constants of the last ring;
          // REFILL_ALWAYS: the repeats keep the count).
          // (Without either: all of STAGES_AHEAD - 1, or none in the last
          // STAGES_AHEAD - 1 tiles, a branch a tile: the refill=0 knob.)
          %left = arith.subi %ntiles_last, %i : index
          %short = arith.cmpi ult, %left, %ahead_m1 : index
          %younger_end = arith.select %short, %c0, %ahead_m1 : index
          %younger_plain = arith.select %always, %ahead_m1, %younger_end : index
          %ring_left = arith.subi %stages_m1, %r : index
          %younger_last = arith.minui %ahead_m1, %ring_left : index
          %younger_drain = arith.select %last_ring, %younger_last, %ahead_m1 : index
          %younger = arith.select %drain, %younger_drain, %younger_plain : index
          %a_tile = scf.if %live -> (${ACC}) {
            // Tile i has landed for this thread's copies; after the barrier for
            // every thread's, and every warp is done with the slot the next copy
            // refills: tile i - 1's (fragments), or tile i - 2's (wgmma, whose
            // group of tile i - 1 may still run). (i and ntiles: a target that
            // counts loads, not groups, must wait for all of them in the last
            // STAGES_PENDING tiles.)
            // TMA (REFILL_EARLY false) has no such barrier: each thread waits
            // for tile i's own mbarrier, and the slot of tile i - WGMMA_PENDING
            // is refilled after the products, once the warpgroups' wgmma of
            // that tile are complete (@stage_refill).
            // (DRAIN: an idle position waits for nothing and reads nothing;
            // the slot it refills was never used.)
            scf.if %computes {
              func.call @wait_copies(%i, %ntiles, %bars, %slot, %younger) : (index, index, i64, index, index) -> ()
              func.call @stage_landed() : () -> ()
              func.call @stage_barrier() : () -> ()
            }
            %next = arith.addi %i, %ahead : index
            %have = arith.cmpi ult, %next, %ntiles : index
            // REFILL_ALWAYS: past the last tile the refill copies this
            // block's last tile again into the slot just consumed (never read
            // again), so no branch joins before the next reads: on gfx950 the
            // join made the backend wait for every LDS-DMA load in flight
            // (s_waitcnt vmcnt(0)) before each tile's reads.
            %next_last = arith.minui %next, %ntiles_last : index
            %next_in = arith.select %always, %next_last, %next : index
            %next_s = arith.muli %next_in, %splits : index
            %kt_next = arith.addi %bz, %next_s : index
            %slot_ahead = arith.addi %slot, %ahead : index
            %pick_next = arith.remui %slot_ahead, %stages : index
            %early = arith.constant ${REFILL_EARLY}
            %refill_plain = arith.ori %have, %always : i1
            // DRAIN: every position refills but those of the last ring whose
            // next tile is past the end.
            %in_ring = arith.cmpi ult, %slot_ahead, %stages : index
            %not_last = arith.xori %last_ring, %true : i1
            %refill_drain = arith.ori %in_ring, %not_last : i1
            %refill = arith.select %drain, %refill_drain, %refill_plain : i1
            %have_early = arith.andi %refill, %early : i1
            scf.if %have_early {
              %pick = arith.addi %pick_next, %c0 : index
${PICK_STAGE}
              func.call @stage_copy(%w_src, %h_src, %bars, %pick, %stage, %kt_next, %n0, %m0, %tid, %mlast)
                  : (${COPY_SRC}, ${COPY_SRC}, i64, index, ${STAGE_MEMREF}, index, index, index, index, index) -> ()
            }
            func.call @commit_copies() : () -> ()
            // (A region of its own: the refill below picks its stage too.)
            %a2 = scf.if %computes -> ${ACC} {
              %pick = arith.addi %slot, %c0 : index
${PICK_STAGE}
              %ksub = arith.constant ${KSUB} : index
              %a_sub = scf.for %sub = %c0 to %ksub step %c1 iter_args(%as = %a) -> (${ACC}) {
                %as2 = func.call @tile_products(%stage, %sub, %wn, %wm, %lane, %as)
                    : (${STAGE_MEMREF}, index, index, index, index, ${ACC}) -> ${ACC}
                scf.yield %as2 : ${ACC}
              } {gatejit.unroll}
              scf.yield %a_sub : ${ACC}
            } else {
              scf.yield %a : ${ACC}
            }
            %late = arith.xori %early, %true : i1
            %have_late = arith.andi %refill, %late : i1
            scf.if %have_late {
              %pick = arith.addi %pick_next, %c0 : index
${PICK_STAGE}
              func.call @stage_refill(%w_src, %h_src, %bars, %pick, %stage, %kt_next, %n0, %m0, %tid, %mlast)
                  : (${COPY_SRC}, ${COPY_SRC}, i64, index, ${STAGE_MEMREF}, index, index, index, index, index) -> ()
            }
            scf.yield %a2 : ${ACC}
          } else {
            scf.yield %a : ${ACC}
          }
          scf.yield %a_tile : ${ACC}
        } {gatejit.unroll}
        scf.yield %a_ring : ${ACC}
      }
      scf.yield %acc_p : ${ACC}
      } {gatejit.unroll}
      %acc = func.call @acc_end(%acc_k) : (${ACC}) -> vector<${TILES}x4xf32>
      // REFILL_ALWAYS: the last STAGES_AHEAD copies repeated the last tile
      // and may still be landing; they finish before the workgroup memory
      // is reused (the K-split flag, the staged epilogue) or released.
      // (DRAIN: the last tile's wait left none in flight.)
      func.call @copies_done() : () -> ()

      // K split across blocks: the last block of a tile to arrive finishes
      // it, or with SPLIT_POLL the last split polls the others' partials
      // (split_poll_tile.mlir).
      %split_k = arith.constant ${SPLIT_K}
      %poll = arith.constant ${SPLIT_POLL} : i1
      %done:2 = scf.if %split_k -> (vector<${TILES}x4xf32>, i1) {
        // (Globals are taken here: a callee that takes one is not inlined.)
        %ws = memref.get_global @gatejit_partials : memref<${WS_SIZE}xf32, #gpu.address_space<global>>
        %met:2 = scf.if %poll -> (vector<${TILES}x4xf32>, i1) {
          %tiles_n_p = arith.constant ${TILES_N} : index
          %row_tiles_p = arith.muli %by, %tiles_n_p : index
          %tile_p = arith.addi %row_tiles_p, %bx : index
          %sum_p, %last_p = func.call @poll_combine(%acc, %ws, %tile_p, %bz, %tid)
              : (vector<${TILES}x4xf32>, memref<${WS_SIZE}xf32, #gpu.address_space<global>>, index, index, index)
              -> (vector<${TILES}x4xf32>, i1)
          scf.yield %sum_p, %last_p : vector<${TILES}x4xf32>, i1
        } else {
          %arrivals = memref.get_global @gatejit_arrivals : memref<${WS_TILES}xi32, #gpu.address_space<global>>
          %flag = memref.view %smem[%c0][] : memref<?xi8, #gpu.address_space<workgroup>>
              to memref<1xi32, #gpu.address_space<workgroup>>
          %sum, %last = func.call @combine_splits(%acc, %ws, %arrivals, %flag, %bx, %by, %bz, %tid)
              : (vector<${TILES}x4xf32>, memref<${WS_SIZE}xf32, #gpu.address_space<global>>,
                 memref<${WS_TILES}xi32, #gpu.address_space<global>>, memref<1xi32, #gpu.address_space<workgroup>>,
                 index, index, index, index) -> (vector<${TILES}x4xf32>, i1)
          scf.yield %sum, %last : vector<${TILES}x4xf32>, i1
        }
        scf.yield %met#0, %met#1 : vector<${TILES}x4xf32>, i1
      } else {
        scf.yield %acc, %true : vector<${TILES}x4xf32>, i1
      }

      // Epilogue: every accumulator element is owned by one lane
      // (tile_output_places.mlir says where it goes).
      scf.if %done#1 {
        %tiles_c = arith.constant ${TILES} : index
        %mt = arith.constant ${MT} : index
        %rt = arith.constant ${RT} : index
        %tile_w = arith.constant ${TILE_W} : index
        %c16 = arith.constant 16 : index
        %ldo_c = arith.constant ${LDO} : index
        %wn_rows = arith.muli %wn, %rt : index
        %wn_base = arith.muli %wn_rows, %tile_w : index
        %w_base = arith.addi %n0, %wn_base : index
        %wm_tiles = arith.muli %wm, %mt : index
        %wm_base = arith.muli %wm_tiles, %c16 : index
        %h_base = arith.addi %m0, %wm_base : index
        scf.if %staged {
          // Staged through workgroup memory (the stages are free once every
          // warp is past its products): each lane writes its f32 products
          // into a BM x BN tile (rows EPI_LD floats apart: planner), then
          // each thread takes 8-element row pieces: 16-byte attn loads and
          // out stores, a warp covering whole rows, where the accumulator
          // layout gave 2-byte accesses spread over 8 rows (that
          // epilogue took 17 of M = 2048's 77 us). The tile is cut into
          // EPI_PARTS parts of EPI_PART_ROWS rows, part i over stage slot i
          // (PICK_EPILOGUE_PART): gfx950's stages are separate globals, and
          // a tile that needs no memory of its own keeps 3 prefill
          // workgroups a CU.
          %epi_ld = arith.constant ${EPI_LD} : index
          gpu.barrier
          scf.for %e = %c0 to %tiles_c step %c1 {
            scf.for %q = %c0 to %c4 step %c1 {
              %row_l, %col_l = func.call @element_in_tile(%e, %q, %lane, %wn, %wm)
                  : (index, index, index, index, index) -> (index, index)
              %part, %row_p = func.call @tile_part_of(%row_l) : (index) -> (index, index)
${PICK_EPILOGUE_PART}
              %dot = vector.extract %done#0[%e, %q] : f32 from vector<${TILES}x4xf32>
              %t_row = arith.muli %row_p, %epi_ld : index
              %t_idx = arith.addi %t_row, %col_l : index
              memref.store %dot, %tile[%t_idx] : memref<${EPI_PART_FLOATS}xf32, #gpu.address_space<workgroup>>
            } {gatejit.unroll}
          } {gatejit.unroll}
          gpu.barrier
          // Piece p of this thread: tile piece tid + p BLOCK (@epilogue_piece).
          %per_thread = arith.constant ${EPI_PIECES_PER_THREAD} : index
          %c8 = arith.constant 8 : index
          %o_none = arith.constant dense<0.0> : vector<8x${T}>
          %attn_p = scf.if %attn_early_now -> (vector<${EPI_PIECES_PER_THREAD}x8x${T}>) {
            scf.yield %attn_early : vector<${EPI_PIECES_PER_THREAD}x8x${T}>
          } else {
            %v = func.call @load_attn_pieces(%attn, %tid, %m0, %n0, %m_i)
                : (memref<${A_SIZE}x${T}, #gpu.address_space<global>>, index, index, index, index) -> vector<${EPI_PIECES_PER_THREAD}x8x${T}>
            scf.yield %v : vector<${EPI_PIECES_PER_THREAD}x8x${T}>
          }
          scf.for %p = %c0 to %per_thread step %c1 {
            %row, %col, %row_l, %col_l, %in = func.call @epilogue_piece(%p, %tid, %m0, %n0, %m_i)
                : (index, index, index, index, index) -> (index, index, index, index, i1)
            scf.if %in {
              %part, %row_p = func.call @tile_part_of(%row_l) : (index) -> (index, index)
${PICK_EPILOGUE_PART}
              %dots = func.call @load_tile_piece(%tile, %row_p, %col_l, %lane)
                  : (memref<${EPI_PART_FLOATS}xf32, #gpu.address_space<workgroup>>, index, index, index) -> vector<8xf32>
              %av = vector.extract %attn_p[%p] : vector<8x${T}> from vector<${EPI_PIECES_PER_THREAD}x8x${T}>
              %ov = scf.for %j = %c0 to %c8 step %c1 iter_args(%vo = %o_none) -> (vector<8x${T}>) {
                %d = vector.extract %dots[%j] : f32 from vector<8xf32>
                %a = vector.extract %av[%j] : ${T} from vector<8x${T}>
                %o = func.call @gate_epilogue(%d, %a) : (f32, ${T}) -> ${T}
                %vo2 = vector.insert %o, %vo[%j] : ${T} into vector<8x${T}>
                scf.yield %vo2 : vector<8x${T}>
              } {gatejit.unroll}
              %o_row = arith.muli %row, %ldo_c : index
              %o_idx = arith.addi %o_row, %col : index
              vector.store %ov, %out[%o_idx] {alignment = 16} : memref<${O_SIZE}x${T_OUT}, #gpu.address_space<global>>, vector<8x${T}>
            }
          } {gatejit.unroll}
        } else {
          // Every element's attn first, then every output. `out` may be
          // `attn` itself (in place), so no load may move past an earlier
          // store: element by element, each would wait for its own round
          // trip (measured: that chain was most of a block's epilogue).
          // Each element is read and written by its own lane only, so
          // reading all before writing any is the same result in place.
          // An element outside the output loads attn[0] (M, N >= 1) and
          // drops it: no branch per load, so gfx9 issues them together
          // and waits once (a branch each made 16 round trips).
          %a_none = arith.constant dense<0.0> : vector<${TILES}x4x${T}>
          %a_zero = arith.constant 0.0 : ${T}
          %attn_v = scf.for %e = %c0 to %tiles_c step %c1 iter_args(%va = %a_none) -> (vector<${TILES}x4x${T}>) {
            %va_e = scf.for %q = %c0 to %c4 step %c1 iter_args(%vq = %va) -> (vector<${TILES}x4x${T}>) {
              %a_idx, %o_idx, %in = func.call @epilogue_element(%e, %q, %lane, %h_base, %w_base, %m_i)
                  : (index, index, index, index, index, index) -> (index, index, i1)
              %a_safe = arith.select %in, %a_idx, %c0 : index
              %x = memref.load %attn[%a_safe] : memref<${A_SIZE}x${T}, #gpu.address_space<global>>
              %av = arith.select %in, %x, %a_zero : ${T}
              %vq2 = vector.insert %av, %vq[%e, %q] : ${T} into vector<${TILES}x4x${T}>
              scf.yield %vq2 : vector<${TILES}x4x${T}>
            } {gatejit.unroll}
            scf.yield %va_e : vector<${TILES}x4x${T}>
          } {gatejit.unroll}
          // (Marked only beside a staged path: without one, EPI_STAGED 0,
          // this is the epilogue every launch runs, and the model charges it.)
          %staged_shape = arith.constant ${EPI_STAGED} : i1
          scf.if %staged_shape {
            func.call @element_wise_fallback() : () -> ()
          }
          scf.for %e = %c0 to %tiles_c step %c1 {
            scf.for %q = %c0 to %c4 step %c1 {
              %a_idx, %o_idx, %in = func.call @epilogue_element(%e, %q, %lane, %h_base, %w_base, %m_i)
                  : (index, index, index, index, index, index) -> (index, index, i1)
              scf.if %in {
                %dot = vector.extract %done#0[%e, %q] : f32 from vector<${TILES}x4xf32>
                %av = vector.extract %attn_v[%e, %q] : ${T} from vector<${TILES}x4x${T}>
                %o = func.call @gate_epilogue(%dot, %av) : (f32, ${T}) -> ${T}
                memref.store %o, %out[%o_idx] : memref<${O_SIZE}x${T_OUT}, #gpu.address_space<global>>
              }
            } {gatejit.unroll}
          } {gatejit.unroll}
        }
      }
      // (The stage barrier: on gfx950 wavefront fences, so the out stores
      // still in flight overlap the next tile's copies; each wave has used
      // its reads of the tile's parts before its stores.)
      scf.if %persistent {
        func.call @stage_barrier() : () -> ()
      }
      }
      gpu.return
    }

    // Byte address of element (row, col) of a stage (the view's offset
    // included), for instructions that take addresses.
    func.func private @stage_address(%stage: ${STAGE_MEMREF}, %row: index, %col: index) -> i64 {
      %eb = arith.constant 2 : index
      %bk = arith.constant ${BK} : index
      %base, %offset, %sizes:2, %strides:2 = memref.extract_strided_metadata %stage
          : ${STAGE_MEMREF} -> memref<${T}, #gpu.address_space<workgroup>>, index, index, index, index, index
      %ptr = memref.extract_aligned_pointer_as_index %base : memref<${T}, #gpu.address_space<workgroup>> -> index
      %row_elems = arith.muli %row, %bk : index
      %in_stage = arith.addi %row_elems, %col : index
      %elems = arith.addi %offset, %in_stage : index
      %bytes = arith.muli %elems, %eb : index
      %addr = arith.addi %ptr, %bytes : index
      %a = arith.index_cast %addr : index to i64
      return %a : i64
    }

    // Element column of chunk `chunk` of workgroup row `row`: chunk slot
    // chunk ^ (row mod 8).
    func.func private @swizzled_col(%row: index, %chunk: index) -> index {
      %c7 = arith.constant 7 : index
      %c8 = arith.constant 8 : index
      %r7 = arith.andi %row, %c7 : index
      %s = arith.xori %chunk, %r7 : index
      %col = arith.muli %s, %c8 : index
      return %col : index
    }

    // The K-split meeting point: each block stores its partial sums
    // (@partial_index), the last to arrive loads them all back. Returns the sum over
    // the splits in split order and whether this block is the one to store.
    func.func private @combine_splits(%acc: vector<${TILES}x4xf32>,
                                      %ws: memref<${WS_SIZE}xf32, #gpu.address_space<global>>,
                                      %arrivals: memref<${WS_TILES}xi32, #gpu.address_space<global>>,
                                      %flag: memref<1xi32, #gpu.address_space<workgroup>>,
                                      %bx: index, %by: index, %bz: index, %tid: index)
        -> (vector<${TILES}x4xf32>, i1) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %tiles_n = arith.constant ${TILES_N} : index
      %splits = arith.constant ${SPLITS} : index
      %split_last = arith.subi %splits, %c1 : index
      %round = arith.constant ${SPLIT_ROUND} : index
      %rounds_end = arith.constant ${SPLIT_ROUNDS_END} : index
      %row_tiles = arith.muli %by, %tiles_n : index
      %tile = arith.addi %row_tiles, %bx : index
      %tile_splits = arith.muli %tile, %splits : index
      %mine = arith.addi %tile_splits, %bz : index
      func.call @store_partial(%ws, %mine, %tid, %acc)
          : (memref<${WS_SIZE}xf32, #gpu.address_space<global>>, index, index, vector<${TILES}x4xf32>) -> ()
      // No SM reads a partial line twice in one launch, so no L1 holds a
      // stale copy of one.
      %last = func.call @split_arrive(%arrivals, %flag, %tile, %tid)
          : (memref<${WS_TILES}xi32, #gpu.address_space<global>>, memref<1xi32, #gpu.address_space<workgroup>>,
             index, index) -> i1
      %sum = scf.if %last -> (vector<${TILES}x4xf32>) {
        func.call @fence_device() : () -> ()
        // Split order, whatever the arrival order. SPLIT_ROUND splits' loads
        // are issued together (one L2 round trip per round, not per split);
        // a round past the last split loads the last one again and adds 0.
        %zeros = arith.constant dense<0.0> : vector<${TILES}x4xf32>
        %total = scf.for %s0 = %c0 to %rounds_end step %round iter_args(%ts = %zeros) -> (vector<${TILES}x4xf32>) {
          %ts2 = scf.for %u = %c0 to %round step %c1 iter_args(%tu = %ts) -> (vector<${TILES}x4xf32>) {
            %s = arith.addi %s0, %u : index
            %in = arith.cmpi ult, %s, %splits : index
            %s_ld = arith.minui %s, %split_last : index
            %which = arith.addi %tile_splits, %s_ld : index
            %p = func.call @load_partial(%ws, %which, %tid)
                : (memref<${WS_SIZE}xf32, #gpu.address_space<global>>, index, index) -> vector<${TILES}x4xf32>
            %p_in = arith.select %in, %p, %zeros : vector<${TILES}x4xf32>
            %tu2 = arith.addf %tu, %p_in : vector<${TILES}x4xf32>
            scf.yield %tu2 : vector<${TILES}x4xf32>
          } {gatejit.unroll}
          scf.yield %ts2 : vector<${TILES}x4xf32>
        }
        func.call @split_reset(%arrivals, %tile, %tid) : (memref<${WS_TILES}xi32, #gpu.address_space<global>>, index, index) -> ()
        scf.yield %total : vector<${TILES}x4xf32>
      } else {
        scf.yield %acc : vector<${TILES}x4xf32>
      }
      return %sum, %last : vector<${TILES}x4xf32>, i1
    }

    // Tile e of thread tid of split s (split_tile = tile * SPLITS + s): the
    // 4 floats at ((split_tile * TILES + e) * BLOCK + tid) * 4, so a warp's
    // vector access covers 512 contiguous bytes.
    func.func private @partial_index(%split_tile: index, %e: index, %tid: index) -> index {
      %c4 = arith.constant 4 : index
      %tiles_c = arith.constant ${TILES} : index
      %block = arith.constant ${BLOCK} : index
      %a = arith.muli %split_tile, %tiles_c : index
      %b = arith.addi %a, %e : index
      %c = arith.muli %b, %block : index
      %d = arith.addi %c, %tid : index
      %idx = arith.muli %d, %c4 : index
      return %idx : index
    }
    func.func private @store_partial(%ws: memref<${WS_SIZE}xf32, #gpu.address_space<global>>, %split_tile: index,
                                     %tid: index, %acc: vector<${TILES}x4xf32>) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %tiles_c = arith.constant ${TILES} : index
      scf.for %e = %c0 to %tiles_c step %c1 {
        %idx = func.call @partial_index(%split_tile, %e, %tid) : (index, index, index) -> index
        %x = vector.extract %acc[%e] : vector<4xf32> from vector<${TILES}x4xf32>
        vector.store %x, %ws[%idx] {alignment = 16} : memref<${WS_SIZE}xf32, #gpu.address_space<global>>, vector<4xf32>
      } {gatejit.unroll}
      return
    }
    func.func private @load_partial(%ws: memref<${WS_SIZE}xf32, #gpu.address_space<global>>, %split_tile: index,
                                    %tid: index) -> vector<${TILES}x4xf32> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %tiles_c = arith.constant ${TILES} : index
      %zeros = arith.constant dense<0.0> : vector<${TILES}x4xf32>
      %v = scf.for %e = %c0 to %tiles_c step %c1 iter_args(%acc = %zeros) -> (vector<${TILES}x4xf32>) {
        %idx = func.call @partial_index(%split_tile, %e, %tid) : (index, index, index) -> index
        %x = vector.load %ws[%idx] {alignment = 16} : memref<${WS_SIZE}xf32, #gpu.address_space<global>>, vector<4xf32>
        %acc2 = vector.insert %x, %acc[%e] : vector<4xf32> into vector<${TILES}x4xf32>
        scf.yield %acc2 : vector<${TILES}x4xf32>
      } {gatejit.unroll}
      return %v : vector<${TILES}x4xf32>
    }

${EPILOGUE}
  }
}
