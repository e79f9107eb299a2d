// kind: fragment
// param STAGE_BYTES: bytes of one stage
// param EPI_PART_FLOATS: floats of one part: EPI_PART_ROWS x EPI_LD
          // (epilogue_part_sm90: part %part of the staged epilogue's tile lies
          // over stage slot %part of the dynamic workgroup memory, as gfx950's
          // parts lie in its stage globals, so the H200 runs the same split.)
          %epi_part_bytes = arith.constant ${STAGE_BYTES} : index
          %epi_part_at = arith.muli %part, %epi_part_bytes : index
          %tile = memref.view %smem[%epi_part_at][] : memref<?xi8, #gpu.address_space<workgroup>>
              to memref<${EPI_PART_FLOATS}xf32, #gpu.address_space<workgroup>>
