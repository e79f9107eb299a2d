// kind: snippet
    // Marks the code of the epilogue's element-wise fallback (the path a
    // launch with attn and out on 16 bytes never takes): a PTX comment,
    // which the code facts read and ptxas ignores. The code facts leave
    // what only this path runs out of the tail's round trips
    // (code_facts.cpp), so the model charges the staged path aligned
    // launches run.
    func.func private @element_wise_fallback() {
      llvm.inline_asm has_side_effects "// gatejit.element_wise_fallback", "" : () -> ()
      return
    }
