    // A 16-byte weight vector of 16-bit elements, as the dot snippet's pairs:
    // the storage type itself (the dot converts, or multiplies it as it is).
    func.func private @weight_pairs(%w: vector<${VEC}x${T_WEIGHT}>, %col: index, %k0: index${SCALE_PARAM})
        -> vector<${PAIRS}x2x${T_DOT}> {
      %p = vector.shape_cast %w : vector<${VEC}x${T_WEIGHT}> to vector<${PAIRS}x2x${T_DOT}>
      return %p : vector<${PAIRS}x2x${T_DOT}>
    }
