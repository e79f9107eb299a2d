// kind: snippet
    // Marks the code of the epilogue's element-wise fallback (the path a
    // launch with attn and out on 16 bytes never takes): `s_nop 15`, a no-op
    // LLVM never emits itself (its hazard nops are `s_nop 0`-`s_nop 7`). The
    // code facts leave what only this path runs out of the tail's round trips
    // (code_facts.cpp), so the model charges the staged path aligned launches
    // run. 15 is the largest count the hardware keeps (the immediate's low 4
    // bits: 16 wait states), so LLVM's hazard bookkeeping, which counts the
    // immediate + 1, counts what the hardware waits.
    func.func private @element_wise_fallback() {
      %mark = llvm.mlir.constant(15 : i16) : i16
      llvm.call_intrinsic "llvm.amdgcn.s.nop"(%mark) : (i16) -> ()
      return
    }
