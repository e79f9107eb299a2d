// kind: snippet
// param A_SIZE: elements of the attn memref
// param T: the contract's element type: hidden, attn and the gated value (bf16 | f16 | f32)
// param O_SIZE: elements of the out memref
// param EPI_STAGED: 1 where the epilogue goes through a tile of workgroup memory in row pieces
// param MT: hidden tiles a wave (16 rows each)
// param TILE_W: weight rows of one matrix instruction's tile (8 on sm_90, 16 on gfx950)
// param N: output columns N
// param LDA: row stride of attn (elements)
// param LDO: row stride of out (elements)
// param RT: weight tiles a wave (TILE_W rows each)
// param BLOCK: threads a workgroup
// param EPI_PIECES_PER_ROW: pieces of a tile row: BN / 8
// param EPI_PIECES: 8-element row pieces of the tile
// param EPI_PIECES_PER_THREAD: pieces a thread finishes
// param EPI_PARTS: parts of the staged tile (each over one stage slot)
// param EPI_PART_ROWS: tile rows of one part
// param EPI_PART_FLOATS: floats of one part: EPI_PART_ROWS x EPI_LD
// param EPI_LD: floats between rows of the staged epilogue's tile
    // Where mma_tiled's outputs go: each accumulator element (owned by one
    // lane, in the fragment layout of @lane_c_h / @lane_c_w) and, for the
    // staged epilogue, each thread's 8-element row pieces of the block's
    // BM x BN output tile.
    //
    // Parameters: MT, TILE_W, N, LDA, LDO, BLOCK, A_SIZE, T, EPI_STAGED,
    // EPI_LD, EPI_PARTS, EPI_PART_ROWS, EPI_PART_FLOATS, EPI_PIECES,
    // EPI_PIECES_PER_ROW, EPI_PIECES_PER_THREAD.

    // Whether this launch takes the staged epilogue: the planner's shape
    // (EPI_STAGED) and both attn and out on 16 bytes, checked here because
    // the contract's align speaks for hidden and weight only.
    func.func private @staged_epilogue_applies(%attn: memref<${A_SIZE}x${T}, #gpu.address_space<global>>,
                                               %out: memref<${O_SIZE}x${T}, #gpu.address_space<global>>) -> i1 {
      %c0 = arith.constant 0 : index
      %c15 = arith.constant 15 : index
      %shape = arith.constant ${EPI_STAGED} : i1
      %pa = memref.extract_aligned_pointer_as_index %attn : memref<${A_SIZE}x${T}, #gpu.address_space<global>> -> index
      %po = memref.extract_aligned_pointer_as_index %out : memref<${O_SIZE}x${T}, #gpu.address_space<global>> -> index
      %both = arith.ori %pa, %po : index
      %low = arith.andi %both, %c15 : index
      %on16 = arith.cmpi eq, %low, %c0 : index
      %applies = arith.andi %shape, %on16 : i1
      return %applies : i1
    }

    // Accumulator element q of tile e of this lane: its attn and out
    // indices, and whether it is inside the M x N output.
    func.func private @epilogue_element(%e: index, %q: index, %lane: index, %h_base: index, %w_base: index,
                                        %m_i: index) -> (index, index, i1) {
      %mt = arith.constant ${MT} : index
      %tile_w = arith.constant ${TILE_W} : index
      %c16 = arith.constant 16 : index
      %n = arith.constant ${N} : index
      %lda = arith.constant ${LDA} : index
      %ldo = arith.constant ${LDO} : index
      %r = arith.divui %e, %mt : index
      %t = arith.remui %e, %mt : index
      %h_in = func.call @lane_c_h(%lane, %q) : (index, index) -> index
      %w_in = func.call @lane_c_w(%lane, %q) : (index, index) -> index
      %t16 = arith.muli %t, %c16 : index
      %h_off = arith.addi %t16, %h_in : index
      %row = arith.addi %h_base, %h_off : index
      %r_w = arith.muli %r, %tile_w : index
      %w_off = arith.addi %r_w, %w_in : index
      %col = arith.addi %w_base, %w_off : index
      %row_ok = arith.cmpi ult, %row, %m_i : index
      %col_ok = arith.cmpi ult, %col, %n : index
      %in = arith.andi %row_ok, %col_ok : i1
      %a_row = arith.muli %row, %lda : index
      %a_idx = arith.addi %a_row, %col : index
      %o_row = arith.muli %row, %ldo : index
      %o_idx = arith.addi %o_row, %col : index
      return %a_idx, %o_idx, %in : index, index, i1
    }

    // Accumulator element q of tile e of this lane: its row and column in
    // the block's BM x BN output tile.
    func.func private @element_in_tile(%e: index, %q: index, %lane: index, %wn: index, %wm: index) -> (index, index) {
      %mt = arith.constant ${MT} : index
      %rt = arith.constant ${RT} : index
      %tile_w = arith.constant ${TILE_W} : index
      %c16 = arith.constant 16 : index
      %r = arith.divui %e, %mt : index
      %t = arith.remui %e, %mt : index
      %h_in = func.call @lane_c_h(%lane, %q) : (index, index) -> index
      %w_in = func.call @lane_c_w(%lane, %q) : (index, index) -> index
      %wm_tiles = arith.muli %wm, %mt : index
      %wm_t = arith.addi %wm_tiles, %t : index
      %wm_rows = arith.muli %wm_t, %c16 : index
      %row = arith.addi %wm_rows, %h_in : index
      %wn_tiles = arith.muli %wn, %rt : index
      %wn_r = arith.addi %wn_tiles, %r : index
      %wn_cols = arith.muli %wn_r, %tile_w : index
      %col = arith.addi %wn_cols, %w_in : index
      return %row, %col : index, index
    }

    // Row piece p of thread tid in the staged epilogue: its output row and
    // column, its place in the tile, and whether it is inside the output
    // (N is a multiple of 8 here: a piece is wholly in or out).
    func.func private @epilogue_piece(%p: index, %tid: index, %m0: index, %n0: index, %m_i: index)
        -> (index, index, index, index, i1) {
      %block = arith.constant ${BLOCK} : index
      %per_row = arith.constant ${EPI_PIECES_PER_ROW} : index
      %pieces = arith.constant ${EPI_PIECES} : index
      %n = arith.constant ${N} : index
      %c8 = arith.constant 8 : index
      %p_block = arith.muli %p, %block : index
      %piece = arith.addi %tid, %p_block : index
      %row_l = arith.divui %piece, %per_row : index
      %in_row = arith.remui %piece, %per_row : index
      %col_l = arith.muli %in_row, %c8 : index
      %row = arith.addi %m0, %row_l : index
      %col = arith.addi %n0, %col_l : index
      %piece_ok = arith.cmpi ult, %piece, %pieces : index
      %row_ok = arith.cmpi ult, %row, %m_i : index
      %col_ok = arith.cmpi ult, %col, %n : index
      %rc = arith.andi %row_ok, %col_ok : i1
      %in = arith.andi %rc, %piece_ok : i1
      return %row, %col, %row_l, %col_l, %in : index, index, index, index, i1
    }

    // This thread's attn pieces of the staged epilogue, all loads issued
    // together. A piece outside the output loads the first piece of attn
    // (always inside: M, N >= 1, and the staged epilogue's attn is 16-byte
    // aligned) and is never stored: no branch per load. With a branch each
    // gfx9 waited for every memory operation (vmcnt(0)) before each
    // piece where these loads are issued in the epilogue (the persistent
    // grid's), as the element-wise fallback had.
    func.func private @load_attn_pieces(%attn: memref<${A_SIZE}x${T}, #gpu.address_space<global>>, %tid: index,
                                        %m0: index, %n0: index, %m_i: index) -> vector<${EPI_PIECES_PER_THREAD}x8x${T}> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %per_thread = arith.constant ${EPI_PIECES_PER_THREAD} : index
      %lda = arith.constant ${LDA} : index
      %none = arith.constant dense<0.0> : vector<${EPI_PIECES_PER_THREAD}x8x${T}>
      %pieces = scf.for %p = %c0 to %per_thread step %c1 iter_args(%va = %none) -> (vector<${EPI_PIECES_PER_THREAD}x8x${T}>) {
        %row, %col, %row_l, %col_l, %in = func.call @epilogue_piece(%p, %tid, %m0, %n0, %m_i)
            : (index, index, index, index, index) -> (index, index, index, index, i1)
        %a_row = arith.muli %row, %lda : index
        %a_at = arith.addi %a_row, %col : index
        %a_idx = arith.select %in, %a_at, %c0 : index
        %x = vector.load %attn[%a_idx] {alignment = 16} : memref<${A_SIZE}x${T}, #gpu.address_space<global>>, vector<8x${T}>
        %va2 = vector.insert %x, %va[%p] : vector<8x${T}> into vector<${EPI_PIECES_PER_THREAD}x8x${T}>
        scf.yield %va2 : vector<${EPI_PIECES_PER_THREAD}x8x${T}>
      } {gatejit.unroll}
      return %pieces : vector<${EPI_PIECES_PER_THREAD}x8x${T}>
    }

    // Row row_l of the staged tile: its part (each EPI_PART_ROWS rows, a
    // power of two where there are several) and its row in that part. One
    // part folds to (0, row_l).
    func.func private @tile_part_of(%row_l: index) -> (index, index) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %parts = arith.constant ${EPI_PARTS} : index
      %rows = arith.constant ${EPI_PART_ROWS} : index
      %many = arith.cmpi ugt, %parts, %c1 : index
      %part_d = arith.divui %row_l, %rows : index
      %row_d = arith.remui %row_l, %rows : index
      %part = arith.select %many, %part_d, %c0 : index
      %row_p = arith.select %many, %row_d, %row_l : index
      return %part, %row_p : index, index
    }

    // The 8 products of a piece at (row_l, col_l) of a tile part, as two
    // 16-byte loads. Lanes take neighbouring pieces 32 bytes apart, so in
    // one load lanes i and i + 4 of a quarter warp would share banks; the
    // lanes of every other quad read their second half first, and the
    // quarter warp's 8 loads cover the 32 banks once.
    func.func private @load_tile_piece(%tile: memref<${EPI_PART_FLOATS}xf32, #gpu.address_space<workgroup>>,
                                       %row_l: index, %col_l: index, %lane: index) -> vector<8xf32> {
      %c0 = arith.constant 0 : index
      %c2 = arith.constant 2 : index
      %c4 = arith.constant 4 : index
      %epi_ld = arith.constant ${EPI_LD} : index
      %t_row = arith.muli %row_l, %epi_ld : index
      %t_idx = arith.addi %t_row, %col_l : index
      %quad = arith.divui %lane, %c4 : index
      %odd = arith.remui %quad, %c2 : index
      %swap = arith.cmpi ne, %odd, %c0 : index
      %first = arith.select %swap, %c4, %c0 : index
      %second = arith.subi %c4, %first : index
      %i_first = arith.addi %t_idx, %first : index
      %i_second = arith.addi %t_idx, %second : index
      %a = vector.load %tile[%i_first] {alignment = 16} : memref<${EPI_PART_FLOATS}xf32, #gpu.address_space<workgroup>>, vector<4xf32>
      %b = vector.load %tile[%i_second] {alignment = 16} : memref<${EPI_PART_FLOATS}xf32, #gpu.address_space<workgroup>>, vector<4xf32>
      %lo = arith.select %swap, %b, %a : vector<4xf32>
      %hi = arith.select %swap, %a, %b : vector<4xf32>
      %piece = vector.shuffle %lo, %hi [0, 1, 2, 3, 4, 5, 6, 7] : vector<4xf32>, vector<4xf32>
      return %piece : vector<8xf32>
    }
