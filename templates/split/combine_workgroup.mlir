// kind: snippet
// param PARTIALS: floats of the workgroup's partial sums of a K split
// param ROWS: weight rows (output columns) a wave owns
// param M_MAX: rows of hidden the kernel is specialised for (M <= M_MAX)
// param KSPLIT: waves that split the K range of one column group
    // KSPLIT waves per column group: each wave's lane 0 writes its sum for
    // accumulator `slot` to workgroup memory; after a barrier every wave reads
    // the group's KSPLIT sums back, always in the same order (deterministic).
    memref.global "private" @gatejit_partials : memref<${PARTIALS}xf32, #gpu.address_space<workgroup>>
    func.func private @combine_partials(%dot: f32, %slot: index, %wave_id: index, %group: index, %lane: index) -> f32 {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %rows = arith.constant ${ROWS} : index
      %mmax = arith.constant ${M_MAX} : index
      %acc = arith.muli %rows, %mmax : index  // accumulators a lane keeps
      %ksplit = arith.constant ${KSPLIT} : index
      %zero = arith.constant 0.0 : f32
      %buf = memref.get_global @gatejit_partials : memref<${PARTIALS}xf32, #gpu.address_space<workgroup>>
      %mine = arith.muli %wave_id, %acc : index
      %mine_slot = arith.addi %mine, %slot : index
      %first = arith.cmpi eq, %lane, %c0 : index
      scf.if %first {
        memref.store %dot, %buf[%mine_slot] : memref<${PARTIALS}xf32, #gpu.address_space<workgroup>>
      }
      gpu.barrier
      %w0 = arith.muli %group, %ksplit : index
      %sum = scf.for %s = %c0 to %ksplit step %c1 iter_args(%a = %zero) -> (f32) {
        %w = arith.addi %w0, %s : index
        %base = arith.muli %w, %acc : index
        %idx = arith.addi %base, %slot : index
        %x = memref.load %buf[%idx] : memref<${PARTIALS}xf32, #gpu.address_space<workgroup>>
        %a2 = arith.addf %a, %x : f32
        scf.yield %a2 : f32
      } {gatejit.unroll}
      return %sum : f32
    }
