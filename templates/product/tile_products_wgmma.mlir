// kind: snippet
// param GENERIC_PROXY_COPIES: whether the stages are written through the generic proxy (cp.async, not TMA)
// param ACC: the products' accumulator type: wgmma's array of ACCS accumulators
// param TILES: tiles a wave multiplies: RT x MT
// param WGMMA_ACC: a warpgroup accumulator as an LLVM struct of floats
// param WGMMA_ACCS_BEGIN: the function body that begins the accumulators as zeros
// param WGMMA_ACCS_END: the function body that sums the accumulators in array order
// param WGMMA_PACK: the function body that packs a vector accumulator into WGMMA_ACC
// param WGMMA_UNPACK: the function body that unpacks WGMMA_ACC into a vector
// param STAGE_MEMREF: the memref type of one stage
// param BN: weight rows (output columns) of a workgroup tile
// param WGMMA_ACC_OF_K0: the accumulator K step 0 of a stage adds into
// param WGMMA_TYPE: wgmma's operand type (bf16 | f16)
// param WGMMA_ACC_OF_K1: the accumulator K step 1 of a stage adds into
// param WGMMA_ACC_OF_K2: the accumulator K step 2 of a stage adds into
// param WGMMA_ACC_OF_K3: the accumulator K step 3 of a stage adds into
// param WGMMA_PENDING: wgmma groups left in flight after a stage's products
    // Products of one stage for mma_tiled with warpgroup MMA (sm_90a wgmma):
    // each four warps of the block are one warpgroup (one or two per block),
    // and one instruction multiplies the warpgroup's 64 hidden rows of the
    // stage (A, m = 64) by its BN weight rows (B, n = BN) over 16 K, both read by the tensor cores straight from
    // workgroup memory through matrix descriptors. No fragment registers,
    // no per-lane shared-memory reads: a 64-K stage is four instructions.
    //
    // The stage layout is already wgmma's 128-byte swizzle: rows of 128
    // bytes (BK = 64), 16-byte chunk c of row r at slot c ^ (r mod 8), and
    // every operand starts on a 1024-byte boundary (BN and the stage size are
    // multiples of 8 rows; dynamic shared memory starts at 0). Moving 16
    // elements along K is +32 bytes on the descriptor's start address: the
    // hardware applies the XOR to the address bits, as the copies did.
    //
    // Accumulator of m64nBNk16, thread 32 w + 4 g + t: hidden row 16 w + g +
    // 8 i, weight row 8 j + 2 t + b in register 4 j + 2 i + b: the mma.sync
    // C layout per 8-row weight tile j, so tile j of the TILES x 4 vector,
    // element 2 i + b, is what @lane_c_h / @lane_c_w (mma_sm90) describe and
    // the epilogue and the K-split meeting take it unchanged
    // (compiler/src/mma_layout.cpp, wgmma_m64_accumulator, checked on the
    // host in tests/compiler/mma_layout_test.cpp).
    //
    // Parameters: WGMMA_ACC (the instruction's BN / 2 f32 struct),
    // WGMMA_TYPE (bf16 | f16), WGMMA_PACK and
    // WGMMA_UNPACK (one line per accumulator register, written by the
    // planner: struct fields take constant positions only).

    // wgmma reads workgroup memory through the async proxy. Copies that
    // landed through the generic proxy (cp.async) must be ordered before
    // those reads, ahead of the barrier that releases the stage; TMA writes
    // through the async proxy itself, and the stage's mbarrier orders them
    // (GENERIC_PROXY_COPIES: whether the copies were cp.async).
    func.func private @stage_landed() {
      %generic = arith.constant ${GENERIC_PROXY_COPIES}
      scf.if %generic {
        nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
      }
      return
    }

    // Matrix descriptor of a K-major operand in the 128-byte swizzle at
    // workgroup byte address %addr: bits 0-13 address / 16, 16-29 leading
    // byte offset / 16 (unused by this swizzle: 1), 32-45 stride byte offset
    // / 16 (8 rows x 128 bytes = 1024: 64), 62-63 swizzle mode (1: 128 bytes).
    func.func private @smem_desc(%a: i64) -> i64 {
      %mask = arith.constant 262143 : i64
      %c4 = arith.constant 4 : i64
      %fixed = arith.constant 4611686293305360384 : i64
      %am = arith.andi %a, %mask : i64
      %a16 = arith.shrui %am, %c4 : i64
      %d = arith.ori %a16, %fixed : i64
      return %d : i64
    }

    // The accumulators live in wgmma's registers for the whole K loop; the
    // last group is waited for before they are read. ACC is an array of
    // ACCS accumulators (the plan's choice) of the warpgroup's tile: the K steps of a
    // stage take them in turn (WGMMA_ACC_OF_K0-3), so that ACCS chains
    // of dependent instructions run side by side (one chain issues an
    // instruction only when its previous one has completed, whatever its
    // n). Their sum, in array order, is the tile's product.
    func.func private @acc_begin() -> ${ACC} {
      %z = arith.constant dense<0.0> : vector<${TILES}x4xf32>
      %s = func.call @acc_to_struct(%z) : (vector<${TILES}x4xf32>) -> ${WGMMA_ACC}
${WGMMA_ACCS_BEGIN}
    }
    func.func private @acc_end(%d: ${ACC}) -> vector<${TILES}x4xf32> {
      nvvm.wgmma.wait.group.sync.aligned 0
${WGMMA_ACCS_END}
    }

    func.func private @acc_to_struct(%acc: vector<${TILES}x4xf32>) -> ${WGMMA_ACC} {
      %s0 = llvm.mlir.poison : ${WGMMA_ACC}
${WGMMA_PACK}
    }
    func.func private @struct_to_acc(%s: ${WGMMA_ACC}) -> vector<${TILES}x4xf32> {
      %v0 = arith.constant dense<0.0> : vector<${TILES}x4xf32>
${WGMMA_UNPACK}
    }

    // One stage (slot) of products: four m64nBNk16 instructions of this
    // warp's warpgroup (hidden rows 64 (wm / 4) on) in one group. Returns
    // with at most WGMMA_PENDING groups running: 1, the previous stage's
    // group complete and this one running (the slot refilled is the
    // previous one: cp.async after the next barrier, two stages back;
    // TMA at once); or 0 (TMA only), this stage's own group complete, its
    // slot refilled at once. (%sub, %wn, %lane: the fragment form's; BK is
    // 64 here, one part.)
    func.func private @tile_products(%stage: ${STAGE_MEMREF}, %sub: index, %wn: index, %wm: index, %lane: index,
                                     %d0: ${ACC}) -> ${ACC} {
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %w_rows = arith.constant ${BN} : index
      %wg_rows = arith.constant 64 : index
      %wg = arith.divui %wm, %c4 : index
      %wg_row0 = arith.muli %wg, %wg_rows : index
      %h_row0 = arith.addi %w_rows, %wg_row0 : index
      %w_a = func.call @stage_address(%stage, %c0, %c0) : (${STAGE_MEMREF}, index, index) -> i64
      %h_a = func.call @stage_address(%stage, %h_row0, %c0) : (${STAGE_MEMREF}, index, index) -> i64
      %d4 = func.call @wgmma_stage(%w_a, %h_a, %d0) : (i64, i64, ${ACC}) -> ${ACC}
      return %d4 : ${ACC}
    }
    // The instructions of one stage, on workgroup byte addresses (NVVM ops
    // have no inliner interface: the callee takes no memref).
    func.func private @wgmma_stage(%w_a: i64, %h_a: i64, %d0: ${ACC}) -> ${ACC} {
      %k16 = arith.constant 2 : i64
      %w0 = func.call @smem_desc(%w_a) : (i64) -> i64
      %h0 = func.call @smem_desc(%h_a) : (i64) -> i64
      %w1 = arith.addi %w0, %k16 : i64
      %h1 = arith.addi %h0, %k16 : i64
      %w2 = arith.addi %w1, %k16 : i64
      %h2 = arith.addi %h1, %k16 : i64
      %w3 = arith.addi %w2, %k16 : i64
      %h3 = arith.addi %h2, %k16 : i64
      nvvm.wgmma.fence.aligned
      %x0 = llvm.extractvalue %d0[${WGMMA_ACC_OF_K0}] : ${ACC}
      %y0 = nvvm.wgmma.mma_async %h0, %w0, %x0, #nvvm.shape<m = 64, n = ${BN}, k = 16>,
          D [<f32>, #nvvm.wgmma_scale_out<one>], A [<${WGMMA_TYPE}>, #nvvm.wgmma_scale_in<one>, #nvvm.mma_layout<row>],
          B [<${WGMMA_TYPE}>, #nvvm.wgmma_scale_in<one>, #nvvm.mma_layout<col>] : ${WGMMA_ACC} -> ${WGMMA_ACC}
      %d1 = llvm.insertvalue %y0, %d0[${WGMMA_ACC_OF_K0}] : ${ACC}
      %x1 = llvm.extractvalue %d1[${WGMMA_ACC_OF_K1}] : ${ACC}
      %y1 = nvvm.wgmma.mma_async %h1, %w1, %x1, #nvvm.shape<m = 64, n = ${BN}, k = 16>,
          D [<f32>, #nvvm.wgmma_scale_out<one>], A [<${WGMMA_TYPE}>, #nvvm.wgmma_scale_in<one>, #nvvm.mma_layout<row>],
          B [<${WGMMA_TYPE}>, #nvvm.wgmma_scale_in<one>, #nvvm.mma_layout<col>] : ${WGMMA_ACC} -> ${WGMMA_ACC}
      %d2 = llvm.insertvalue %y1, %d1[${WGMMA_ACC_OF_K1}] : ${ACC}
      %x2 = llvm.extractvalue %d2[${WGMMA_ACC_OF_K2}] : ${ACC}
      %y2 = nvvm.wgmma.mma_async %h2, %w2, %x2, #nvvm.shape<m = 64, n = ${BN}, k = 16>,
          D [<f32>, #nvvm.wgmma_scale_out<one>], A [<${WGMMA_TYPE}>, #nvvm.wgmma_scale_in<one>, #nvvm.mma_layout<row>],
          B [<${WGMMA_TYPE}>, #nvvm.wgmma_scale_in<one>, #nvvm.mma_layout<col>] : ${WGMMA_ACC} -> ${WGMMA_ACC}
      %d3 = llvm.insertvalue %y2, %d2[${WGMMA_ACC_OF_K2}] : ${ACC}
      %x3 = llvm.extractvalue %d3[${WGMMA_ACC_OF_K3}] : ${ACC}
      %y3 = nvvm.wgmma.mma_async %h3, %w3, %x3, #nvvm.shape<m = 64, n = ${BN}, k = 16>,
          D [<f32>, #nvvm.wgmma_scale_out<one>], A [<${WGMMA_TYPE}>, #nvvm.wgmma_scale_in<one>, #nvvm.mma_layout<row>],
          B [<${WGMMA_TYPE}>, #nvvm.wgmma_scale_in<one>, #nvvm.mma_layout<col>] : ${WGMMA_ACC} -> ${WGMMA_ACC}
      %d4 = llvm.insertvalue %y3, %d3[${WGMMA_ACC_OF_K3}] : ${ACC}
      nvvm.wgmma.commit.group.sync.aligned
      nvvm.wgmma.wait.group.sync.aligned ${WGMMA_PENDING}
      return %d4 : ${ACC}
    }
