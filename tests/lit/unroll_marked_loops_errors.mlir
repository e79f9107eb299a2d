// RUN: gatejit-opt %s --gatejit-unroll-marked-loops --verify-diagnostics

// A marked loop whose trip count is not a constant is an error, not a loop
// left rolled (its accumulator indices would stay dynamic).
func.func @dynamic_bound(%n: index, %v: vector<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{gatejit.unroll: loop could not be fully unrolled (needs a constant trip count)}}
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> f32 {
    %e = vector.extract %v[%i] : f32 from vector<4xf32>
    %r = arith.addf %acc, %e : f32
    scf.yield %r : f32
  } {gatejit.unroll}
  return %s : f32
}
