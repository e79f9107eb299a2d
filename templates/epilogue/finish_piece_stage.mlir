// kind: snippet
// param T: the contract's element type: hidden, attn and the gated value (bf16 | f16 | f32)
// param STAGE_SIZE: elements of the fp8 out's stage of gated values (M_MAX x N)
// param N: output columns N
// param VW: outputs of an epilogue piece: consecutive columns of one row
// param VW_BYTES: a piece's bytes in attn's type
// param O_SIZE: elements of the out memref
// param T_OUT: the element type of out (T, or i8 for an fp8 out)
    // @finish_piece for an fp8 out (per token group of 128 columns): the
    // gated values of the piece, in attn's dtype ${T}, wait in the module's
    // stage (row-major M_MAX x N) until every workgroup of their group has
    // finished; the last of them quantises the group (@out_groups_done,
    // out_groups_quantise.mlir). N is a multiple of 128 and of VW, so every
    // piece lies wholly inside N and on VW elements of the stage. `aligned`
    // concerns attn and out; the stage is always aligned.
    //   ${STAGE_SIZE} (M_MAX x N) ${N} ${VW} ${VW_BYTES}
    memref.global "private" @gatejit_out_stage : memref<${STAGE_SIZE}x${T}, #gpu.address_space<global>> = uninitialized {alignment = 16}
    func.func private @finish_piece(%out: memref<${O_SIZE}x${T_OUT}, #gpu.address_space<global>>,
                                    %dots: vector<${VW}xf32>, %a: vector<${VW}x${T}>,
                                    %row: index, %col: index, %aligned: i1) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %vw = arith.constant ${VW} : index
      %n = arith.constant ${N} : index
      %stage = memref.get_global @gatejit_out_stage : memref<${STAGE_SIZE}x${T}, #gpu.address_space<global>>
      %s_row = arith.muli %row, %n : index
      %s_idx = arith.addi %s_row, %col : index
      %az = arith.constant dense<0.0> : vector<${VW}x${T}>
      %g = scf.for %j = %c0 to %vw step %c1 iter_args(%gv = %az) -> (vector<${VW}x${T}>) {
        %dj = vector.extract %dots[%j] : f32 from vector<${VW}xf32>
        %aj = vector.extract %a[%j] : ${T} from vector<${VW}x${T}>
        %oj = func.call @gate_epilogue(%dj, %aj) : (f32, ${T}) -> ${T}
        %gv2 = vector.insert %oj, %gv[%j] : ${T} into vector<${VW}x${T}>
        scf.yield %gv2 : vector<${VW}x${T}>
      } {gatejit.unroll}
      vector.store %g, %stage[%s_idx] {alignment = ${VW_BYTES}} : memref<${STAGE_SIZE}x${T}, #gpu.address_space<global>>, vector<${VW}x${T}>
      return
    }
