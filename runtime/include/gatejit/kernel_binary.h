// KernelBinary: one compiled kernel as it flows from the compiler into the
// disk cache and bundles and on to the loader. Its encoded form (a versioned,
// checksummed blob) is the same in a cache entry and in a bundle entry.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "gatejit/contract.h"
#include "gatejit/kernel_abi.h"

namespace gatejit {

// kCubin: NVIDIA machine code the CUDA driver made from a PTX kernel for one
// device and driver (the runtime's native-code cache, native_code_cache.h).
enum class BinaryFormat { kHsaco, kPtx, kCubin };
const char *binary_format_name(BinaryFormat f);

// Every gatejit kernel so far has this argument list (classic_abi() in
// kernel_abi.h, which a KernelBinary declares since format version 3):
//   (ptr hidden, ptr weight, ptr attn, ptr out,
//    i64 M, i64 N, i64 K, i64 ld_hidden, i64 ld_weight, i64 ld_attn, i64 ld_out)
// Specialised kernels read only M of the scalars; generic reads them all.
inline constexpr int kKernelArgCount = 11;
inline constexpr int kKernelArgBytes = 4 * 8 + 7 * 8;

// Kernels that copy with the tensor memory accelerator (sm_90 mma_tiled)
// take two more arguments, by value: the TMA descriptors (CUtensorMap, 128
// bytes, 64-byte aligned) of weight and of hidden, which the runtime
// encodes at each launch from the actual pointers, rows and leading
// dimensions. Each describes boxes of `box_k` elements of a row (the
// contiguous dimension) by `weight_rows` / `hidden_rows` rows, laid out in
// workgroup memory in the 128-byte swizzle; rows past the tensor read as 0.
inline constexpr int kTensorMapArgCount = 2;
inline constexpr int kTensorMapBytes = 128;
inline constexpr uint32_t kTensorMapBoxK = 64;
struct TensorMapBoxes {
  // 0: the kernel takes no tensor maps; else kTensorMapBoxK, one 128-byte
  // swizzle row of 16-bit elements.
  uint32_t box_k = 0;
  uint32_t weight_rows = 0;
  uint32_t hidden_rows = 0;
  bool any() const { return box_k != 0; }
};

// How the launch grid follows from the actual M and N.
struct LaunchGeometry {
  uint32_t block_x = 0;       // threads per workgroup/block
  uint32_t n_per_block = 0;   // output columns each block covers
  bool grid_y_is_m = false;   // one grid row per output row (generic)
  uint32_t m_per_block = 0;   // rows of hidden each grid row covers (mma); 0: one grid row
  // Grid z: blocks that share out K for one output tile (mma_tiled); their
  // partials meet in the kernel's own workspace, so the runtime loads one
  // module instance per stream for k_blocks > 1 (docs/runtime.md).
  uint32_t k_blocks = 1;
  // Dynamic shared memory per block (mma_tiled's stages), in bytes; the CUDA
  // backend opts the function in to it when it loads it.
  uint32_t shared_bytes = 0;
  TensorMapBoxes tensor_maps;
  // A persistent grid (mma_tiled, no K split): at most this many
  // workgroups, one dimension, each looping over the tiles (grid_x x
  // grid_y) from its own index in steps of the grid's size; 0: a workgroup
  // per tile. A reader that ignores the field launches a workgroup per tile:
  // the kernel leaves the extra ones idle (slower, not wrong).
  uint32_t persistent_workgroups = 0;
  // The tiles: output columns, hidden rows, K splits.
  uint32_t grid_x(int64_t n) const { return uint32_t((n + n_per_block - 1) / n_per_block); }
  uint32_t grid_y(int64_t m) const {
    if (grid_y_is_m) return uint32_t(m);
    return m_per_block ? uint32_t((m + m_per_block - 1) / m_per_block) : 1u;
  }
  uint32_t grid_z() const { return k_blocks; }
  // What a launch asks for (not for grid_y_is_m, which the runtime cuts
  // into launches of at most 65535 rows).
  std::array<uint32_t, 3> launch_grid(int64_t n, int64_t m) const {
    if (persistent_workgroups == 0) return {grid_x(n), grid_y(m), grid_z()};
    const uint64_t tiles = uint64_t(grid_x(n)) * grid_y(m);
    return {uint32_t(std::min<uint64_t>(std::max<uint64_t>(tiles, 1), persistent_workgroups)), 1, 1};
  }
};

struct KernelBinary {
  std::string key;            // contract_key() of the compiled contract
  std::string contract_text;  // canonical_text() of the compiled contract
  Target target = Target::kGfx950;
  BinaryFormat format = BinaryFormat::kHsaco;
  std::string symbol;         // kernel function name in the code object
  LaunchGeometry geometry;
  std::string toolchain;      // compiler fingerprint (templates, generator, LLVM)
  std::string report_json;    // the compile report, as JSON text
  std::vector<uint8_t> code;  // hsaco ELF, PTX text or cubin ELF
  // The kernel's argument list, in order. Empty means classic_abi() (with the
  // tensor maps where geometry.tensor_maps has boxes): what the encoder
  // writes for it; decoding always fills it.
  std::vector<AbiArg> abi;
};

// kb.abi, or the classic list it stands for when empty.
std::vector<AbiArg> declared_abi(const KernelBinary &kb);

// Version 2 added tensor maps (a version-1 reader would launch such a kernel
// without them); version 1 entries still decode, with none. Version 3 adds
// the declared argument list (`abi`); versions 1 and 2 decode with the
// classic one.
inline constexpr uint32_t kKernelBinaryVersion = 3;
inline constexpr uint32_t kKernelBinaryTensorMapsVersion = 2;  // the first with `tensor_maps`
inline constexpr uint32_t kKernelBinaryAbiVersion = 3;         // the first with `abi`
inline constexpr uint32_t kKernelBinaryOldestVersion = 1;
// The most dynamic shared memory a block can have on `target`'s devices
// (the target table's shared_per_workgroup_max).
uint32_t max_shared_bytes(Target target);

// "GJKB" | u32 version | u32 meta_len | meta JSON | u64 code_len | code | u64 XXH3-64
std::vector<uint8_t> encode_kernel_binary(const KernelBinary &kb);
// Rejects short, truncated, unknown-version and checksum-failing input; never
// reads past `bytes`.
StatusOr<KernelBinary> decode_kernel_binary(std::span<const uint8_t> bytes);

}  // namespace gatejit
