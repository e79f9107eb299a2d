// RUN: gatejit-opt %s --gatejit-unroll-marked-loops --canonicalize | FileCheck %s

// A marked loop with a constant trip count is gone, its body repeated with
// constant indices; an unmarked loop stays.
// CHECK-LABEL: func.func @marked
// CHECK-NOT: scf.for
// CHECK: vector.extract %{{.*}}[0]
// CHECK: vector.extract %{{.*}}[1]
// CHECK: vector.extract %{{.*}}[2]
// CHECK-NOT: scf.for
// CHECK: return
func.func @marked(%v: vector<3xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f32
  %s = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %zero) -> f32 {
    %e = vector.extract %v[%i] : f32 from vector<3xf32>
    %n = arith.addf %acc, %e : f32
    scf.yield %n : f32
  } {gatejit.unroll}
  return %s : f32
}

// CHECK-LABEL: func.func @unmarked
// CHECK: scf.for
func.func @unmarked(%v: vector<3xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f32
  %s = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %zero) -> f32 {
    %e = vector.extract %v[%i] : f32 from vector<3xf32>
    %n = arith.addf %acc, %e : f32
    scf.yield %n : f32
  }
  return %s : f32
}

// Nested marked loops: both unrolled (inner first).
// CHECK-LABEL: func.func @nested
// CHECK-NOT: scf.for
// CHECK: %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NOT: scf.for
// CHECK: arith.addi %{{.*}}, %[[TWO]]
// CHECK-NEXT: return
func.func @nested(%x: index) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%a = %x) -> index {
    %q = scf.for %j = %c0 to %c2 step %c1 iter_args(%b = %a) -> index {
      %n = arith.addi %b, %j : index
      scf.yield %n : index
    } {gatejit.unroll}
    scf.yield %q : index
  } {gatejit.unroll}
  return %r : index
}
