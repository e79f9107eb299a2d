// kind: snippet
    // acc + a . b on the f16 pair directly, fp32 accumulate: v_dot2_f32_f16.
    func.func private @dot2(%a: vector<2xf16>, %b: vector<2xf16>, %acc: f32) -> f32 {
      %clamp = llvm.mlir.constant(false) : i1
      %r = llvm.call_intrinsic "llvm.amdgcn.fdot2"(%a, %b, %acc, %clamp)
          : (vector<2xf16>, vector<2xf16>, f32, i1) -> f32
      return %r : f32
    }
