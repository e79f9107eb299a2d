// kind: snippet
// param T_HIDDEN: the element type of hidden (bf16 | f16)
    // acc + a[0] * b[0] + a[1] * b[1]: a decoded (fp32) weight pair and a
    // 16-bit hidden pair, two fp32 FMAs (any target).
    func.func private @dot2(%a: vector<2xf32>, %b: vector<2x${T_HIDDEN}>, %acc: f32) -> f32 {
      %bf = arith.extf %b : vector<2x${T_HIDDEN}> to vector<2xf32>
      %a0 = vector.extract %a[0] : f32 from vector<2xf32>
      %b0 = vector.extract %bf[0] : f32 from vector<2xf32>
      %a1 = vector.extract %a[1] : f32 from vector<2xf32>
      %b1 = vector.extract %bf[1] : f32 from vector<2xf32>
      %s0 = llvm.call_intrinsic "llvm.fma.f32"(%a0, %b0, %acc) : (f32, f32, f32) -> f32
      %s1 = llvm.call_intrinsic "llvm.fma.f32"(%a1, %b1, %s0) : (f32, f32, f32) -> f32
      return %s1 : f32
    }
