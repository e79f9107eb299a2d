// kind: snippet
// param O_SIZE: elements of the out memref
// param T_OUT: the element type of out (T, or i8 for an fp8 out)
// param VW: outputs of an epilogue piece: consecutive columns of one row
// param T: the contract's element type: hidden, attn and the gated value (bf16 | f16 | f32)
// param N: output columns N
// param LDO: row stride of out (elements)
// param PIECES_WHOLE: whether N is a multiple of VW (no partial piece)
// param VW_BYTES: a piece's bytes in attn's type
    // @finish_piece for an out in attn's dtype (epilogue/epilogue_pieces.mlir
    // documents the parameters): the gated values go straight to out.
    // Outputs (row, col .. col + VW - 1) from their fp32 sums and attn values
    // (@load_piece_attn); col is a multiple of VW, row < M and col < N. One
    // VW-wide out store where the piece lies wholly inside N and `aligned`;
    // element by element otherwise.
    func.func private @finish_piece(%out: memref<${O_SIZE}x${T_OUT}, #gpu.address_space<global>>,
                                    %dots: vector<${VW}xf32>, %a: vector<${VW}x${T}>,
                                    %row: index, %col: index, %aligned: i1) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %vw = arith.constant ${VW} : index
      %n = arith.constant ${N} : index
      %ldo = arith.constant ${LDO} : index
      %o_row = arith.muli %row, %ldo : index
      %o_idx = arith.addi %o_row, %col : index
      %end = arith.addi %col, %vw : index
      %ends_inside = arith.cmpi ule, %end, %n : index
      %pieces_whole = arith.constant ${PIECES_WHOLE}
      %whole = arith.ori %ends_inside, %pieces_whole : i1
      %wide = arith.andi %whole, %aligned : i1
      %az = arith.constant dense<0.0> : vector<${VW}x${T}>
      scf.if %wide {
        %g = scf.for %j = %c0 to %vw step %c1 iter_args(%gv = %az) -> (vector<${VW}x${T}>) {
          %dj = vector.extract %dots[%j] : f32 from vector<${VW}xf32>
          %aj = vector.extract %a[%j] : ${T} from vector<${VW}x${T}>
          %oj = func.call @gate_epilogue(%dj, %aj) : (f32, ${T}) -> ${T}
          %gv2 = vector.insert %oj, %gv[%j] : ${T} into vector<${VW}x${T}>
          scf.yield %gv2 : vector<${VW}x${T}>
        } {gatejit.unroll}
        vector.store %g, %out[%o_idx] {alignment = ${VW_BYTES}} : memref<${O_SIZE}x${T_OUT}, #gpu.address_space<global>>, vector<${VW}x${T}>
      } else {
        scf.for %j = %c0 to %vw step %c1 {
          %cj = arith.addi %col, %j : index
          %cj_inside = arith.cmpi ult, %cj, %n : index
          %cj_ok = arith.ori %cj_inside, %pieces_whole : i1
          scf.if %cj_ok {
            %oj_idx = arith.addi %o_idx, %j : index
            %aj = vector.extract %a[%j] : ${T} from vector<${VW}x${T}>
            %dj = vector.extract %dots[%j] : f32 from vector<${VW}xf32>
            %oj = func.call @gate_epilogue(%dj, %aj) : (f32, ${T}) -> ${T}
            memref.store %oj, %out[%oj_idx] : memref<${O_SIZE}x${T_OUT}, #gpu.address_space<global>>
          }
        } {gatejit.unroll}
      }
      return
    }
