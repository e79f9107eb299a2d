          // (stage_pick_sm90: the stages are slots of the dynamic workgroup memory.)
          %stage = memref.subview %tiles[%pick, 0, 0] [1, ${ROWS}, ${BK}] [1, 1, 1]
              : memref<${STAGES}x${ROWS}x${BK}x${T}, #gpu.address_space<workgroup>> to ${STAGE_MEMREF}
