// kind: snippet
    // sigmoid(x) = 1 / (1 + exp(-x)), in the overflow-free form:
    // e = 2^(-|x| log2 e); sigmoid = x >= 0 ? 1 / (1 + e) : e / (1 + e).
    // exp2 is a native instruction on both targets (v_exp_f32, ex2.approx.f32).
    // LLVM intrinsics are called by name: the gpu-to-rocdl/nvvm conversions
    // would otherwise turn llvm.intr.exp2/fabs into device-library calls.
    func.func private @sigmoid(%x: f32) -> f32 {
      %one = arith.constant 1.0 : f32
      %zero = arith.constant 0.0 : f32
      %neg_log2e = arith.constant -1.44269504088896340736 : f32
      %ax = llvm.call_intrinsic "llvm.fabs.f32"(%x) : (f32) -> f32
      %t = arith.mulf %ax, %neg_log2e : f32
      %e = llvm.call_intrinsic "llvm.exp2.f32"(%t) : (f32) -> f32
      %den = arith.addf %one, %e : f32
      %pos = arith.divf %one, %den : f32
      %neg = arith.divf %e, %den : f32
      %nonneg = arith.cmpf oge, %x, %zero : f32
      %s = arith.select %nonneg, %pos, %neg : f32
      return %s : f32
    }
