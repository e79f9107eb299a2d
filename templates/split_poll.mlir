    // The poll meeting of a K split (mma with SPLIT_POLL): no release fence,
    // no arrival counter, no acquire. Every split but the last stores its
    // partials bit-inverted into a workspace that reads zero between
    // launches (NaNs are made canonical first, so no stored word is zero).
    // The last split, which the GPU dispatches after every other (grid z is
    // the slowest dimension: every split it waits for has started; AMD's
    // dispatcher is in order, CUDA's is in practice but not by promise, and
    // the planner polls only where the grid fits one round), polls a
    // piece's words until none reads zero, adds them in split order and
    // zeroes them again for the next launch. Each word carries its own
    // "ready", so no order between words is needed: the accesses are relaxed
    // atomics at ${DEVICE_SCOPE} scope (on gfx950 they pass the XCD's L2).
    // The workspace is the arrival's (@split_base: split-major, so a
    // producer's stores fill whole lines and no two splits share one; with
    // an output's splits side by side the H200 ran 1.2-1.7x slower). A
    // split's words of a piece are addressed from its first by constant
    // offsets, not each from its own 64-bit address (2 registers a word: 82
    // VGPRs against 54 at gfx950 M = 96).
    //   ${WS_SIZE} ${POLL_OTHERS} (SPLITS - 1, at least 1:
    //   the splits the last one polls) ${VW}

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

    // The first word of split s's partials of the piece at `at`.
    func.func private @piece_word(%ws: memref<${WS_SIZE}xf32, #gpu.address_space<global>>, %tile: index, %s: index,
                                  %at: index) -> !llvm.ptr<1> {
      %base = func.call @split_base(%tile, %s) : (index, index) -> index
      %first = arith.addi %base, %at : index
      %p = func.call @poll_word(%ws, %first) : (memref<${WS_SIZE}xf32, #gpu.address_space<global>>, index) -> !llvm.ptr<1>
      return %p : !llvm.ptr<1>
    }

    // Output j of a piece from the piece's first word: a constant offset
    // once unrolled.
    func.func private @poll_offset(%p: !llvm.ptr<1>, %j: index) -> !llvm.ptr<1> {
      %k = arith.index_cast %j : index to i32
      %pj = llvm.getelementptr %p[%k] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
      return %pj : !llvm.ptr<1>
    }

    // A producer's partial for output `o` (its place among the block's
    // outputs) of split s: canonical NaN, inverted, stored.
    func.func private @poll_store(%ws: memref<${WS_SIZE}xf32, #gpu.address_space<global>>, %tile: index, %o: index,
                                  %s: index, %x: f32) {
      %nan = arith.constant 0x7FC00000 : i32
      %ones = arith.constant -1 : i32
      %bits = arith.bitcast %x : f32 to i32
      %is_nan = arith.cmpf uno, %x, %x : f32
      %canon = arith.select %is_nan, %nan, %bits : i32
      %word = arith.xori %canon, %ones : i32
      %base = func.call @split_base(%tile, %s) : (index, index) -> index
      %at = arith.addi %base, %o : index
      %p = func.call @poll_word(%ws, %at) : (memref<${WS_SIZE}xf32, #gpu.address_space<global>>, index) -> !llvm.ptr<1>
      llvm.store %word, %p atomic syncscope("${DEVICE_SCOPE}") monotonic {alignment = 4 : i64} : i32, !llvm.ptr<1>
      return
    }

    // The sum, in split order, of the other splits' partials of the piece at
    // `at` (its first output's place among the block's), once every word has
    // arrived; the words are then zeroed. All of a poll's loads are issued
    // before it looks at any.
    func.func private @poll_piece(%ws: memref<${WS_SIZE}xf32, #gpu.address_space<global>>, %tile: index, %at: index)
        -> vector<${VW}xf32> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %others = arith.constant ${POLL_OTHERS} : index
      %vw = arith.constant ${VW} : index
      %false = arith.constant false
      %zero = arith.constant 0 : i32
      %ones = arith.constant dense<-1> : vector<${VW}xi32>
      %wzero = arith.constant dense<0> : vector<${POLL_OTHERS}x${VW}xi32>
      %fzero = arith.constant dense<0.0> : vector<${VW}xf32>
      %words = scf.while (%unused = %false) : (i1) -> vector<${POLL_OTHERS}x${VW}xi32> {
        %w, %missing = scf.for %s = %c0 to %others step %c1 iter_args(%v = %wzero, %m = %false)
            -> (vector<${POLL_OTHERS}x${VW}xi32>, i1) {
          %ps = func.call @piece_word(%ws, %tile, %s, %at)
              : (memref<${WS_SIZE}xf32, #gpu.address_space<global>>, index, index, index) -> !llvm.ptr<1>
          %v2, %m2 = scf.for %j = %c0 to %vw step %c1 iter_args(%vj = %v, %mj = %m) -> (vector<${POLL_OTHERS}x${VW}xi32>, i1) {
            %p = func.call @poll_offset(%ps, %j) : (!llvm.ptr<1>, index) -> !llvm.ptr<1>
            %x = llvm.load %p atomic syncscope("${DEVICE_SCOPE}") monotonic {alignment = 4 : i64} : !llvm.ptr<1> -> i32
            %vj2 = vector.insert %x, %vj[%s, %j] : i32 into vector<${POLL_OTHERS}x${VW}xi32>
            %empty = arith.cmpi eq, %x, %zero : i32
            %mj2 = arith.ori %mj, %empty : i1
            scf.yield %vj2, %mj2 : vector<${POLL_OTHERS}x${VW}xi32>, i1
          } {gatejit.unroll}
          scf.yield %v2, %m2 : vector<${POLL_OTHERS}x${VW}xi32>, i1
        } {gatejit.unroll}
        scf.condition(%missing) %w : vector<${POLL_OTHERS}x${VW}xi32>
      } do {
      ^bb0(%w: vector<${POLL_OTHERS}x${VW}xi32>):
        scf.yield %false : i1
      }
      %sum = scf.for %s = %c0 to %others step %c1 iter_args(%acc = %fzero) -> (vector<${VW}xf32>) {
        %w = vector.extract %words[%s] : vector<${VW}xi32> from vector<${POLL_OTHERS}x${VW}xi32>
        %bits = arith.xori %w, %ones : vector<${VW}xi32>
        %x = arith.bitcast %bits : vector<${VW}xi32> to vector<${VW}xf32>
        %acc2 = arith.addf %acc, %x : vector<${VW}xf32>
        scf.yield %acc2 : vector<${VW}xf32>
      } {gatejit.unroll}
      // Read: zero for the next launch (stream order puts that launch's
      // stores after these).
      scf.for %s = %c0 to %others step %c1 {
        %ps = func.call @piece_word(%ws, %tile, %s, %at)
            : (memref<${WS_SIZE}xf32, #gpu.address_space<global>>, index, index, index) -> !llvm.ptr<1>
        scf.for %j = %c0 to %vw step %c1 {
          %p = func.call @poll_offset(%ps, %j) : (!llvm.ptr<1>, index) -> !llvm.ptr<1>
          llvm.store %zero, %p atomic syncscope("${DEVICE_SCOPE}") monotonic {alignment = 4 : i64} : i32, !llvm.ptr<1>
        } {gatejit.unroll}
      } {gatejit.unroll}
      return %sum : vector<${VW}xf32>
    }
