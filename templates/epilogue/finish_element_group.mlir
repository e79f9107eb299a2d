// kind: snippet
// param BLOCK: threads a workgroup
// param WAVE: lanes a wave (64 on gfx9, 32 on sm_90)
// param BLOCK_WAVES: waves a workgroup
// param GROUP_WAVES: waves a group of 128 columns spans: 128 / WAVE
// param SPAN: the generic kernel's nominal extent of every buffer (sizes come at launch)
// param T: the contract's element type: hidden, attn and the gated value (bf16 | f16 | f32)
// param T_OUT: the element type of out (T, or i8 for an fp8 out)
// param KERNEL_OUT_SCALE_PARAM: the fp8 out's scales as the kernel's last argument (empty otherwise)
    // The generic template's epilogue entry points for an fp8 out, per token
    // group of 128 columns: a workgroup is BLOCK consecutive columns of one
    // row (BLOCK a multiple of 128, N one too: each group lies in one
    // workgroup, wholly inside N or wholly past it). @finish_element keeps
    // the thread's gated value in workgroup memory; @finish_elements (every
    // thread) takes each group's maximum of |y| (a wave's by a subgroup
    // reduction, the group's over its 128 / WAVE waves), writes the scale
    // and quantises.
    //   ${BLOCK} ${WAVE} ${BLOCK_WAVES} (BLOCK / WAVE) ${GROUP_WAVES} (128 / WAVE) ${SPAN}
    memref.global "private" @gatejit_generic_gated : memref<${BLOCK}x${T}, #gpu.address_space<workgroup>>
    memref.global "private" @gatejit_generic_wave_max : memref<${BLOCK_WAVES}xi32, #gpu.address_space<workgroup>>
    func.func private @finish_element(%out: memref<${SPAN}x${T_OUT}, #gpu.address_space<global>>, %o: ${T},
                                      %o_idx: index, %tid: index) {
      %gated = memref.get_global @gatejit_generic_gated : memref<${BLOCK}x${T}, #gpu.address_space<workgroup>>
      memref.store %o, %gated[%tid] : memref<${BLOCK}x${T}, #gpu.address_space<workgroup>>
      return
    }
    func.func private @finish_elements(%out: memref<${SPAN}x${T_OUT}, #gpu.address_space<global>>, %tid: index,
                                       %ok: i1, %o_idx: index, %row: index, %col: index, %n: index${KERNEL_OUT_SCALE_PARAM}) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c128 = arith.constant 128 : index
      %wave = arith.constant ${WAVE} : index
      %group_waves = arith.constant ${GROUP_WAVES} : index
      %gated = memref.get_global @gatejit_generic_gated : memref<${BLOCK}x${T}, #gpu.address_space<workgroup>>
      %wave_max = memref.get_global @gatejit_generic_wave_max : memref<${BLOCK_WAVES}xi32, #gpu.address_space<workgroup>>
      gpu.barrier
      // Threads past N or M stored nothing: their whole group is past it and
      // is never stored, so what they read does not matter.
      %y = memref.load %gated[%tid] : memref<${BLOCK}x${T}, #gpu.address_space<workgroup>>
      %yf = func.call @to_f32(%y) : (${T}) -> f32
      // The maximum on the bits (|y| >= 0 orders as its bit pattern; NaN
      // wins): float max would become a device-library call on NVVM.
      %ya = llvm.call_intrinsic "llvm.fabs.f32"(%yf) : (f32) -> f32
      %yb = arith.bitcast %ya : f32 to i32
      %wmax = gpu.subgroup_reduce maxui %yb : (i32) -> i32
      %lane = arith.remui %tid, %wave : index
      %w = arith.divui %tid, %wave : index
      %lead = arith.cmpi eq, %lane, %c0 : index
      scf.if %lead {
        memref.store %wmax, %wave_max[%w] : memref<${BLOCK_WAVES}xi32, #gpu.address_space<workgroup>>
      }
      gpu.barrier
      %g = arith.divui %tid, %c128 : index
      %w0 = arith.muli %g, %group_waves : index
      %zero_i = arith.constant 0 : i32
      %amax_bits = scf.for %i = %c0 to %group_waves step %c1 iter_args(%m = %zero_i) -> (i32) {
        %wi = arith.addi %w0, %i : index
        %x = memref.load %wave_max[%wi] : memref<${BLOCK_WAVES}xi32, #gpu.address_space<workgroup>>
        %m2 = arith.maxui %m, %x : i32
        scf.yield %m2 : i32
      } {gatejit.unroll}
      %amax = arith.bitcast %amax_bits : i32 to f32
      %s = func.call @group_scale(%amax) : (f32) -> f32
      scf.if %ok {
        %q = func.call @quantise_e4m3(%yf, %s) : (f32, f32) -> i8
        memref.store %q, %out[%o_idx] : memref<${SPAN}x${T_OUT}, #gpu.address_space<global>>
        %in_group = arith.remui %col, %c128 : index
        %group_lead = arith.cmpi eq, %in_group, %c0 : index
        scf.if %group_lead {
          %groups = arith.divui %n, %c128 : index
          %os_row = arith.muli %row, %groups : index
          %gcol = arith.divui %col, %c128 : index
          %os_idx = arith.addi %os_row, %gcol : index
          memref.store %s, %out_scale[%os_idx] : memref<${SPAN}xf32, #gpu.address_space<global>>
        }
      }
      return
    }
