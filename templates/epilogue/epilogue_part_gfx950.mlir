// kind: fragment
// param EPI_PARTS: parts of the staged tile (each over one stage slot)
// param STAGE_BYTES: bytes of one stage
// param EPI_PART_FLOATS: floats of one part: EPI_PART_ROWS x EPI_LD
          // (epilogue_part_gfx950: part %part of the staged epilogue's tile is
          // stage global %part viewed as f32, free once the K loop is over.
          // A select over the EPI_PARTS parts only: the loop is unrolled and
          // each switch folds to one global, so no stage past them is used.)
          %epi_parts = arith.constant ${EPI_PARTS} : index
          %epi_g0 = memref.get_global @gatejit_stage_0 : memref<${STAGE_BYTES}xi8, #gpu.address_space<workgroup>>
          %epi_t0 = memref.view %epi_g0[%c0][] : memref<${STAGE_BYTES}xi8, #gpu.address_space<workgroup>> to memref<${EPI_PART_FLOATS}xf32, #gpu.address_space<workgroup>>
          %tile = scf.for %epi_k = %c1 to %epi_parts step %c1 iter_args(%epi_sel = %epi_t0) -> (memref<${EPI_PART_FLOATS}xf32, #gpu.address_space<workgroup>>) {
            %epi_tk = scf.index_switch %epi_k -> memref<${EPI_PART_FLOATS}xf32, #gpu.address_space<workgroup>>
            case 1 {
              %epi_g = memref.get_global @gatejit_stage_1 : memref<${STAGE_BYTES}xi8, #gpu.address_space<workgroup>>
              %epi_v = memref.view %epi_g[%c0][] : memref<${STAGE_BYTES}xi8, #gpu.address_space<workgroup>> to memref<${EPI_PART_FLOATS}xf32, #gpu.address_space<workgroup>>
              scf.yield %epi_v : memref<${EPI_PART_FLOATS}xf32, #gpu.address_space<workgroup>>
            }
            case 2 {
              %epi_g = memref.get_global @gatejit_stage_2 : memref<${STAGE_BYTES}xi8, #gpu.address_space<workgroup>>
              %epi_v = memref.view %epi_g[%c0][] : memref<${STAGE_BYTES}xi8, #gpu.address_space<workgroup>> to memref<${EPI_PART_FLOATS}xf32, #gpu.address_space<workgroup>>
              scf.yield %epi_v : memref<${EPI_PART_FLOATS}xf32, #gpu.address_space<workgroup>>
            }
            case 3 {
              %epi_g = memref.get_global @gatejit_stage_3 : memref<${STAGE_BYTES}xi8, #gpu.address_space<workgroup>>
              %epi_v = memref.view %epi_g[%c0][] : memref<${STAGE_BYTES}xi8, #gpu.address_space<workgroup>> to memref<${EPI_PART_FLOATS}xf32, #gpu.address_space<workgroup>>
              scf.yield %epi_v : memref<${EPI_PART_FLOATS}xf32, #gpu.address_space<workgroup>>
            }
            case 4 {
              %epi_g = memref.get_global @gatejit_stage_4 : memref<${STAGE_BYTES}xi8, #gpu.address_space<workgroup>>
              %epi_v = memref.view %epi_g[%c0][] : memref<${STAGE_BYTES}xi8, #gpu.address_space<workgroup>> to memref<${EPI_PART_FLOATS}xf32, #gpu.address_space<workgroup>>
              scf.yield %epi_v : memref<${EPI_PART_FLOATS}xf32, #gpu.address_space<workgroup>>
            }
            case 5 {
              %epi_g = memref.get_global @gatejit_stage_5 : memref<${STAGE_BYTES}xi8, #gpu.address_space<workgroup>>
              %epi_v = memref.view %epi_g[%c0][] : memref<${STAGE_BYTES}xi8, #gpu.address_space<workgroup>> to memref<${EPI_PART_FLOATS}xf32, #gpu.address_space<workgroup>>
              scf.yield %epi_v : memref<${EPI_PART_FLOATS}xf32, #gpu.address_space<workgroup>>
            }
            case 6 {
              %epi_g = memref.get_global @gatejit_stage_6 : memref<${STAGE_BYTES}xi8, #gpu.address_space<workgroup>>
              %epi_v = memref.view %epi_g[%c0][] : memref<${STAGE_BYTES}xi8, #gpu.address_space<workgroup>> to memref<${EPI_PART_FLOATS}xf32, #gpu.address_space<workgroup>>
              scf.yield %epi_v : memref<${EPI_PART_FLOATS}xf32, #gpu.address_space<workgroup>>
            }
            default {
              %epi_g = memref.get_global @gatejit_stage_7 : memref<${STAGE_BYTES}xi8, #gpu.address_space<workgroup>>
              %epi_v = memref.view %epi_g[%c0][] : memref<${STAGE_BYTES}xi8, #gpu.address_space<workgroup>> to memref<${EPI_PART_FLOATS}xf32, #gpu.address_space<workgroup>>
              scf.yield %epi_v : memref<${EPI_PART_FLOATS}xf32, #gpu.address_space<workgroup>>
            }
            %epi_is = arith.cmpi eq, %part, %epi_k : index
            %epi_next = arith.select %epi_is, %epi_tk, %epi_sel : memref<${EPI_PART_FLOATS}xf32, #gpu.address_space<workgroup>>
            scf.yield %epi_next : memref<${EPI_PART_FLOATS}xf32, #gpu.address_space<workgroup>>
          } {gatejit.unroll}
