// kind: snippet
// param VW: outputs of an epilogue piece: consecutive columns of one row
// param SCALE_PARAM: the weight snippets' scale parameters: the scales and their K blocks (empty for 16-bit weights)
// param N_LAST: N - 1
// param S_SIZE: elements of an fp8 weight's scale memref
    // The epilogue's per-channel weight scale: a piece's VW sums (columns
    // col ..) times their columns' scales in fp32. Columns past N (the last
    // piece of a partial row) read the last column's scale; their outputs
    // are not stored.
    func.func private @scale_sums(%dots: vector<${VW}xf32>, %col: index${SCALE_PARAM}) -> vector<${VW}xf32> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %vw = arith.constant ${VW} : index
      %nlast = arith.constant ${N_LAST} : index
      %zero = arith.constant dense<0.0> : vector<${VW}xf32>
      %s = scf.for %i = %c0 to %vw step %c1 iter_args(%acc = %zero) -> (vector<${VW}xf32>) {
        %c = arith.addi %col, %i : index
        %c_ld = arith.minui %c, %nlast : index
        %x = memref.load %weight_scale[%c_ld] : memref<${S_SIZE}xf32, #gpu.address_space<global>>
        %acc2 = vector.insert %x, %acc[%i] : f32 into vector<${VW}xf32>
        scf.yield %acc2 : vector<${VW}xf32>
      } {gatejit.unroll}
      %r = arith.mulf %dots, %s : vector<${VW}xf32>
      return %r : vector<${VW}xf32>
    }
