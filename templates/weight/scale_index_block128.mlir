// kind: snippet
    // Where the scale of weight element (col, k) is: one per 128 x 128 block,
    // row-major over ceil(N/128) x ceil(K/128) (scale_kb = ceil(K/128)).
    func.func private @scale_index(%col: index, %k: index, %scale_kb: index) -> index {
      %block = arith.constant 128 : index
      %nb = arith.divui %col, %block : index
      %kb = arith.divui %k, %block : index
      %row = arith.muli %nb, %scale_kb : index
      %at = arith.addi %row, %kb : index
      return %at : index
    }
