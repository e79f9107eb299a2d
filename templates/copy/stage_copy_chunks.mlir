// kind: snippet
// param T: the contract's element type: hidden, attn and the gated value (bf16 | f16 | f32)
// param STAGE_MEMREF: the memref type of one stage
// param BLOCK: threads a workgroup
// param BK: K elements of a stage
// param BN: weight rows (output columns) of a workgroup tile
// param N_LAST: N - 1
// param LDW: row stride of weight (elements)
// param LDH: row stride of hidden (elements)
// param W_CPT: weight chunks a thread copies a stage
// param H_CPT: hidden chunks a thread copies a stage
// param CHUNKS: 16-byte chunks of a stage row: BK / 8
// param SWIZZLE_SOURCE: whether a copy permutes the chunk it fetches (true) or the slot it writes
    // mma_tiled's stage copy by every thread, one 16-byte chunk at a time
    // (sm_90 cp.async, gfx950 global_load_lds: the target's @copy_to_stage).
    // %bars and %pick are the TMA form's (async_copy_sm90_tma.mlir).
    // One stage: this thread's W_CPT weight chunks and H_CPT hidden chunks of
    // K tile kt into %stage. Chunk i of a thread is chunk tid + i BLOCK
    // of the stage (CHUNKS lanes per row: whole lines per request).
    // Weight rows past N and hidden rows past M read rows inside
    // (@row_inside; only outputs that are never stored see them).
    func.func private @stage_copy(%w: memref<?x${T}, #gpu.address_space<global>>,
                                  %h: memref<?x${T}, #gpu.address_space<global>>,
                                  %bars: i64, %pick: index, %stage: ${STAGE_MEMREF},
                                  %kt: index, %n0: index, %m0: index, %tid: index, %mlast: index) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c7 = arith.constant 7 : index
      %c8 = arith.constant 8 : index
      %block = arith.constant ${BLOCK} : index
      %bk = arith.constant ${BK} : index
      %bn = arith.constant ${BN} : index
      %nlast = arith.constant ${N_LAST} : index
      %ldw = arith.constant ${LDW} : index
      %ldh = arith.constant ${LDH} : index
      %w_cpt = arith.constant ${W_CPT} : index
      %h_cpt = arith.constant ${H_CPT} : index
      %k_tile = arith.muli %kt, %bk : index
      %cpr = arith.constant ${CHUNKS} : index
      %row_in_step = arith.divui %tid, %cpr : index
      %chunk = arith.remui %tid, %cpr : index
      // Which chunk of its row a thread fetches and where it puts it: the
      // stage layout is fixed (@swizzled_col); the target picks the side the
      // XOR is applied on (SWIZZLE_SOURCE: gfx950's global_load_lds writes a
      // wave's lanes to consecutive slots, so there the lane's slot is
      // fixed and the global chunk it fetches is permuted). A pass covers a
      // multiple of 8 rows, so row mod 8 is the same in every pass.
      %swizzle_source = arith.constant ${SWIZZLE_SOURCE}
      %r7 = arith.andi %row_in_step, %c7 : index
      %chunk_x = arith.xori %chunk, %r7 : index
      %src_chunk = arith.select %swizzle_source, %chunk_x, %chunk : index
      %k_chunk = arith.muli %src_chunk, %c8 : index
      %k = arith.addi %k_tile, %k_chunk : index
      %rows_per_pass = arith.divui %block, %cpr : index
      scf.for %i = %c0 to %w_cpt step %c1 {
        %pass = arith.muli %i, %rows_per_pass : index
        %row = arith.addi %pass, %row_in_step : index
        %col = func.call @stage_col(%row, %chunk, %swizzle_source) : (index, index, i1) -> index
        %n_row = arith.addi %n0, %row : index
        %g_row = func.call @row_inside(%n_row, %nlast) : (index, index) -> index
        %base = arith.muli %g_row, %ldw : index
        %idx = arith.addi %base, %k : index
        func.call @copy_to_stage(%w, %idx, %stage, %row, %col)
            : (memref<?x${T}, #gpu.address_space<global>>, index, ${STAGE_MEMREF}, index, index) -> ()
      } {gatejit.unroll}
      scf.for %i = %c0 to %h_cpt step %c1 {
        %pass = arith.muli %i, %rows_per_pass : index
        %h_row = arith.addi %pass, %row_in_step : index
        %row = arith.addi %bn, %h_row : index
        %col = func.call @stage_col(%row, %chunk, %swizzle_source) : (index, index, i1) -> index
        %m_row = arith.addi %m0, %h_row : index
        %g_row = func.call @row_inside(%m_row, %mlast) : (index, index) -> index
        %base = arith.muli %g_row, %ldh : index
        %idx = arith.addi %base, %k : index
        func.call @copy_to_stage(%h, %idx, %stage, %row, %col)
            : (memref<?x${T}, #gpu.address_space<global>>, index, ${STAGE_MEMREF}, index, index) -> ()
      } {gatejit.unroll}
      return
    }

    // The row a copy of row `row` reads, for rows 0 .. last: itself, or for
    // a row past the end the row as many past the start (at most `last`).
    // Rows past the end were once all row `last`: at M = 65 every copy
    // of a 64-row tile's 63 rows past M asked L2 for the same lines, and the
    // H200 ran gfx950's plan 33% slower there than with distinct rows.
    func.func private @row_inside(%row: index, %last: index) -> index {
      %c1 = arith.constant 1 : index
      %past = arith.cmpi ugt, %row, %last : index
      %count = arith.addi %last, %c1 : index
      %wrapped = arith.subi %row, %count : index
      %inside = arith.minui %wrapped, %last : index
      %r = arith.select %past, %inside, %row : index
      return %r : index
    }

    // Where a copying thread writes: slot `chunk` itself when the source
    // side is permuted, else the swizzled slot of global chunk `chunk`.
    func.func private @stage_col(%row: index, %chunk: index, %swizzle_source: i1) -> index {
      %c8 = arith.constant 8 : index
      %swizzled = func.call @swizzled_col(%row, %chunk) : (index, index) -> index
      %plain = arith.muli %chunk, %c8 : index
      %col = arith.select %swizzle_source, %plain, %swizzled : index
      return %col : index
    }

    // Nothing to set up: each thread waits for its own copies.
    func.func private @copies_begin(%smem: i64, %tid: index) -> i64 {
      %none = arith.constant 0 : i64
      return %none : i64
    }
    // The refill after the products is the TMA form's (REFILL_EARLY is
    // true here, so this is never called).
    func.func private @stage_refill(%w: memref<?x${T}, #gpu.address_space<global>>,
                                    %h: memref<?x${T}, #gpu.address_space<global>>,
                                    %bars: i64, %pick: index, %stage: ${STAGE_MEMREF},
                                    %kt: index, %n0: index, %m0: index, %tid: index, %mlast: index) {
      func.call @stage_copy(%w, %h, %bars, %pick, %stage, %kt, %n0, %m0, %tid, %mlast)
          : (memref<?x${T}, #gpu.address_space<global>>, memref<?x${T}, #gpu.address_space<global>>,
             i64, index, ${STAGE_MEMREF}, index, index, index, index, index) -> ()
      return
    }
