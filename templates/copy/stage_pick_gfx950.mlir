// kind: fragment
// param STAGE_MEMREF: the memref type of one stage
// param STAGE_BYTES: bytes of one stage
// param ROWS: rows of a stage: BN weight rows, then BM hidden rows
// param BK: K elements of a stage
// param T: the contract's element type: hidden, attn and the gated value (bf16 | f16 | f32)
          // (stage_pick_gfx950: each stage is its own workgroup global of
          // bytes; %pick is a constant once the K loop's ring is unrolled.)
          %stage = scf.index_switch %pick -> ${STAGE_MEMREF}
          case 0 {
            %g = memref.get_global @gatejit_stage_0 : memref<${STAGE_BYTES}xi8, #gpu.address_space<workgroup>>
            %e = memref.view %g[%c0][] : memref<${STAGE_BYTES}xi8, #gpu.address_space<workgroup>>
                to memref<${ROWS}x${BK}x${T}, #gpu.address_space<workgroup>>
            %v = memref.cast %e : memref<${ROWS}x${BK}x${T}, #gpu.address_space<workgroup>> to ${STAGE_MEMREF}
            scf.yield %v : ${STAGE_MEMREF}
          }
          case 1 {
            %g = memref.get_global @gatejit_stage_1 : memref<${STAGE_BYTES}xi8, #gpu.address_space<workgroup>>
            %e = memref.view %g[%c0][] : memref<${STAGE_BYTES}xi8, #gpu.address_space<workgroup>>
                to memref<${ROWS}x${BK}x${T}, #gpu.address_space<workgroup>>
            %v = memref.cast %e : memref<${ROWS}x${BK}x${T}, #gpu.address_space<workgroup>> to ${STAGE_MEMREF}
            scf.yield %v : ${STAGE_MEMREF}
          }
          case 2 {
            %g = memref.get_global @gatejit_stage_2 : memref<${STAGE_BYTES}xi8, #gpu.address_space<workgroup>>
            %e = memref.view %g[%c0][] : memref<${STAGE_BYTES}xi8, #gpu.address_space<workgroup>>
                to memref<${ROWS}x${BK}x${T}, #gpu.address_space<workgroup>>
            %v = memref.cast %e : memref<${ROWS}x${BK}x${T}, #gpu.address_space<workgroup>> to ${STAGE_MEMREF}
            scf.yield %v : ${STAGE_MEMREF}
          }
          case 3 {
            %g = memref.get_global @gatejit_stage_3 : memref<${STAGE_BYTES}xi8, #gpu.address_space<workgroup>>
            %e = memref.view %g[%c0][] : memref<${STAGE_BYTES}xi8, #gpu.address_space<workgroup>>
                to memref<${ROWS}x${BK}x${T}, #gpu.address_space<workgroup>>
            %v = memref.cast %e : memref<${ROWS}x${BK}x${T}, #gpu.address_space<workgroup>> to ${STAGE_MEMREF}
            scf.yield %v : ${STAGE_MEMREF}
          }
          case 4 {
            %g = memref.get_global @gatejit_stage_4 : memref<${STAGE_BYTES}xi8, #gpu.address_space<workgroup>>
            %e = memref.view %g[%c0][] : memref<${STAGE_BYTES}xi8, #gpu.address_space<workgroup>>
                to memref<${ROWS}x${BK}x${T}, #gpu.address_space<workgroup>>
            %v = memref.cast %e : memref<${ROWS}x${BK}x${T}, #gpu.address_space<workgroup>> to ${STAGE_MEMREF}
            scf.yield %v : ${STAGE_MEMREF}
          }
          case 5 {
            %g = memref.get_global @gatejit_stage_5 : memref<${STAGE_BYTES}xi8, #gpu.address_space<workgroup>>
            %e = memref.view %g[%c0][] : memref<${STAGE_BYTES}xi8, #gpu.address_space<workgroup>>
                to memref<${ROWS}x${BK}x${T}, #gpu.address_space<workgroup>>
            %v = memref.cast %e : memref<${ROWS}x${BK}x${T}, #gpu.address_space<workgroup>> to ${STAGE_MEMREF}
            scf.yield %v : ${STAGE_MEMREF}
          }
          case 6 {
            %g = memref.get_global @gatejit_stage_6 : memref<${STAGE_BYTES}xi8, #gpu.address_space<workgroup>>
            %e = memref.view %g[%c0][] : memref<${STAGE_BYTES}xi8, #gpu.address_space<workgroup>>
                to memref<${ROWS}x${BK}x${T}, #gpu.address_space<workgroup>>
            %v = memref.cast %e : memref<${ROWS}x${BK}x${T}, #gpu.address_space<workgroup>> to ${STAGE_MEMREF}
            scf.yield %v : ${STAGE_MEMREF}
          }
          default {
            %g = memref.get_global @gatejit_stage_7 : memref<${STAGE_BYTES}xi8, #gpu.address_space<workgroup>>
            %e = memref.view %g[%c0][] : memref<${STAGE_BYTES}xi8, #gpu.address_space<workgroup>>
                to memref<${ROWS}x${BK}x${T}, #gpu.address_space<workgroup>>
            %v = memref.cast %e : memref<${ROWS}x${BK}x${T}, #gpu.address_space<workgroup>> to ${STAGE_MEMREF}
            scf.yield %v : ${STAGE_MEMREF}
          }
