// kind: kernel
// param T: the contract's element type: hidden, attn and the gated value (bf16 | f16 | f32)
// param T_OUT: the element type of out (T, or i8 for an fp8 out)
// param KERNEL_OUT_SCALE_PARAM: the fp8 out's scales as the kernel's last argument (empty otherwise)
// param OUT_SCALE_ARG: the out scales passed to the out's entry points (empty otherwise)
// param OUT_SCALE_TYPE: the type of OUT_SCALE_ARG (empty otherwise)
// param T_WEIGHT: the weight's storage type (the 16-bit type, or i8 for e4m3)
// param KERNEL_SCALE_PARAM: the fp8 weight's scales as the kernel's last argument (empty for 16-bit weights)
// param SCALE_ARG: the scale arguments passed to the weight snippets (empty for 16-bit weights)
// param SCALE_TYPE: the types of SCALE_ARG (empty for 16-bit weights)
// param BLOCK: threads a workgroup
// param SPAN: the generic kernel's nominal extent of every buffer (sizes come at launch)
// param SYMBOL: the kernel's symbol
// param EPILOGUE: the snippets the kernel calls, filled in
// generic: the fallback template. Any M, N, K, any leading dimensions and any
// alignment of the element type: every size is a kernel argument, so one
// compiled kernel serves every shape of its (target, dtype, act, rounding).
// One thread per output element (grid: ceil(N / BLOCK) x M), scalar loads,
// fp32 accumulation, the same epilogue as every other template.
module attributes {gpu.container_module} {
  gpu.module @gatejit {
    gpu.func @${SYMBOL}(%hidden: memref<${SPAN}x${T}, #gpu.address_space<global>>,
                        %weight: memref<${SPAN}x${T_WEIGHT}, #gpu.address_space<global>>,
                        %attn: memref<${SPAN}x${T}, #gpu.address_space<global>>,
                        %out: memref<${SPAN}x${T_OUT}, #gpu.address_space<global>>,
                        %m_actual: i64, %n_actual: i64, %k_actual: i64,
                        %ldh_actual: i64, %ldw_actual: i64, %lda_actual: i64, %ldo_actual: i64${KERNEL_SCALE_PARAM}${KERNEL_OUT_SCALE_PARAM})
        kernel attributes {known_block_size = array<i32: ${BLOCK}, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %block = arith.constant ${BLOCK} : index
      %zero = arith.constant 0.0 : f32
      %m_i = arith.index_cast %m_actual : i64 to index
      %n_i = arith.index_cast %n_actual : i64 to index
      %k_i = arith.index_cast %k_actual : i64 to index
      %ldh = arith.index_cast %ldh_actual : i64 to index
      %ldw = arith.index_cast %ldw_actual : i64 to index
      %lda = arith.index_cast %lda_actual : i64 to index
      %ldo = arith.index_cast %ldo_actual : i64 to index
      // 128-wide K blocks of a block-scaled fp8 weight (unused otherwise).
      %c127 = arith.constant 127 : index
      %c128 = arith.constant 128 : index
      %k_up = arith.addi %k_i, %c127 : index
      %scale_kb = arith.divui %k_up, %c128 : index

      %tid = gpu.thread_id x
      %bx = gpu.block_id x
      %m = gpu.block_id y
      %col_base = arith.muli %bx, %block : index
      %col = arith.addi %col_base, %tid : index
      %col_ok = arith.cmpi ult, %col, %n_i : index
      %m_ok = arith.cmpi ult, %m, %m_i : index
      %ok = arith.andi %col_ok, %m_ok : i1
      scf.if %ok {
        %h_row = arith.muli %m, %ldh : index
        %w_row = arith.muli %col, %ldw : index
        %dot = scf.for %k = %c0 to %k_i step %c1 iter_args(%acc = %zero) -> (f32) {
          %h_idx = arith.addi %h_row, %k : index
          %w_idx = arith.addi %w_row, %k : index
          %h = memref.load %hidden[%h_idx] : memref<${SPAN}x${T}, #gpu.address_space<global>>
          %w = memref.load %weight[%w_idx] : memref<${SPAN}x${T_WEIGHT}, #gpu.address_space<global>>
          %hf = func.call @to_f32(%h) : (${T}) -> f32
          %wf = func.call @weight_to_f32(%w, %col, %k${SCALE_ARG}) : (${T_WEIGHT}, index, index${SCALE_TYPE}) -> f32
          %next = llvm.call_intrinsic "llvm.fma.f32"(%hf, %wf, %acc) : (f32, f32, f32) -> f32
          scf.yield %next : f32
        }
        %a_row = arith.muli %m, %lda : index
        %a_idx = arith.addi %a_row, %col : index
        %o_row = arith.muli %m, %ldo : index
        %o_idx = arith.addi %o_row, %col : index
        %a = memref.load %attn[%a_idx] : memref<${SPAN}x${T}, #gpu.address_space<global>>
        %o = func.call @gate_epilogue(%dot, %a) : (f32, ${T}) -> ${T}
        func.call @finish_element(%out, %o, %o_idx, %tid)
            : (memref<${SPAN}x${T_OUT}, #gpu.address_space<global>>, ${T}, index, index) -> ()
      }
      // Nothing for an out in attn's dtype; an fp8 out's groups (every thread).
      %ldo_row = arith.muli %m, %ldo : index
      %o_at = arith.addi %ldo_row, %col : index
      func.call @finish_elements(%out, %tid, %ok, %o_at, %m, %col, %n_i${OUT_SCALE_ARG})
          : (memref<${SPAN}x${T_OUT}, #gpu.address_space<global>>, index, i1, index, index, index, index${OUT_SCALE_TYPE}) -> ()
      gpu.return
    }

${EPILOGUE}
  }
}
