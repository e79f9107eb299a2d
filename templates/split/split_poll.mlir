// kind: snippet
// param DEVICE_SCOPE: the target's name of the device-wide memory scope (agent | device)
// param WS_SIZE: floats of the K split's workspace (1 without a split: folded away)
    // The poll meeting of a K split (SPLIT_POLL; mma: split_poll_pieces.mlir,
    // mma_tiled: split_poll_tile.mlir): no release fence, no arrival counter,
    // no acquire. Every split but the last stores its partials bit-inverted
    // into a workspace that reads zero between launches (NaNs are made
    // canonical first, so no stored word is zero). The last split, which the
    // GPU dispatches after every other (grid z is the slowest dimension:
    // every split it waits for has started; AMD's dispatcher is in order,
    // CUDA's is in practice but not by promise, and the planner polls by
    // default only where the grid fits one round, by workgroup memory and
    // threads; the tiled form's poll=1 polls any grid, on in-order dispatch
    // alone), polls its words until none reads zero,
    // adds them in split order and zeroes them again for the next launch.
    // Each word carries its own "ready", so no order between words is
    // needed: the accesses are relaxed atomics at ${DEVICE_SCOPE} scope (on
    // gfx950 they pass the XCD's L2). These are the words' accesses.
    //   ${WS_SIZE}

    // The word at ws[at], for the atomics (which take a pointer).
    func.func private @poll_word(%ws: memref<${WS_SIZE}xf32, #gpu.address_space<global>>, %at: index) -> !llvm.ptr<1> {
      %c4 = arith.constant 4 : index
      %base = memref.extract_aligned_pointer_as_index %ws : memref<${WS_SIZE}xf32, #gpu.address_space<global>> -> index
      %off = arith.muli %at, %c4 : index
      %addr = arith.addi %base, %off : index
      %a = arith.index_cast %addr : index to i64
      %p = llvm.inttoptr %a : i64 to !llvm.ptr<1>
      return %p : !llvm.ptr<1>
    }

    // The word j after p: a constant offset once unrolled (so a split's
    // words are addressed from one pointer, not each from its own 64-bit
    // address: 2 registers a word, 82 VGPRs against 54 at gfx950 M = 96).
    func.func private @poll_offset(%p: !llvm.ptr<1>, %j: index) -> !llvm.ptr<1> {
      %k = arith.index_cast %j : index to i32
      %pj = llvm.getelementptr %p[%k] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
      return %pj : !llvm.ptr<1>
    }

    // A producer's partial x: canonical NaN, inverted, stored at ws[at].
    func.func private @poll_put(%ws: memref<${WS_SIZE}xf32, #gpu.address_space<global>>, %at: index, %x: f32) {
      %nan = arith.constant 0x7FC00000 : i32
      %ones = arith.constant -1 : i32
      %bits = arith.bitcast %x : f32 to i32
      %is_nan = arith.cmpf uno, %x, %x : f32
      %canon = arith.select %is_nan, %nan, %bits : i32
      %word = arith.xori %canon, %ones : i32
      %p = func.call @poll_word(%ws, %at) : (memref<${WS_SIZE}xf32, #gpu.address_space<global>>, index) -> !llvm.ptr<1>
      llvm.store %word, %p atomic syncscope("${DEVICE_SCOPE}") monotonic {alignment = 4 : i64} : i32, !llvm.ptr<1>
      return
    }

    // The word at p as it is now (zero: not yet stored).
    func.func private @poll_get(%p: !llvm.ptr<1>) -> i32 {
      %x = llvm.load %p atomic syncscope("${DEVICE_SCOPE}") monotonic {alignment = 4 : i64} : !llvm.ptr<1> -> i32
      return %x : i32
    }

    // A word read: zero for the next launch (stream order puts that
    // launch's stores after this one).
    func.func private @poll_clear(%p: !llvm.ptr<1>) {
      %zero = arith.constant 0 : i32
      llvm.store %zero, %p atomic syncscope("${DEVICE_SCOPE}") monotonic {alignment = 4 : i64} : i32, !llvm.ptr<1>
      return
    }

    // The partial a word holds.
    func.func private @poll_value(%w: i32) -> f32 {
      %ones = arith.constant -1 : i32
      %bits = arith.xori %w, %ones : i32
      %x = arith.bitcast %bits : i32 to f32
      return %x : f32
    }

    // Words in pairs (mma_tiled): two partials in one 64-bit relaxed
    // access, half the loads a poll issues (gfx950 counts at most 63 in
    // flight). A pair is stored whole, so it reads zero until both are there.
    func.func private @poll_put_pair(%ws: memref<${WS_SIZE}xf32, #gpu.address_space<global>>, %at: index, %x0: f32,
                                     %x1: f32) {
      %nan = arith.constant 0x7FC00000 : i32
      %ones = arith.constant -1 : i32
      %c32 = arith.constant 32 : i64
      %b0 = arith.bitcast %x0 : f32 to i32
      %b1 = arith.bitcast %x1 : f32 to i32
      %n0 = arith.cmpf uno, %x0, %x0 : f32
      %n1 = arith.cmpf uno, %x1, %x1 : f32
      %c0 = arith.select %n0, %nan, %b0 : i32
      %c1 = arith.select %n1, %nan, %b1 : i32
      %w0 = arith.xori %c0, %ones : i32
      %w1 = arith.xori %c1, %ones : i32
      %lo = arith.extui %w0 : i32 to i64
      %hi32 = arith.extui %w1 : i32 to i64
      %hi = arith.shli %hi32, %c32 : i64
      %pair = arith.ori %lo, %hi : i64
      %p = func.call @poll_word(%ws, %at) : (memref<${WS_SIZE}xf32, #gpu.address_space<global>>, index) -> !llvm.ptr<1>
      llvm.store %pair, %p atomic syncscope("${DEVICE_SCOPE}") monotonic {alignment = 8 : i64} : i64, !llvm.ptr<1>
      return
    }

    // The pair j after p (pairs, not words).
    func.func private @poll_pair_offset(%p: !llvm.ptr<1>, %j: index) -> !llvm.ptr<1> {
      %k = arith.index_cast %j : index to i32
      %pj = llvm.getelementptr %p[%k] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i64
      return %pj : !llvm.ptr<1>
    }

    func.func private @poll_get_pair(%p: !llvm.ptr<1>) -> i64 {
      %x = llvm.load %p atomic syncscope("${DEVICE_SCOPE}") monotonic {alignment = 8 : i64} : !llvm.ptr<1> -> i64
      return %x : i64
    }

    func.func private @poll_clear_pair(%p: !llvm.ptr<1>) {
      %zero = arith.constant 0 : i64
      llvm.store %zero, %p atomic syncscope("${DEVICE_SCOPE}") monotonic {alignment = 8 : i64} : i64, !llvm.ptr<1>
      return
    }

    // The two partials a pair holds.
    func.func private @poll_pair_values(%w: i64) -> (f32, f32) {
      %c32 = arith.constant 32 : i64
      %lo = arith.trunci %w : i64 to i32
      %hi64 = arith.shrui %w, %c32 : i64
      %hi = arith.trunci %hi64 : i64 to i32
      %x0 = func.call @poll_value(%lo) : (i32) -> f32
      %x1 = func.call @poll_value(%hi) : (i32) -> f32
      return %x0, %x1 : f32, f32
    }
