// kind: snippet
    // fp32 -> OCP e4m3 ("e4m3fn"), rounding to nearest even, for |x| <= 448
    // (callers clamp first) and NaN (0x7f with the sign). Normal results
    // rebias the exponent (127 -> 7) and drop 20 mantissa bits with ties to
    // even; a carry moves into the exponent as it should. Below 2^-6 the
    // code is the count of 2^-9 quanta, rounded to even (8 quanta is 0x08,
    // the smallest normal). The sign is the input's, -0 included.
    func.func private @encode_e4m3(%x: f32) -> i8 {
      %bits = arith.bitcast %x : f32 to i32
      %c24 = arith.constant 24 : i32
      %c20 = arith.constant 20 : i32
      %sign_mask = arith.constant 128 : i32
      %mag_mask = arith.constant 2147483647 : i32
      %rebias = arith.constant 1006632960 : i32  // 120 << 23
      %half_minus = arith.constant 524287 : i32  // 2^19 - 1
      %one = arith.constant 1 : i32
      %nan_code = arith.constant 127 : i32
      %quanta = arith.constant 512.0 : f32
      %min_normal = arith.constant 0.015625 : f32
      %hi = arith.shrui %bits, %c24 : i32
      %sign = arith.andi %hi, %sign_mask : i32
      %mag = arith.andi %bits, %mag_mask : i32
      %v = arith.subi %mag, %rebias : i32
      %kept = arith.shrui %v, %c20 : i32
      %lsb = arith.andi %kept, %one : i32
      %bias = arith.addi %half_minus, %lsb : i32
      %rounded = arith.addi %v, %bias : i32
      %normal = arith.shrui %rounded, %c20 : i32
      %ax = llvm.call_intrinsic "llvm.fabs.f32"(%x) : (f32) -> f32
      %scaled = arith.mulf %ax, %quanta : f32
      %count_f = llvm.call_intrinsic "llvm.roundeven.f32"(%scaled) : (f32) -> f32
      %count = arith.fptoui %count_f : f32 to i32
      %tiny = arith.cmpf olt, %ax, %min_normal : f32
      %code = arith.select %tiny, %count, %normal : i32
      %nan = arith.cmpf uno, %x, %x : f32
      %code_n = arith.select %nan, %nan_code, %code : i32
      %byte = arith.ori %code_n, %sign : i32
      %b = arith.trunci %byte : i32 to i8
      return %b : i8
    }

    // One element of an fp8 out from its gated value y (fp32, exact) and its
    // group's scale s: e4m3(clamp(y / s, -448, 448)), IEEE division.
    func.func private @quantise_e4m3(%y: f32, %s: f32) -> i8 {
      %max = arith.constant 448.0 : f32
      %min = arith.constant -448.0 : f32
      %q = arith.divf %y, %s : f32
      %q_hi = arith.minimumf %q, %max : f32
      %q_c = arith.maximumf %q_hi, %min : f32
      %b = func.call @encode_e4m3(%q_c) : (f32) -> i8
      return %b : i8
    }

    // A group's scale from its largest |y|: max(amax, 1e-10) / 448 (a
    // select: float max would become a device-library call on NVVM).
    func.func private @group_scale(%amax: f32) -> f32 {
      %eps = arith.constant 1.0e-10 : f32
      %max = arith.constant 448.0 : f32
      %small = arith.cmpf olt, %amax, %eps : f32
      %a = arith.select %small, %eps, %amax : f32
      %s = arith.divf %a, %max : f32
      return %s : f32
    }
