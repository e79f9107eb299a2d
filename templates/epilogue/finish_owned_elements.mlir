// kind: snippet
// param W_ROWS: weight rows a column group owns: RT x TILE_W
// param N: output columns N
// param OWN: accumulator elements a wave finishes: ceil(ELEMENTS / KSPLIT)
// param LDA: row stride of attn (elements)
// param LDO: row stride of out (elements)
// param A_SIZE: elements of the attn memref
// param O_SIZE: elements of the out memref
// param T: the contract's element type: hidden, attn and the gated value (bf16 | f16 | f32)
// param T_OUT: the element type of out (T, or i8 for an fp8 out)
    // The mma's epilogue an element at a time (ELEMENT_FINISH): the wave
    // that sums an output in the block's reduction also gates and stores it,
    // with 2-byte accesses, and the sums make no second trip through
    // workgroup memory. For an out in attn's dtype and a 16-bit weight (no
    // scales on the sums), without a K split.
    // The output of slot o of wave kp (@owned_element): its row and column,
    // and whether it is one (the element exists, row < m_i, column < N).
    func.func private @owned_output(%o: index, %kp: index, %lane: index, %wrow0: index, %mrow0: index, %m_i: index)
        -> (index, index, i1) {
      %w_rows = arith.constant ${W_ROWS} : index
      %n = arith.constant ${N} : index
      %e, %i, %at, %exists = func.call @owned_element(%o, %kp, %lane) : (index, index, index) -> (index, index, index, i1)
      %row_in_block = arith.divui %at, %w_rows : index
      %col_in_group = arith.remui %at, %w_rows : index
      %row = arith.addi %mrow0, %row_in_block : index
      %col = arith.addi %wrow0, %col_in_group : index
      %row_ok = arith.cmpi ult, %row, %m_i : index
      %col_ok = arith.cmpi ult, %col, %n : index
      %inside = arith.andi %row_ok, %col_ok : i1
      %is_output = arith.andi %exists, %inside : i1
      return %row, %col, %is_output : index, index, i1
    }

    // ELEMENT_FINISH: the attn values of the outputs wave kp's lane finishes
    // (zero where a slot is no output).
    func.func private @load_owned_attn(%attn: memref<${A_SIZE}x${T}, #gpu.address_space<global>>,
                                       %kp: index, %lane: index, %wrow0: index, %mrow0: index, %m_i: index)
        -> vector<${OWN}x${T}> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %own = arith.constant ${OWN} : index
      %lda = arith.constant ${LDA} : index
      %zero = arith.constant 0.0 : ${T}
      %az = arith.constant dense<0.0> : vector<${OWN}x${T}>
      %all = scf.for %o = %c0 to %own step %c1 iter_args(%av = %az) -> (vector<${OWN}x${T}>) {
        %row, %col, %is_output = func.call @owned_output(%o, %kp, %lane, %wrow0, %mrow0, %m_i)
            : (index, index, index, index, index, index) -> (index, index, i1)
        %a = scf.if %is_output -> (${T}) {
          %a_row = arith.muli %row, %lda : index
          %a_idx = arith.addi %a_row, %col : index
          %x = memref.load %attn[%a_idx] : memref<${A_SIZE}x${T}, #gpu.address_space<global>>
          scf.yield %x : ${T}
        } else {
          scf.yield %zero : ${T}
        }
        %av2 = vector.insert %a, %av[%o] : ${T} into vector<${OWN}x${T}>
        scf.yield %av2 : vector<${OWN}x${T}>
      } {gatejit.unroll}
      return %all : vector<${OWN}x${T}>
    }

    // ELEMENT_FINISH: each output wave kp's lane summed, gated and stored.
    // Only the lane that read an output's attn value writes it, so out may
    // be attn.
    func.func private @finish_owned(%out: memref<${O_SIZE}x${T_OUT}, #gpu.address_space<global>>,
                                    %dots: vector<${OWN}xf32>, %a: vector<${OWN}x${T}>,
                                    %kp: index, %lane: index, %wrow0: index, %mrow0: index, %m_i: index) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %own = arith.constant ${OWN} : index
      %ldo = arith.constant ${LDO} : index
      scf.for %o = %c0 to %own step %c1 {
        %row, %col, %is_output = func.call @owned_output(%o, %kp, %lane, %wrow0, %mrow0, %m_i)
            : (index, index, index, index, index, index) -> (index, index, i1)
        scf.if %is_output {
          %dot = vector.extract %dots[%o] : f32 from vector<${OWN}xf32>
          %ao = vector.extract %a[%o] : ${T} from vector<${OWN}x${T}>
          %g = func.call @gate_epilogue(%dot, %ao) : (f32, ${T}) -> ${T}
          %o_row = arith.muli %row, %ldo : index
          %o_idx = arith.addi %o_row, %col : index
          memref.store %g, %out[%o_idx] : memref<${O_SIZE}x${T_OUT}, #gpu.address_space<global>>
        }
      } {gatejit.unroll}
      return
    }
