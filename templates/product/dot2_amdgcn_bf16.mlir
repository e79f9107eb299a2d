// kind: snippet
    // acc + a . b on the bf16 pair directly, fp32 accumulate: v_dot2c_f32_bf16
    // on gfx950 (no conversion instructions; the seed kernel's inner op).
    func.func private @dot2(%a: vector<2xbf16>, %b: vector<2xbf16>, %acc: f32) -> f32 {
      %clamp = llvm.mlir.constant(false) : i1
      %r = llvm.call_intrinsic "llvm.amdgcn.fdot2.f32.bf16"(%a, %b, %acc, %clamp)
          : (vector<2xbf16>, vector<2xbf16>, f32, i1) -> f32
      return %r : f32
    }
