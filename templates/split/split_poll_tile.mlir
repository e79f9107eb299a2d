// kind: snippet
// param WS_SIZE: floats of the K split's workspace (1 without a split: folded away)
// param TILES: tiles a wave multiplies: RT x MT
// param WAVE: lanes a wave (64 on gfx9, 32 on sm_90)
// param BLOCK_WAVES: waves a workgroup
// param SPLITS: workgroups that split the K range of a tile (grid z)
// param POLL_OTHERS: splits the polling split reads (at least 1)
// param POLL_ROUND: splits polled together in one round
// param POLL_ROUNDS_END: the polled splits rounded up to whole rounds
// param TILE_PAIRS: pairs of partials a thread holds: TILES x 2
    // mma_tiled's poll meeting (SPLIT_POLL; the words' protocol:
    // split_poll.mlir): every block of an output tile but the last split's
    // stores its accumulator bit-inverted, in pairs of partials
    // (@poll_pair_index: each thread polls only the pairs that its own lane
    // of the other splits stored); the last split polls them, POLL_ROUND
    // splits at a time (the arrival's register budget; a round's loads go
    // out together, as many as the target's load counter holds: gfx950's
    // 63, so its 72 at N = 1536 M = 128 take a little more than one round
    // trip), and adds them in split order, then its own: the arrival's sum.
    //   ${WS_SIZE} ${TILES} ${WAVE} ${BLOCK_WAVES} ${SPLITS}
    //   ${POLL_OTHERS} (SPLITS - 1) ${POLL_ROUND}
    //   ${POLL_ROUNDS_END} (the polls' rounds) ${TILE_PAIRS} (= TILES x 2)

    // Pair j (partials e = j / 2, q = 2 (j mod 2) and q + 1) of thread
    // tid's accumulator in split_tile's partials, in floats: wave-major,
    // then pair, then lane. Each of a poll's loads is one wave's pairs side
    // by side (whole lines), and a thread's pairs of a split lie within
    // WAVE x TILE_PAIRS x 8 bytes (4 KiB on gfx950) of its first: offsets
    // the loads carry as immediates, one address a split. (The arrival's
    // layout, 16-byte groups a lane, left each poll a quarter of a line and
    // an address a 16 B x BLOCK step: 408 VGPRs at gfx950 M = 128.)
    func.func private @poll_pair_index(%split_tile: index, %j: index, %tid: index) -> index {
      %c2 = arith.constant 2 : index
      %wave = arith.constant ${WAVE} : index
      %waves = arith.constant ${BLOCK_WAVES} : index
      %pairs = arith.constant ${TILE_PAIRS} : index
      %warp = arith.divui %tid, %wave : index
      %lane = arith.remui %tid, %wave : index
      %a = arith.muli %split_tile, %waves : index
      %b = arith.addi %a, %warp : index
      %c = arith.muli %b, %pairs : index
      %d = arith.addi %c, %j : index
      %e = arith.muli %d, %wave : index
      %f = arith.addi %e, %lane : index
      %idx = arith.muli %f, %c2 : index
      return %idx : index
    }

    // The K split's meeting by poll for output tile `tile`: (the sum over
    // the splits, true) for the last split; (acc, false) for the others,
    // which store and are done.
    func.func private @poll_combine(%acc: vector<${TILES}x4xf32>, %ws: memref<${WS_SIZE}xf32, #gpu.address_space<global>>,
                                    %tile: index, %bz: index, %tid: index) -> (vector<${TILES}x4xf32>, i1) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %splits = arith.constant ${SPLITS} : index
      %split_last = arith.subi %splits, %c1 : index
      %pairs_c = arith.constant ${TILE_PAIRS} : index
      %tile_splits = arith.muli %tile, %splits : index
      %polling = arith.cmpi eq, %bz, %split_last : index
      %sum = scf.if %polling -> (vector<${TILES}x4xf32>) {
        %others = func.call @poll_tile(%ws, %tile_splits, %tid)
            : (memref<${WS_SIZE}xf32, #gpu.address_space<global>>, index, index) -> vector<${TILES}x4xf32>
        %all = arith.addf %others, %acc : vector<${TILES}x4xf32>
        scf.yield %all : vector<${TILES}x4xf32>
      } else {
        %mine = arith.addi %tile_splits, %bz : index
        scf.for %j = %c0 to %pairs_c step %c1 {
          %e = arith.divui %j, %c2 : index
          %h = arith.remui %j, %c2 : index
          %q0 = arith.muli %h, %c2 : index
          %q1 = arith.addi %q0, %c1 : index
          %x0 = vector.extract %acc[%e, %q0] : f32 from vector<${TILES}x4xf32>
          %x1 = vector.extract %acc[%e, %q1] : f32 from vector<${TILES}x4xf32>
          %at = func.call @poll_pair_index(%mine, %j, %tid) : (index, index, index) -> index
          func.call @poll_put_pair(%ws, %at, %x0, %x1)
              : (memref<${WS_SIZE}xf32, #gpu.address_space<global>>, index, f32, f32) -> ()
        } {gatejit.unroll}
        scf.yield %acc : vector<${TILES}x4xf32>
      }
      return %sum, %polling : vector<${TILES}x4xf32>, i1
    }

    // The sum, in split order, of splits 0 .. SPLITS - 2's pairs of this
    // thread (split_tile = tile x SPLITS + s), each round's pairs polled
    // until none reads zero (all of a round's loads issued before it looks
    // at any), then zeroed. A round past the last of them polls the last
    // again and adds -0.0 (x + -0.0 is x).
    func.func private @poll_tile(%ws: memref<${WS_SIZE}xf32, #gpu.address_space<global>>, %tile_splits: index,
                                 %tid: index) -> vector<${TILES}x4xf32> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %others = arith.constant ${POLL_OTHERS} : index
      %others_last = arith.subi %others, %c1 : index
      %round = arith.constant ${POLL_ROUND} : index
      %rounds_end = arith.constant ${POLL_ROUNDS_END} : index
      %pairs_c = arith.constant ${TILE_PAIRS} : index
      %wave = arith.constant ${WAVE} : index
      %false = arith.constant false
      %zero = arith.constant 0 : i64
      %nzero = arith.constant -0.0 : f32
      %wzero = arith.constant dense<0> : vector<${POLL_ROUND}x${TILE_PAIRS}xi64>
      %fzero = arith.constant dense<0.0> : vector<${TILES}x4xf32>
      %total = scf.for %s0 = %c0 to %rounds_end step %round iter_args(%t = %fzero) -> (vector<${TILES}x4xf32>) {
        %words = scf.while (%unused = %false) : (i1) -> vector<${POLL_ROUND}x${TILE_PAIRS}xi64> {
          %got, %missing = scf.for %u = %c0 to %round step %c1 iter_args(%v = %wzero, %m = %false)
              -> (vector<${POLL_ROUND}x${TILE_PAIRS}xi64>, i1) {
            %s = arith.addi %s0, %u : index
            %s_ld = arith.minui %s, %others_last : index
            %which = arith.addi %tile_splits, %s_ld : index
            %base = func.call @poll_pair_index(%which, %c0, %tid) : (index, index, index) -> index
            %p0 = func.call @poll_word(%ws, %base) : (memref<${WS_SIZE}xf32, #gpu.address_space<global>>, index) -> !llvm.ptr<1>
            %v2, %m2 = scf.for %j = %c0 to %pairs_c step %c1 iter_args(%vj = %v, %mj = %m)
                -> (vector<${POLL_ROUND}x${TILE_PAIRS}xi64>, i1) {
              %off = arith.muli %j, %wave : index
              %p = func.call @poll_pair_offset(%p0, %off) : (!llvm.ptr<1>, index) -> !llvm.ptr<1>
              %x = func.call @poll_get_pair(%p) : (!llvm.ptr<1>) -> i64
              %vj2 = vector.insert %x, %vj[%u, %j] : i64 into vector<${POLL_ROUND}x${TILE_PAIRS}xi64>
              %empty = arith.cmpi eq, %x, %zero : i64
              %mj2 = arith.ori %mj, %empty : i1
              scf.yield %vj2, %mj2 : vector<${POLL_ROUND}x${TILE_PAIRS}xi64>, i1
            } {gatejit.unroll}
            scf.yield %v2, %m2 : vector<${POLL_ROUND}x${TILE_PAIRS}xi64>, i1
          } {gatejit.unroll}
          scf.condition(%missing) %got : vector<${POLL_ROUND}x${TILE_PAIRS}xi64>
        } do {
        ^bb0(%got: vector<${POLL_ROUND}x${TILE_PAIRS}xi64>):
          scf.yield %false : i1
        }
        %t2 = scf.for %u = %c0 to %round step %c1 iter_args(%tu = %t) -> (vector<${TILES}x4xf32>) {
          %s = arith.addi %s0, %u : index
          %in = arith.cmpi ult, %s, %others : index
          %tu2 = scf.for %j = %c0 to %pairs_c step %c1 iter_args(%tj = %tu) -> (vector<${TILES}x4xf32>) {
            %e = arith.divui %j, %c2 : index
            %h = arith.remui %j, %c2 : index
            %q0 = arith.muli %h, %c2 : index
            %q1 = arith.addi %q0, %c1 : index
            %pair = vector.extract %words[%u, %j] : i64 from vector<${POLL_ROUND}x${TILE_PAIRS}xi64>
            %x0, %x1 = func.call @poll_pair_values(%pair) : (i64) -> (f32, f32)
            %x0_in = arith.select %in, %x0, %nzero : f32
            %x1_in = arith.select %in, %x1, %nzero : f32
            %a0 = vector.extract %tj[%e, %q0] : f32 from vector<${TILES}x4xf32>
            %a1 = vector.extract %tj[%e, %q1] : f32 from vector<${TILES}x4xf32>
            %b0 = arith.addf %a0, %x0_in : f32
            %b1 = arith.addf %a1, %x1_in : f32
            %tj1 = vector.insert %b0, %tj[%e, %q0] : f32 into vector<${TILES}x4xf32>
            %tj2 = vector.insert %b1, %tj1[%e, %q1] : f32 into vector<${TILES}x4xf32>
            scf.yield %tj2 : vector<${TILES}x4xf32>
          } {gatejit.unroll}
          scf.yield %tu2 : vector<${TILES}x4xf32>
        } {gatejit.unroll}
        scf.for %u = %c0 to %round step %c1 {
          %s = arith.addi %s0, %u : index
          %in = arith.cmpi ult, %s, %others : index
          scf.if %in {
            %which = arith.addi %tile_splits, %s : index
            %base = func.call @poll_pair_index(%which, %c0, %tid) : (index, index, index) -> index
            %p0 = func.call @poll_word(%ws, %base) : (memref<${WS_SIZE}xf32, #gpu.address_space<global>>, index) -> !llvm.ptr<1>
            scf.for %j = %c0 to %pairs_c step %c1 {
              %off = arith.muli %j, %wave : index
              %p = func.call @poll_pair_offset(%p0, %off) : (!llvm.ptr<1>, index) -> !llvm.ptr<1>
              func.call @poll_clear_pair(%p) : (!llvm.ptr<1>) -> ()
            } {gatejit.unroll}
          }
        } {gatejit.unroll}
        scf.yield %t2 : vector<${TILES}x4xf32>
      }
      return %total : vector<${TILES}x4xf32>
    }
