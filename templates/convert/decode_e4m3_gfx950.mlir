// kind: snippet
    // Four OCP e4m3 bytes to fp32, exactly: v_cvt_pk_f32_fp8 converts the low
    // or the high two bytes of a dword (gfx950 reads them as OCP e4m3;
    // gfx942's same instruction reads fnuz, so the contract refuses gfx942).
    func.func private @decode_e4m3x4(%x: vector<4xi8>) -> vector<4xf32> {
      %lo_sel = llvm.mlir.constant(false) : i1
      %hi_sel = llvm.mlir.constant(true) : i1
      %d = vector.bitcast %x : vector<4xi8> to vector<1xi32>
      %i = vector.extract %d[0] : i32 from vector<1xi32>
      %lo = llvm.call_intrinsic "llvm.amdgcn.cvt.pk.f32.fp8"(%i, %lo_sel) : (i32, i1) -> vector<2xf32>
      %hi = llvm.call_intrinsic "llvm.amdgcn.cvt.pk.f32.fp8"(%i, %hi_sel) : (i32, i1) -> vector<2xf32>
      %r = vector.shuffle %lo, %hi [0, 1, 2, 3] : vector<2xf32>, vector<2xf32>
      return %r : vector<4xf32>
    }
