// kind: snippet
// param SCALE_PARAM: the weight snippets' scale parameters: the scales and their K blocks (empty for 16-bit weights)
// param RT: weight tiles a wave (TILE_W rows each)
    // No scale along K for the mma's steps: a 16-bit weight, or per-channel
    // scales (applied to the finished sums by @scale_sums). Folded away.
    func.func private @step_scales(%wrow0: index, %k_base: index${SCALE_PARAM}) -> vector<${RT}xf32> {
      %none = arith.constant dense<1.0> : vector<${RT}xf32>
      return %none : vector<${RT}xf32>
    }
