// kind: snippet
// param PERSISTENT: whether the grid is persistent (workgroups loop over the tiles)
// param TILE_GROUP_M: row tiles a group of the tile order spans
// param TILES_N: column tiles of the grid (grid x)
    // The order of mma_tiled's output tiles. Without PERSISTENT a
    // workgroup finishes its own tile, (block x, block y), once. With
    // PERSISTENT the grid is what the GPU holds at once
    // (LaunchGeometry::persistent_workgroups) and each workgroup loops over
    // tiles of one linear order: its first tile, then steps of the grid's
    // size (the kernel computes where it starts: mma_tiled.mlir). So a
    // prefill grid of several rounds places no more waves than the code
    // allows at once, and the order is the kernel's, not the dispatcher's:
    //  - the dispatcher deals workgroup b to die b mod DIES (gfx950's XCDs,
    //    each with its own L2), so workgroup b starts at
    //    (b mod DIES) x (grid / DIES) + b / DIES: each die's workgroups hold
    //    one contiguous band of the order in every round;
    //  - the order (here) walks TILE_GROUP_M tile rows column by column, so
    //    a band is a block of tiles, about as many weight rows as hidden
    //    rows high (the planner's choice of height), not one long row.
    // Needs ${PERSISTENT} ${TILE_GROUP_M} ${TILES_N}.

    // Tile t's column and row of tiles: (block x, block y) without
    // PERSISTENT. Groups of TILE_GROUP_M tile rows (the last group what is
    // left), each walked column by column.
    func.func private @tile_at(%t: index, %bx: index, %by: index, %tiles_m: index) -> (index, index) {
      %persistent = arith.constant ${PERSISTENT}
      %r:2 = scf.if %persistent -> (index, index) {
        %group_m = arith.constant ${TILE_GROUP_M} : index
        %tiles_n = arith.constant ${TILES_N} : index
        %group_size = arith.muli %group_m, %tiles_n : index
        %group = arith.divui %t, %group_size : index
        %first_m = arith.muli %group, %group_m : index
        %rows_left = arith.subi %tiles_m, %first_m : index
        %rows = arith.minui %rows_left, %group_m : index
        %in_group = arith.remui %t, %group_size : index
        %row_in = arith.remui %in_group, %rows : index
        %col = arith.divui %in_group, %rows : index
        %row = arith.addi %first_m, %row_in : index
        scf.yield %col, %row : index, index
      } else {
        scf.yield %bx, %by : index, index
      }
      return %r#0, %r#1 : index, index
    }

