// kind: snippet
// param VW: outputs of an epilogue piece: consecutive columns of one row
// param VW_BYTES: a piece's bytes in attn's type
// param VW_BYTES_MASK: VW_BYTES - 1: the alignment a wide access needs
// param WIDE_STRIDES: whether the attn and out strides keep every row's pieces aligned
// param WIDE_PATH: whether the target takes wide accesses (false where unaligned vectors fault)
// param N: output columns N
// param N_LAST: N - 1
// param LDA: row stride of attn (elements)
// param LDO: row stride of out (elements)
// param PIECE_SLOTS: pieces a thread finishes: ceil(PIECES / BLOCK)
// param PIECES_WHOLE: whether N is a multiple of VW (no partial piece)
// param A_SIZE: elements of the attn memref
// param T: the contract's element type: hidden, attn and the gated value (bf16 | f16 | f32)
// param O_SIZE: elements of the out memref
// param T_OUT: the element type of out (T, or i8 for an fp8 out)
// param VW_ELEMENT_BYTES: bytes of one attn element
    // The epilogue a piece at a time (gemv and mma): VW consecutive outputs
    // of one row, 16 bytes of 2-byte elements where the block is that wide.
    // @finish_piece, the entry point that finishes a piece, comes from
    // finish_piece_store.mlir (out in attn's dtype) or finish_piece_stage.mlir
    // (an fp8 out: the gated values wait for their group's scale).
    //   ${VW} ${VW_BYTES} ${VW_BYTES_MASK} (VW x element bytes, less 1)
    //   ${WIDE_STRIDES} (whether LDA and LDO keep every row's pieces on VW
    //   elements; known from the contract) ${WIDE_PATH} (false where the
    //   target widens element accesses itself: TargetInfo::
    //   unaligned_global_vectors) ${N} ${N_LAST} ${LDA} ${LDO}
    //   ${PIECE_SLOTS} (pieces a thread finishes; the template defines
    //   @piece_place) ${PIECES_WHOLE} (N is a multiple of VW: every piece that starts
    //   inside N ends inside it, so element accesses need no clamp or check
    //   and the target may widen them)

    // Whether the attn and out base pointers lie on a piece. The contract
    // promises the alignment of hidden and weight only, so this is checked
    // at run time, once per thread: a uniform branch, no second kernel.
    func.func private @pieces_aligned(%attn: memref<${A_SIZE}x${T}, #gpu.address_space<global>>,
                                      %out: memref<${O_SIZE}x${T_OUT}, #gpu.address_space<global>>) -> i1 {
      %c0 = arith.constant 0 : index
      %mask = arith.constant ${VW_BYTES_MASK} : index
      %a_ptr = memref.extract_aligned_pointer_as_index %attn : memref<${A_SIZE}x${T}, #gpu.address_space<global>> -> index
      %o_ptr = memref.extract_aligned_pointer_as_index %out : memref<${O_SIZE}x${T_OUT}, #gpu.address_space<global>> -> index
      %ptrs = arith.ori %a_ptr, %o_ptr : index
      %low = arith.andi %ptrs, %mask : index
      %ptrs_ok = arith.cmpi eq, %low, %c0 : index
      %strides_ok = arith.constant ${WIDE_STRIDES}
      %wide_path = arith.constant ${WIDE_PATH}
      %aligned_ptrs = arith.andi %ptrs_ok, %strides_ok : i1
      %aligned = arith.andi %aligned_ptrs, %wide_path : i1
      return %aligned : i1
    }

    // The attn values of piece (row, col): one VW-wide load where the piece
    // lies wholly inside N and `aligned`; element by element otherwise, all
    // issued together and unconditional (columns past N read column N - 1 of
    // the row and are never stored). Zeros where the piece is not `in` the
    // output. attn does not depend on the sums, so templates may call this
    // early (ATTN_BEFORE_LOOP / ATTN_AFTER_LOOP, kernel_plan.cpp's
    // plan_attn_load) and the epilogue then waits on no global load. Only
    // the thread that loads a piece stores it, so out may still be attn.
    func.func private @load_piece_attn(%attn: memref<${A_SIZE}x${T}, #gpu.address_space<global>>,
                                       %row: index, %col: index, %aligned: i1, %in: i1) -> vector<${VW}x${T}> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %vw = arith.constant ${VW} : index
      %n = arith.constant ${N} : index
      %n_last = arith.constant ${N_LAST} : index
      %lda = arith.constant ${LDA} : index
      %az = arith.constant dense<0.0> : vector<${VW}x${T}>
      %a_row = arith.muli %row, %lda : index
      %a_idx = arith.addi %a_row, %col : index
      %end = arith.addi %col, %vw : index
      %ends_inside = arith.cmpi ule, %end, %n : index
      %pieces_whole = arith.constant ${PIECES_WHOLE}
      %whole = arith.ori %ends_inside, %pieces_whole : i1
      %wide = arith.andi %whole, %aligned : i1
      %a = scf.if %in -> (vector<${VW}x${T}>) {
        %a_in = scf.if %wide -> (vector<${VW}x${T}>) {
          %aw = vector.load %attn[%a_idx] {alignment = ${VW_BYTES}} : memref<${A_SIZE}x${T}, #gpu.address_space<global>>, vector<${VW}x${T}>
          scf.yield %aw : vector<${VW}x${T}>
        } else {
          %as = scf.for %j = %c0 to %vw step %c1 iter_args(%av = %az) -> (vector<${VW}x${T}>) {
            %cj = arith.addi %col, %j : index
            %cj_clamped = arith.minui %cj, %n_last : index
            %cj_ld = arith.select %pieces_whole, %cj, %cj_clamped : index
            %aj_idx = arith.addi %a_row, %cj_ld : index
            %aj = memref.load %attn[%aj_idx] : memref<${A_SIZE}x${T}, #gpu.address_space<global>>
            %av2 = vector.insert %aj, %av[%j] : ${T} into vector<${VW}x${T}>
            scf.yield %av2 : vector<${VW}x${T}>
          } {gatejit.unroll}
          scf.yield %as : vector<${VW}x${T}>
        }
        scf.yield %a_in : vector<${VW}x${T}>
      } else {
        scf.yield %az : vector<${VW}x${T}>
      }
      return %a : vector<${VW}x${T}>
    }

    // ATTN_PREFETCH: the attn lines of every piece of thread tid asked into
    // L2 at the kernel's start (@prefetch_l2, the target's), so that the
    // load after the main loop is an L2 hit, where it had waited on DRAM
    // (sm_90, attn loaded after the loop: ATTN_AFTER_LOOP, or after a K
    // split's meeting).
    func.func private @prefetch_pieces_attn(%attn: memref<${A_SIZE}x${T}, #gpu.address_space<global>>,
                                            %tid: index, %bid: index, %mrow0: index, %m_i: index) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %piece_slots = arith.constant ${PIECE_SLOTS} : index
      %lda = arith.constant ${LDA} : index
      %eb = arith.constant ${VW_ELEMENT_BYTES} : index
      %base = memref.extract_aligned_pointer_as_index %attn : memref<${A_SIZE}x${T}, #gpu.address_space<global>> -> index
      scf.for %q = %c0 to %piece_slots step %c1 {
        %at, %row, %col, %in = func.call @piece_place(%q, %tid, %bid, %mrow0, %m_i)
            : (index, index, index, index, index) -> (index, index, index, i1)
        scf.if %in {
          %a_row = arith.muli %row, %lda : index
          %a_idx = arith.addi %a_row, %col : index
          %off = arith.muli %a_idx, %eb : index
          %addr = arith.addi %base, %off : index
          %addr_i = arith.index_cast %addr : index to i64
          func.call @prefetch_l2(%addr_i) : (i64) -> ()
        }
      } {gatejit.unroll}
      return
    }

    // The attn values of every piece of thread tid: @piece_place (the
    // template's: where its pieces lie) says which, ${PIECE_SLOTS} of them.
    func.func private @load_pieces_attn(%attn: memref<${A_SIZE}x${T}, #gpu.address_space<global>>,
                                        %tid: index, %bid: index, %mrow0: index, %m_i: index, %aligned: i1)
        -> vector<${PIECE_SLOTS}x${VW}x${T}> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %piece_slots = arith.constant ${PIECE_SLOTS} : index
      %zero = arith.constant dense<0.0> : vector<${PIECE_SLOTS}x${VW}x${T}>
      %all = scf.for %q = %c0 to %piece_slots step %c1 iter_args(%av = %zero) -> (vector<${PIECE_SLOTS}x${VW}x${T}>) {
        %at, %row, %col, %in = func.call @piece_place(%q, %tid, %bid, %mrow0, %m_i)
            : (index, index, index, index, index) -> (index, index, index, i1)
        %a = func.call @load_piece_attn(%attn, %row, %col, %aligned, %in)
            : (memref<${A_SIZE}x${T}, #gpu.address_space<global>>, index, index, i1, i1) -> vector<${VW}x${T}>
        %av2 = vector.insert %a, %av[%q] : vector<${VW}x${T}> into vector<${PIECE_SLOTS}x${VW}x${T}>
        scf.yield %av2 : vector<${PIECE_SLOTS}x${VW}x${T}>
      } {gatejit.unroll}
      return %all : vector<${PIECE_SLOTS}x${VW}x${T}>
    }

