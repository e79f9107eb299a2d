// kind: snippet
// param T: the contract's element type: hidden, attn and the gated value (bf16 | f16 | f32)
// param PAIRS_OP: the op that makes mma.sync's operand pairs (bitcast for bf16, shape_cast for f16)
// param PAIRS_TYPE: a 16-byte vector as mma.sync's operand pairs
// param PAIR: one operand pair of mma.sync (i32 for bf16, vector<2xf16>)
// param MMA_PTX_TYPES: mma.sync's PTX operand types where they are not implied (bf16)
    // sm_90 fragments of mma.sync.m16n8k16 (PTX ISA "Matrix fragments for
    // mma.m16n8k16"; compiler/src/mma_layout.cpp): lane = 4 g + t. A = hidden
    // tile (16 rows x 16 K, row-major), B = weight tile transposed (16 K x 8
    // weight rows), C = 16 hidden rows x 8 weight rows. Per KSTEP of 32 the
    // lane loads K elements [8 t, 8 t + 8) of weight row g and of hidden rows
    // g and g + 8, and feeds them to two mma.sync: pairs 0-1 to the first,
    // pairs 2-3 to the second, each as the lane's (2t, 2t+1) and (2t+8, 2t+9)
    // K slots.
    func.func private @lane_w_row(%lane: index) -> index {
      %c4 = arith.constant 4 : index
      %g = arith.divui %lane, %c4 : index
      return %g : index
    }
    func.func private @lane_h_row(%lane: index) -> index {
      %c4 = arith.constant 4 : index
      %g = arith.divui %lane, %c4 : index
      return %g : index
    }
    func.func private @lane_k(%lane: index) -> index {
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %t = arith.remui %lane, %c4 : index
      %k = arith.muli %t, %c8 : index
      return %k : index
    }
    // Accumulator element i: c0, c1 at hidden row g, weight rows 2t, 2t + 1;
    // c2, c3 at hidden row g + 8.
    func.func private @lane_c_h(%lane: index, %i: index) -> index {
      %c2 = arith.constant 2 : index
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %g = arith.divui %lane, %c4 : index
      %hi = arith.divui %i, %c2 : index
      %off = arith.muli %hi, %c8 : index
      %r = arith.addi %g, %off : index
      return %r : index
    }
    func.func private @lane_c_w(%lane: index, %i: index) -> index {
      %c2 = arith.constant 2 : index
      %c4 = arith.constant 4 : index
      %t = arith.remui %lane, %c4 : index
      %t2 = arith.muli %t, %c2 : index
      %lo = arith.remui %i, %c2 : index
      %c = arith.addi %t2, %lo : index
      return %c : index
    }
    func.func private @mma_step(%w: vector<8x${T}>, %h: vector<2x8x${T}>, %acc: vector<4xf32>) -> vector<4xf32> {
      %h0 = vector.extract %h[0] : vector<8x${T}> from vector<2x8x${T}>
      %h1 = vector.extract %h[1] : vector<8x${T}> from vector<2x8x${T}>
      %hp0 = ${PAIRS_OP} %h0 : vector<8x${T}> to ${PAIRS_TYPE}
      %hp1 = ${PAIRS_OP} %h1 : vector<8x${T}> to ${PAIRS_TYPE}
      %wp = ${PAIRS_OP} %w : vector<8x${T}> to ${PAIRS_TYPE}
      %a0 = vector.extract %hp0[0] : ${PAIR} from ${PAIRS_TYPE}
      %a1 = vector.extract %hp1[0] : ${PAIR} from ${PAIRS_TYPE}
      %a2 = vector.extract %hp0[1] : ${PAIR} from ${PAIRS_TYPE}
      %a3 = vector.extract %hp1[1] : ${PAIR} from ${PAIRS_TYPE}
      %a4 = vector.extract %hp0[2] : ${PAIR} from ${PAIRS_TYPE}
      %a5 = vector.extract %hp1[2] : ${PAIR} from ${PAIRS_TYPE}
      %a6 = vector.extract %hp0[3] : ${PAIR} from ${PAIRS_TYPE}
      %a7 = vector.extract %hp1[3] : ${PAIR} from ${PAIRS_TYPE}
      %b0 = vector.extract %wp[0] : ${PAIR} from ${PAIRS_TYPE}
      %b1 = vector.extract %wp[1] : ${PAIR} from ${PAIRS_TYPE}
      %b2 = vector.extract %wp[2] : ${PAIR} from ${PAIRS_TYPE}
      %b3 = vector.extract %wp[3] : ${PAIR} from ${PAIRS_TYPE}
      %c0 = vector.extract %acc[0] : f32 from vector<4xf32>
      %c1 = vector.extract %acc[1] : f32 from vector<4xf32>
      %c2 = vector.extract %acc[2] : f32 from vector<4xf32>
      %c3 = vector.extract %acc[3] : f32 from vector<4xf32>
      %d = nvvm.mma.sync A[%a0, %a1, %a2, %a3] B[%b0, %b1] C[%c0, %c1, %c2, %c3]
          {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, ${MMA_PTX_TYPES}
           shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (${PAIR}, ${PAIR}, f32) -> !llvm.struct<(f32, f32, f32, f32)>
      %d0 = llvm.extractvalue %d[0] : !llvm.struct<(f32, f32, f32, f32)>
      %d1 = llvm.extractvalue %d[1] : !llvm.struct<(f32, f32, f32, f32)>
      %d2 = llvm.extractvalue %d[2] : !llvm.struct<(f32, f32, f32, f32)>
      %d3 = llvm.extractvalue %d[3] : !llvm.struct<(f32, f32, f32, f32)>
      %e = nvvm.mma.sync A[%a4, %a5, %a6, %a7] B[%b2, %b3] C[%d0, %d1, %d2, %d3]
          {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, ${MMA_PTX_TYPES}
           shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (${PAIR}, ${PAIR}, f32) -> !llvm.struct<(f32, f32, f32, f32)>
      %e0 = llvm.extractvalue %e[0] : !llvm.struct<(f32, f32, f32, f32)>
      %e1 = llvm.extractvalue %e[1] : !llvm.struct<(f32, f32, f32, f32)>
      %e2 = llvm.extractvalue %e[2] : !llvm.struct<(f32, f32, f32, f32)>
      %e3 = llvm.extractvalue %e[3] : !llvm.struct<(f32, f32, f32, f32)>
      %r0 = vector.insert %e0, %acc[0] : f32 into vector<4xf32>
      %r1 = vector.insert %e1, %r0[1] : f32 into vector<4xf32>
      %r2 = vector.insert %e2, %r1[2] : f32 into vector<4xf32>
      %r3 = vector.insert %e3, %r2[3] : f32 into vector<4xf32>
      return %r3 : vector<4xf32>
    }
