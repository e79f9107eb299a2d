// kind: snippet
    // Four OCP e4m3 bytes to fp32, exactly: cvt.rn.f16x2.e4m3x2 (sm_89 on)
    // gives each pair as f16 (every e4m3 value is an f16 value), then f16 to
    // f32.
    func.func private @decode_e4m3x4(%x: vector<4xi8>) -> vector<4xf32> {
      %h = vector.bitcast %x : vector<4xi8> to vector<2xi16>
      %a = vector.extract %h[0] : i16 from vector<2xi16>
      %b = vector.extract %h[1] : i16 from vector<2xi16>
      %fa = llvm.call_intrinsic "llvm.nvvm.e4m3x2.to.f16x2.rn"(%a) : (i16) -> vector<2xf16>
      %fb = llvm.call_intrinsic "llvm.nvvm.e4m3x2.to.f16x2.rn"(%b) : (i16) -> vector<2xf16>
      %f = vector.shuffle %fa, %fb [0, 1, 2, 3] : vector<2xf16>, vector<2xf16>
      %r = arith.extf %f : vector<4xf16> to vector<4xf32>
      return %r : vector<4xf32>
    }
