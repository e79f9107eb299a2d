// kind: snippet
// param WS_TILES: arrival counters of the K split (1 without a split)
// param SPLITS: workgroups that split the K range of a tile (grid z)
    // The arrival of a K-split meeting (mma, mma_tiled): once every thread
    // has stored its partials, they are made visible device-wide (release)
    // and thread 0 counts the block in for row tile `tile`. Returns, to
    // every thread, whether this block arrived last; the last block fences
    // again (acquire) before it reads the others' partials, and then calls
    // @split_reset. Needs ${WS_TILES} ${SPLITS} and @fence_device.
    func.func private @split_arrive(%arrivals: memref<${WS_TILES}xi32, #gpu.address_space<global>>,
                                    %flag: memref<1xi32, #gpu.address_space<workgroup>>,
                                    %tile: index, %tid: index) -> i1 {
      %c0 = arith.constant 0 : index
      %one = arith.constant 1 : i32
      %zero = arith.constant 0 : i32
      %splits = arith.constant ${SPLITS} : i32
      %last_arrival = arith.subi %splits, %one : i32
      func.call @fence_device() : () -> ()
      gpu.barrier
      %first = arith.cmpi eq, %tid, %c0 : index
      scf.if %first {
        %before = memref.atomic_rmw addi %one, %arrivals[%tile] : (i32, memref<${WS_TILES}xi32, #gpu.address_space<global>>) -> i32
        %is_last = arith.cmpi eq, %before, %last_arrival : i32
        %v = arith.select %is_last, %one, %zero : i32
        memref.store %v, %flag[%c0] : memref<1xi32, #gpu.address_space<workgroup>>
      }
      gpu.barrier
      %f = memref.load %flag[%c0] : memref<1xi32, #gpu.address_space<workgroup>>
      %last = arith.cmpi ne, %f, %zero : i32
      return %last : i1
    }

    // The last block, done with the partials: the counter ready for the
    // next launch (no other block of this launch touches it again).
    func.func private @split_reset(%arrivals: memref<${WS_TILES}xi32, #gpu.address_space<global>>, %tile: index,
                                   %tid: index) {
      %c0 = arith.constant 0 : index
      %zero = arith.constant 0 : i32
      %first = arith.cmpi eq, %tid, %c0 : index
      scf.if %first {
        memref.store %zero, %arrivals[%tile] : memref<${WS_TILES}xi32, #gpu.address_space<global>>
      }
      return
    }
