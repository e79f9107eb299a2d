    // The finished sums as they are: no weight scale, or one applied per
    // step already (block128).
    func.func private @scale_sums(%dots: vector<${VW}xf32>, %col: index${SCALE_PARAM}) -> vector<${VW}xf32> {
      return %dots : vector<${VW}xf32>
    }
