// kind: snippet
    // A hint that the line holding byte address %addr (global memory) is
    // wanted soon: prefetch.global.L2::evict_normal. No register, no wait:
    // the later load of that line hits L2 instead of DRAM.
    func.func private @prefetch_l2(%addr: i64) {
      %p = llvm.inttoptr %addr : i64 to !llvm.ptr<1>
      llvm.call_intrinsic "llvm.nvvm.prefetch.global.L2.evict.normal"(%p) : (!llvm.ptr<1>) -> ()
      return
    }
