// kind: snippet
// param VEC: elements of a 16-byte weight vector (hidden: as many)
// param T_WEIGHT: the weight's storage type (the 16-bit type, or i8 for e4m3)
// param SCALE_PARAM: the weight snippets' scale parameters: the scales and their K blocks (empty for 16-bit weights)
// param PAIRS: element pairs of a 16-byte vector: VEC / 2
// param T_DOT: what @weight_pairs gives @dot2: T_WEIGHT, or f32 for a decoded e4m3 weight
    // A 16-byte weight vector of 16-bit elements, as the dot snippet's pairs:
    // the storage type itself (the dot converts, or multiplies it as it is).
    func.func private @weight_pairs(%w: vector<${VEC}x${T_WEIGHT}>, %col: index, %k0: index${SCALE_PARAM})
        -> vector<${PAIRS}x2x${T_DOT}> {
      %p = vector.shape_cast %w : vector<${VEC}x${T_WEIGHT}> to vector<${PAIRS}x2x${T_DOT}>
      return %p : vector<${PAIRS}x2x${T_DOT}>
    }
