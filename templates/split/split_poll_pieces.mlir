// kind: snippet
// param WS_SIZE: floats of the K split's workspace (1 without a split: folded away)
// param POLL_OTHERS: splits the polling split reads (at least 1)
// param VW: outputs of an epilogue piece: consecutive columns of one row
    // mma's poll meeting (SPLIT_POLL; the words' protocol: split_poll.mlir):
    // a polled split stores its sums of the pieces the polling split will
    // finish, and the polling split reads them a piece at a time. The
    // workspace is the arrival's (@split_base: split-major, so a producer's
    // stores fill whole lines and no two splits share one; with an output's
    // splits side by side the H200 ran 1.2-1.7x slower).
    //   ${WS_SIZE} ${POLL_OTHERS} (SPLITS - 1, at least 1: the splits the
    //   last one polls) ${VW}

    // The first word of split s's partials of the piece at `at`.
    func.func private @piece_word(%ws: memref<${WS_SIZE}xf32, #gpu.address_space<global>>, %tile: index, %s: index,
                                  %at: index) -> !llvm.ptr<1> {
      %base = func.call @split_base(%tile, %s) : (index, index) -> index
      %first = arith.addi %base, %at : index
      %p = func.call @poll_word(%ws, %first) : (memref<${WS_SIZE}xf32, #gpu.address_space<global>>, index) -> !llvm.ptr<1>
      return %p : !llvm.ptr<1>
    }

    // A producer's partial for output `o` (its place among the block's
    // outputs) of split s.
    func.func private @poll_store(%ws: memref<${WS_SIZE}xf32, #gpu.address_space<global>>, %tile: index, %o: index,
                                  %s: index, %x: f32) {
      %base = func.call @split_base(%tile, %s) : (index, index) -> index
      %at = arith.addi %base, %o : index
      func.call @poll_put(%ws, %at, %x) : (memref<${WS_SIZE}xf32, #gpu.address_space<global>>, index, f32) -> ()
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
            %x = func.call @poll_get(%p) : (!llvm.ptr<1>) -> i32
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
      scf.for %s = %c0 to %others step %c1 {
        %ps = func.call @piece_word(%ws, %tile, %s, %at)
            : (memref<${WS_SIZE}xf32, #gpu.address_space<global>>, index, index, index) -> !llvm.ptr<1>
        scf.for %j = %c0 to %vw step %c1 {
          %p = func.call @poll_offset(%ps, %j) : (!llvm.ptr<1>, index) -> !llvm.ptr<1>
          func.call @poll_clear(%p) : (!llvm.ptr<1>) -> ()
        } {gatejit.unroll}
      } {gatejit.unroll}
      return %sum : vector<${VW}xf32>
    }
