// RUN: gatejit-opt %s --gatejit-mark-tensor-map-args --split-input-file | FileCheck %s

// The last N generic-pointer arguments become 128-byte by-value grid
// constants, 64-byte aligned; the marker attribute is consumed; the others
// are untouched.
// CHECK-LABEL: llvm.func @two_maps
// CHECK-SAME: (%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant}, %{{.*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant})
// CHECK-NOT: gatejit.tensor_maps
llvm.func @two_maps(%a: !llvm.ptr<1>, %w: !llvm.ptr, %h: !llvm.ptr) attributes {gatejit.tensor_maps = 2 : i64} {
  llvm.return
}

// -----

// No marker: nothing changes.
// CHECK-LABEL: llvm.func @no_maps
// CHECK-SAME: (%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// CHECK-NOT: byval
llvm.func @no_maps(%a: !llvm.ptr, %b: !llvm.ptr) {
  llvm.return
}
