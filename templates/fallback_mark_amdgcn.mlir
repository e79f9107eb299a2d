    // Marks the code of the epilogue's element-wise fallback (the path a
    // launch with attn and out on 16 bytes never takes): `s_nop 0x7a7`, a
    // no-op LLVM never emits itself (its hazard nops count 0-15). The code
    // facts leave what only this path runs out of the tail's round trips
    // (code_facts.cpp), so the model charges the staged path aligned
    // launches run.
    func.func private @element_wise_fallback() {
      %mark = llvm.mlir.constant(1959 : i16) : i16
      llvm.call_intrinsic "llvm.amdgcn.s.nop"(%mark) : (i16) -> ()
      return
    }
