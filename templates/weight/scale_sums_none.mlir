// kind: snippet
// param VW: outputs of an epilogue piece: consecutive columns of one row
// param SCALE_PARAM: the weight snippets' scale parameters: the scales and their K blocks (empty for 16-bit weights)
    // The finished sums as they are: no weight scale, or one applied per
    // step already (block128).
    func.func private @scale_sums(%dots: vector<${VW}xf32>, %col: index${SCALE_PARAM}) -> vector<${VW}xf32> {
      return %dots : vector<${VW}xf32>
    }
