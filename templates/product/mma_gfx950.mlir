// kind: snippet
// param T: the contract's element type: hidden, attn and the gated value (bf16 | f16 | f32)
    // gfx950 fragments of v_mfma_f32_16x16x32_{bf16,f16} (CDNA4 ISA;
    // compiler/src/mma_layout.cpp): A = hidden tile (16 rows x 32 K), B =
    // weight tile transposed (32 K x 16 weight rows), C = 16 hidden rows x 16
    // weight rows. Lane l works on row / column l % 16 and K block l / 16: it
    // loads K elements [8 (l / 16), +8) of weight row l % 16 and of hidden row
    // l % 16, which are exactly its A and B fragments (no permutation needed).
    func.func private @lane_w_row(%lane: index) -> index {
      %c16 = arith.constant 16 : index
      %r = arith.remui %lane, %c16 : index
      return %r : index
    }
    func.func private @lane_h_row(%lane: index) -> index {
      %c16 = arith.constant 16 : index
      %r = arith.remui %lane, %c16 : index
      return %r : index
    }
    func.func private @lane_k(%lane: index) -> index {
      %c8 = arith.constant 8 : index
      %c16 = arith.constant 16 : index
      %b = arith.divui %lane, %c16 : index
      %k = arith.muli %b, %c8 : index
      return %k : index
    }
    // Accumulator element i: hidden row 4 (l / 16) + i, weight row l % 16.
    func.func private @lane_c_h(%lane: index, %i: index) -> index {
      %c4 = arith.constant 4 : index
      %c16 = arith.constant 16 : index
      %b = arith.divui %lane, %c16 : index
      %b4 = arith.muli %b, %c4 : index
      %r = arith.addi %b4, %i : index
      return %r : index
    }
    func.func private @lane_c_w(%lane: index, %i: index) -> index {
      %c16 = arith.constant 16 : index
      %r = arith.remui %lane, %c16 : index
      return %r : index
    }
    func.func private @mma_step(%w: vector<8x${T}>, %h: vector<1x8x${T}>, %acc: vector<4xf32>) -> vector<4xf32> {
      %h0 = vector.extract %h[0] : vector<8x${T}> from vector<1x8x${T}>
      %d = amdgpu.mfma 16x16x32 %h0 * %w + %acc blgp = none : vector<8x${T}>, vector<8x${T}>, vector<4xf32>
      return %d : vector<4xf32>
    }
