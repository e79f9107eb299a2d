// gemv: the decode-path template (M <= 16). One wave per output column n
// (a row of weight); each lane streams 16-byte vectors of that row, keeps one
// fp32 accumulator vector per hidden row, and the wave reduces them with
// cross-lane operations (gpu.subgroup_reduce: DPP on AMD, shuffles on NVIDIA).
// Lane m then applies the epilogue for output row m. The weight is read once.
//
// Parameters (filled by the generator, see compiler/src/kernel_params.cpp):
//   ${T}            element type (bf16 | f16)
//   ${WAVE}         wave/warp size (64 on gfx9xx, 32 on sm_90)
//   ${WAVES}        waves per workgroup; one output column per wave
//   ${BLOCK}        WAVE * WAVES
//   ${VEC}          elements per 16-byte vector
//   ${M_MAX}        rows of hidden the kernel is specialised for (M <= M_MAX)
//   ${N} ${K}       problem size
//   ${KVECS}        K / VEC
//   ${K_FULL}       KVECS / WAVE: loop trips in which every lane has a vector
//   ${K_ITERS}      ceil(KVECS / WAVE)
//   ${LDH} ${LDW} ${LDA} ${LDO}   leading dimensions (elements)
//   ${H_SIZE} ${W_SIZE} ${A_SIZE} ${O_SIZE}  extent of each buffer (elements)
//   ${SYMBOL}       kernel symbol
module attributes {gpu.container_module} {
  gpu.module @gatejit {
    gpu.func @${SYMBOL}(%hidden: memref<${H_SIZE}x${T}, #gpu.address_space<global>>,
                        %weight: memref<${W_SIZE}x${T}, #gpu.address_space<global>>,
                        %attn: memref<${A_SIZE}x${T}, #gpu.address_space<global>>,
                        %out: memref<${O_SIZE}x${T}, #gpu.address_space<global>>,
                        %m_actual: i64, %n_actual: i64, %k_actual: i64,
                        %ldh_actual: i64, %ldw_actual: i64, %lda_actual: i64, %ldo_actual: i64)
        kernel attributes {known_block_size = array<i32: ${BLOCK}, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %vec = arith.constant ${VEC} : index
      %wave = arith.constant ${WAVE} : index
      %waves = arith.constant ${WAVES} : index
      %n = arith.constant ${N} : index
      %nlast = arith.constant ${N_LAST} : index
      %kvecs = arith.constant ${KVECS} : index
      %kfull = arith.constant ${K_FULL} : index
      %kiters = arith.constant ${K_ITERS} : index
      %ldh = arith.constant ${LDH} : index
      %ldw = arith.constant ${LDW} : index
      %lda = arith.constant ${LDA} : index
      %ldo = arith.constant ${LDO} : index
      %m_i = arith.index_cast %m_actual : i64 to index
      %mlast = arith.subi %m_i, %c1 : index
      %zero = arith.constant dense<0.0> : vector<${M_MAX}x${VEC}xf32>

      %tid = gpu.thread_id x
      %bid = gpu.block_id x
      %lane = arith.remui %tid, %wave : index
      %wave_id = arith.divui %tid, %wave : index
      %col_base = arith.muli %bid, %waves : index
      %col = arith.addi %col_base, %wave_id : index
      // Waves past N read the last row (in bounds) and store nothing, so every
      // wave reaches the cross-lane reduction with all lanes active.
      %col_ld = arith.minui %col, %nlast : index
      %w_row = arith.muli %col_ld, %ldw : index

      // Accumulate one 16-byte vector chunk at chunk index %v.
      %acc_main = scf.for %it = %c0 to %kfull step %c1 iter_args(%acc = %zero) -> (vector<${M_MAX}x${VEC}xf32>) {
        %v_base = arith.muli %it, %wave : index
        %v = arith.addi %v_base, %lane : index
        %k0 = arith.muli %v, %vec : index
        %acc_next = func.call @accumulate_chunk(%hidden, %weight, %acc, %w_row, %k0, %mlast)
            : (memref<${H_SIZE}x${T}, #gpu.address_space<global>>, memref<${W_SIZE}x${T}, #gpu.address_space<global>>,
               vector<${M_MAX}x${VEC}xf32>, index, index, index) -> vector<${M_MAX}x${VEC}xf32>
        scf.yield %acc_next : vector<${M_MAX}x${VEC}xf32>
      }
      // Tail: the last, partial trip (no trips when KVECS is a multiple of WAVE).
      %acc_all = scf.for %it = %kfull to %kiters step %c1 iter_args(%acc = %acc_main) -> (vector<${M_MAX}x${VEC}xf32>) {
        %v_base = arith.muli %it, %wave : index
        %v = arith.addi %v_base, %lane : index
        %in = arith.cmpi ult, %v, %kvecs : index
        %acc_next = scf.if %in -> (vector<${M_MAX}x${VEC}xf32>) {
          %k0 = arith.muli %v, %vec : index
          %r = func.call @accumulate_chunk(%hidden, %weight, %acc, %w_row, %k0, %mlast)
              : (memref<${H_SIZE}x${T}, #gpu.address_space<global>>, memref<${W_SIZE}x${T}, #gpu.address_space<global>>,
                 vector<${M_MAX}x${VEC}xf32>, index, index, index) -> vector<${M_MAX}x${VEC}xf32>
          scf.yield %r : vector<${M_MAX}x${VEC}xf32>
        } else {
          scf.yield %acc : vector<${M_MAX}x${VEC}xf32>
        }
        scf.yield %acc_next : vector<${M_MAX}x${VEC}xf32>
      }

      %col_ok = arith.cmpi ult, %col, %n : index
      %mmax = arith.constant ${M_MAX} : index
      scf.for %m = %c0 to %mmax step %c1 {
        %row = vector.extract %acc_all[%m] : vector<${VEC}xf32> from vector<${M_MAX}x${VEC}xf32>
        %partial = vector.reduction <add>, %row : vector<${VEC}xf32> into f32
        %dot = gpu.subgroup_reduce add %partial : (f32) -> f32
        // Lane m owns output row m.
        %mine = arith.cmpi eq, %lane, %m : index
        %m_ok = arith.cmpi ult, %m, %m_i : index
        %own = arith.andi %mine, %m_ok : i1
        %go = arith.andi %own, %col_ok : i1
        scf.if %go {
          %a_row = arith.muli %m, %lda : index
          %a_idx = arith.addi %a_row, %col : index
          %o_row = arith.muli %m, %ldo : index
          %o_idx = arith.addi %o_row, %col : index
          %a = memref.load %attn[%a_idx] : memref<${A_SIZE}x${T}, #gpu.address_space<global>>
          %o = func.call @gate_epilogue(%dot, %a) : (f32, ${T}) -> ${T}
          memref.store %o, %out[%o_idx] : memref<${O_SIZE}x${T}, #gpu.address_space<global>>
        }
      } {gatejit.unroll}
      gpu.return
    }

    // acc[m] += hidden[min(m, M-1), k0:k0+VEC] * weight[w_row + k0 : +VEC], m < M_MAX.
    // The clamp keeps loads in bounds for dynamic M; rows m >= M are never stored.
    func.func private @accumulate_chunk(%hidden: memref<${H_SIZE}x${T}, #gpu.address_space<global>>,
                                        %weight: memref<${W_SIZE}x${T}, #gpu.address_space<global>>,
                                        %acc: vector<${M_MAX}x${VEC}xf32>, %w_row: index, %k0: index,
                                        %mlast: index) -> vector<${M_MAX}x${VEC}xf32> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %mmax = arith.constant ${M_MAX} : index
      %ldh = arith.constant ${LDH} : index
      %w_idx = arith.addi %w_row, %k0 : index
      %w = vector.load %weight[%w_idx] {alignment = 16} : memref<${W_SIZE}x${T}, #gpu.address_space<global>>, vector<${VEC}x${T}>
      %wf = arith.extf %w : vector<${VEC}x${T}> to vector<${VEC}xf32>
      %r = scf.for %m = %c0 to %mmax step %c1 iter_args(%a = %acc) -> (vector<${M_MAX}x${VEC}xf32>) {
        %hm = arith.minui %m, %mlast : index
        %h_row = arith.muli %hm, %ldh : index
        %h_idx = arith.addi %h_row, %k0 : index
        %h = vector.load %hidden[%h_idx] {alignment = 16} : memref<${H_SIZE}x${T}, #gpu.address_space<global>>, vector<${VEC}x${T}>
        %hf = arith.extf %h : vector<${VEC}x${T}> to vector<${VEC}xf32>
        %am = vector.extract %a[%m] : vector<${VEC}xf32> from vector<${M_MAX}x${VEC}xf32>
        %sum = vector.fma %wf, %hf, %am : vector<${VEC}xf32>
        %a2 = vector.insert %sum, %a[%m] : vector<${VEC}xf32> into vector<${M_MAX}x${VEC}xf32>
        scf.yield %a2 : vector<${M_MAX}x${VEC}xf32>
      } {gatejit.unroll}
      return %r : vector<${M_MAX}x${VEC}xf32>
    }

${EPILOGUE}
  }
}
