// RUN: gatejit-opt %s --gatejit-mark-tensor-map-args --split-input-file --verify-diagnostics

// expected-error @+1 {{gatejit.tensor_maps = 3 but the kernel has 2 arguments}}
llvm.func @too_many(%a: !llvm.ptr, %b: !llvm.ptr) attributes {gatejit.tensor_maps = 3 : i64} {
  llvm.return
}

// -----

// A tensor map must be a generic pointer (address space 0).
// expected-error @+1 {{tensor map argument 1 is not a generic !llvm.ptr}}
llvm.func @global_pointer(%a: !llvm.ptr, %b: !llvm.ptr<1>) attributes {gatejit.tensor_maps = 1 : i64} {
  llvm.return
}
