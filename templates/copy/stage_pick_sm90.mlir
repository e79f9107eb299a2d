// kind: fragment
// param ROWS: rows of a stage: BN weight rows, then BM hidden rows
// param BK: K elements of a stage
// param STAGES: stages in the ring
// param T: the contract's element type: hidden, attn and the gated value (bf16 | f16 | f32)
// param STAGE_MEMREF: the memref type of one stage
          // (stage_pick_sm90: the stages are slots of the dynamic workgroup memory.)
          %stage = memref.subview %tiles[%pick, 0, 0] [1, ${ROWS}, ${BK}] [1, 1, 1]
              : memref<${STAGES}x${ROWS}x${BK}x${T}, #gpu.address_space<workgroup>> to ${STAGE_MEMREF}
