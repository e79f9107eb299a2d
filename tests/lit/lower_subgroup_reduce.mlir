// RUN: gatejit-opt %s --gatejit-lower-subgroup-reduce-gfx950 | FileCheck %s --check-prefix=AMD
// RUN: gatejit-opt %s --gatejit-lower-subgroup-reduce-nvvm | FileCheck %s --check-prefix=NV

// A wave64 f32 sum: DPP row shifts and broadcasts on gfx950 (no shuffles);
// a 32-lane butterfly of five xor shuffles on sm_90.
// AMD-LABEL: func.func @sum
// AMD-NOT: gpu.shuffle
// AMD: amdgpu.dpp {{.*}} quad_perm([1 : i32, 0 : i32, 3 : i32, 2 : i32])
// AMD: amdgpu.dpp {{.*}} quad_perm([2 : i32, 3 : i32, 0 : i32, 1 : i32])
// AMD: amdgpu.dpp {{.*}} row_half_mirror
// AMD: amdgpu.dpp {{.*}} row_mirror
// AMD: amdgpu.dpp {{.*}} row_bcast_15(unit) {row_mask = 10 : i32}
// AMD: amdgpu.dpp {{.*}} row_bcast_31
// AMD: rocdl.readlane %{{.*}}, %c63_i32
// AMD-NOT: gpu.subgroup_reduce
// AMD: return
// NV-LABEL: func.func @sum
// NV-NOT: gpu.subgroup_reduce
// NV-COUNT-5: gpu.shuffle xor
// NV-NOT: gpu.shuffle
// NV: return
func.func @sum(%x: f32) -> f32 {
  %r = gpu.subgroup_reduce add %x : (f32) -> f32
  return %r : f32
}

// A clustered reduction (groups of 16 lanes) on gfx950 stays DPP within rows.
// AMD-LABEL: func.func @clustered
// AMD-COUNT-4: amdgpu.dpp
// AMD-NOT: row_bcast
// AMD-NOT: gpu.subgroup_reduce
// AMD: return
// NV-LABEL: func.func @clustered
// NV-COUNT-4: gpu.shuffle xor
// NV-NOT: gpu.shuffle
func.func @clustered(%x: f32) -> f32 {
  %r = gpu.subgroup_reduce add %x cluster(size = 16) : (f32) -> f32
  return %r : f32
}
