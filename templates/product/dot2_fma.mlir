// kind: snippet
// param T: the contract's element type: hidden, attn and the gated value (bf16 | f16 | f32)
    // acc + a[0] * b[0] + a[1] * b[1] as two fp32 FMAs (any target).
    func.func private @dot2(%a: vector<2x${T}>, %b: vector<2x${T}>, %acc: f32) -> f32 {
      %af = arith.extf %a : vector<2x${T}> to vector<2xf32>
      %bf = arith.extf %b : vector<2x${T}> to vector<2xf32>
      %a0 = vector.extract %af[0] : f32 from vector<2xf32>
      %b0 = vector.extract %bf[0] : f32 from vector<2xf32>
      %a1 = vector.extract %af[1] : f32 from vector<2xf32>
      %b1 = vector.extract %bf[1] : f32 from vector<2xf32>
      %s0 = llvm.call_intrinsic "llvm.fma.f32"(%a0, %b0, %acc) : (f32, f32, f32) -> f32
      %s1 = llvm.call_intrinsic "llvm.fma.f32"(%a1, %b1, %s0) : (f32, f32, f32) -> f32
      return %s1 : f32
    }
