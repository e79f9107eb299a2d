#include "gatejit/kernel_binary.h"

#include "gatejit/target_info.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <nlohmann/json.hpp>

namespace gatejit {
namespace {

constexpr char kMagic[4] = {'G', 'J', 'K', 'B'};

void put_u32(std::vector<uint8_t> &out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(uint8_t(v >> (8 * i)));
}
void put_u64(std::vector<uint8_t> &out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(uint8_t(v >> (8 * i)));
}

// A bounds-checked little-endian reader.
class Reader {
 public:
  explicit Reader(std::span<const uint8_t> b) : b_(b) {}
  bool u32(uint32_t &v) { return fixed(v, 4); }
  bool u64(uint64_t &v) { return fixed(v, 8); }
  bool bytes(size_t n, std::span<const uint8_t> &out) {
    if (n > b_.size() - pos_) return false;
    out = b_.subspan(pos_, n);
    pos_ += n;
    return true;
  }
  size_t pos() const { return pos_; }

 private:
  template <typename T>
  bool fixed(T &v, size_t n) {
    if (n > b_.size() - pos_) return false;
    v = 0;
    for (size_t i = 0; i < n; ++i) v |= T(b_[pos_ + i]) << (8 * i);
    pos_ += n;
    return true;
  }
  std::span<const uint8_t> b_;
  size_t pos_ = 0;
};

// A geometry field: an unsigned integer that fits 32 bits. nlohmann's
// get<uint32_t>() would cast a float such as 1e300 (undefined behaviour) and
// wrap a negative integer, so the decoder checks the JSON type itself.
uint32_t u32_field(const nlohmann::json &meta, const char *key) {
  const auto &v = meta.at(key);
  if (!v.is_number_unsigned() || v.get<uint64_t>() > UINT32_MAX)
    throw std::out_of_range(std::string(key) + " must be an unsigned 32-bit integer");
  return uint32_t(v.get<uint64_t>());
}
uint32_t u32_field_or(const nlohmann::json &meta, const char *key, uint32_t absent) {
  return meta.contains(key) ? u32_field(meta, key) : absent;
}

}  // namespace

uint32_t max_shared_bytes(Target target) { return uint32_t(target_info(target).shared_per_workgroup_max); }

std::vector<AbiArg> declared_abi(const KernelBinary &kb) {
  return kb.abi.empty() ? classic_abi(kb.geometry.tensor_maps.any()) : kb.abi;
}

const char *binary_format_name(BinaryFormat f) {
  switch (f) {
    case BinaryFormat::kHsaco: return "hsaco";
    case BinaryFormat::kPtx: return "ptx";
    case BinaryFormat::kCubin: return "cubin";
  }
  return "?";
}

std::vector<uint8_t> encode_kernel_binary(const KernelBinary &kb) {
  nlohmann::json meta = {
      {"key", kb.key},
      {"contract", kb.contract_text},
      {"target", target_name(kb.target)},
      {"format", binary_format_name(kb.format)},
      {"symbol", kb.symbol},
      {"block_x", kb.geometry.block_x},
      {"n_per_block", kb.geometry.n_per_block},
      {"grid_y_is_m", kb.geometry.grid_y_is_m},
      {"m_per_block", kb.geometry.m_per_block},
      {"k_blocks", kb.geometry.k_blocks},
      {"shared_bytes", kb.geometry.shared_bytes},
      {"tensor_maps",
       {{"box_k", kb.geometry.tensor_maps.box_k},
        {"weight_rows", kb.geometry.tensor_maps.weight_rows},
        {"hidden_rows", kb.geometry.tensor_maps.hidden_rows}}},
      {"toolchain", kb.toolchain},
      {"report", kb.report_json},
  };
  // Written only where set, so every other entry keeps its bytes.
  if (kb.geometry.persistent_workgroups != 0) meta["persistent_workgroups"] = kb.geometry.persistent_workgroups;
  nlohmann::json abi = nlohmann::json::array();
  for (const AbiArg &a : declared_abi(kb)) abi.push_back({abi_kind_name(a.kind), abi_value_name(a.value)});
  meta["abi"] = abi;
  const std::string meta_text = meta.dump();
  std::vector<uint8_t> out;
  out.reserve(32 + meta_text.size() + kb.code.size());
  out.insert(out.end(), kMagic, kMagic + 4);
  put_u32(out, kKernelBinaryVersion);
  put_u32(out, uint32_t(meta_text.size()));
  out.insert(out.end(), meta_text.begin(), meta_text.end());
  put_u64(out, kb.code.size());
  out.insert(out.end(), kb.code.begin(), kb.code.end());
  put_u64(out, XXH3_64bits(out.data(), out.size()));
  return out;
}

StatusOr<KernelBinary> decode_kernel_binary(std::span<const uint8_t> bytes) {
  if (bytes.size() < 4 + 4 + 4 + 8 + 8 || std::memcmp(bytes.data(), kMagic, 4) != 0)
    return corrupt("kernel binary: missing 'GJKB' magic or shorter than its header");
  Reader r(bytes.subspan(4));
  uint32_t version = 0, meta_len = 0;
  r.u32(version);
  if (version < kKernelBinaryOldestVersion || version > kKernelBinaryVersion)
    return corrupt("kernel binary: version " + std::to_string(version) + " is not supported (this build reads versions " +
                   std::to_string(kKernelBinaryOldestVersion) + " to " + std::to_string(kKernelBinaryVersion) + ")");
  std::span<const uint8_t> meta_bytes, code_bytes;
  uint64_t code_len = 0, checksum = 0;
  if (!r.u32(meta_len) || !r.bytes(meta_len, meta_bytes) || !r.u64(code_len) ||
      code_len > bytes.size() || !r.bytes(size_t(code_len), code_bytes))
    return corrupt("kernel binary: truncated");
  const size_t body = 4 + r.pos();
  if (!r.u64(checksum)) return corrupt("kernel binary: truncated before its checksum");
  if (4 + r.pos() != bytes.size()) return corrupt("kernel binary: trailing bytes after the checksum");
  if (XXH3_64bits(bytes.data(), body) != checksum) return corrupt("kernel binary: checksum mismatch");

  nlohmann::json meta = nlohmann::json::parse(meta_bytes.begin(), meta_bytes.end(), nullptr, false);
  if (meta.is_discarded() || !meta.is_object()) return corrupt("kernel binary: metadata is not a JSON object");
  KernelBinary kb;
  try {
    kb.key = meta.at("key").get<std::string>();
    kb.contract_text = meta.at("contract").get<std::string>();
    auto target = parse_target(meta.at("target").get<std::string>());
    if (!target.ok()) return corrupt("kernel binary: " + target.status().message());
    kb.target = *target;
    const std::string format = meta.at("format").get<std::string>();
    if (format == "hsaco") kb.format = BinaryFormat::kHsaco;
    else if (format == "ptx") kb.format = BinaryFormat::kPtx;
    else if (format == "cubin") kb.format = BinaryFormat::kCubin;
    else return corrupt("kernel binary: unknown format '" + format + "'");
    if ((kb.format == BinaryFormat::kHsaco) != target_is_amdgpu(kb.target))
      return corrupt("kernel binary: format " + format + " is not code for " + target_name(kb.target));
    kb.symbol = meta.at("symbol").get<std::string>();
    kb.geometry.block_x = u32_field(meta, "block_x");
    kb.geometry.n_per_block = u32_field(meta, "n_per_block");
    kb.geometry.grid_y_is_m = meta.at("grid_y_is_m").get<bool>();
    // Added with the mma template; entries written before it have one grid row.
    kb.geometry.m_per_block = u32_field_or(meta, "m_per_block", 0);
    // Added with mma_tiled; entries written before it do not split K.
    kb.geometry.k_blocks = u32_field_or(meta, "k_blocks", 1);
    kb.geometry.shared_bytes = u32_field_or(meta, "shared_bytes", 0);
    // Added with the persistent tiled grid (no version change: the kernel
    // takes any grid, see LaunchGeometry).
    kb.geometry.persistent_workgroups = u32_field_or(meta, "persistent_workgroups", 0);
    // Version 2; version 1 kernels take none.
    if (version >= kKernelBinaryTensorMapsVersion) {
      const auto &maps = meta.at("tensor_maps");
      kb.geometry.tensor_maps = {u32_field(maps, "box_k"), u32_field(maps, "weight_rows"),
                                 u32_field(maps, "hidden_rows")};
    }
    kb.toolchain = meta.at("toolchain").get<std::string>();
    kb.report_json = meta.at("report").get<std::string>();
    // Version 3: the declared argument list, each entry [kind, value].
    if (version >= kKernelBinaryAbiVersion) {
      const auto &abi = meta.at("abi");
      if (!abi.is_array() || abi.size() > kMaxAbiArgs)
        return corrupt("kernel binary: abi must be a list of at most " + std::to_string(kMaxAbiArgs) + " arguments");
      for (const auto &entry : abi) {
        if (!entry.is_array() || entry.size() != 2 || !entry[0].is_string() || !entry[1].is_string())
          return corrupt("kernel binary: abi entries are [kind, value] pairs of strings");
        auto kind = parse_abi_kind(entry[0].get<std::string>());
        auto value = parse_abi_value(entry[1].get<std::string>());
        if (!kind.ok()) return corrupt("kernel binary: " + kind.status().message());
        if (!value.ok()) return corrupt("kernel binary: " + value.status().message());
        kb.abi.push_back({*kind, *value});
      }
    }
  } catch (const nlohmann::json::exception &e) {
    return corrupt(std::string("kernel binary: bad metadata: ") + e.what());
  } catch (const std::out_of_range &e) {
    return corrupt(std::string("kernel binary: bad metadata: ") + e.what());
  }
  if (kb.geometry.block_x == 0 || kb.geometry.block_x > 1024 || kb.geometry.n_per_block == 0 ||
      kb.geometry.k_blocks == 0 || kb.geometry.k_blocks > 65535 || kb.geometry.shared_bytes > max_shared_bytes(kb.target))
    return corrupt("kernel binary: launch geometry out of range");
  // A persistent grid loops over row and column tiles of one K range: it
  // needs both tile sizes and no K split, and a grid the launch can ask for.
  const LaunchGeometry &g = kb.geometry;
  if (g.persistent_workgroups != 0 && (g.grid_y_is_m || g.m_per_block == 0 || g.k_blocks != 1 ||
                                       g.tensor_maps.any() || g.persistent_workgroups > uint32_t(INT32_MAX)))
    return corrupt("kernel binary: persistent_workgroups needs row tiles (m_per_block), no K split (k_blocks 1), "
                   "no tensor maps and at most 2^31 - 1 workgroups");
  // TMA boxes: a 128-byte swizzle row of K (what the kernel's barriers
  // expect; another width would leave a stage short and its waiters
  // spinning), 1-256 rows (the hardware's), one stage of both within the
  // shared memory, PTX only.
  const TensorMapBoxes &maps = kb.geometry.tensor_maps;
  const bool no_maps = maps.box_k == 0 && maps.weight_rows == 0 && maps.hidden_rows == 0;
  if (!no_maps &&
      (kb.format == BinaryFormat::kHsaco || maps.box_k != kTensorMapBoxK || maps.weight_rows == 0 ||
       maps.weight_rows > 256 || maps.hidden_rows == 0 || maps.hidden_rows > 256 ||
       uint64_t(maps.weight_rows + maps.hidden_rows) * maps.box_k * 2 > kb.geometry.shared_bytes))
    return corrupt("kernel binary: tensor map boxes out of range (64 x 1-256 rows within the shared memory, CUDA "
                   "kernels only)");
  // The argument list: declared (version 3), or the classic one. Tensor
  // maps exactly where the geometry has boxes to encode them with.
  if (version < kKernelBinaryAbiVersion) kb.abi = classic_abi(!no_maps);
  if (Status valid = validate_abi(kb.abi, !no_maps); !valid.ok())
    return corrupt("kernel binary: " + valid.message());
  const bool declares_maps = std::any_of(kb.abi.begin(), kb.abi.end(),
                                         [](const AbiArg &a) { return a.kind == AbiArgKind::kTensorMap; });
  if (declares_maps == no_maps)
    return corrupt("kernel binary: tensor map boxes without tensor map arguments, or the reverse");
  kb.code.assign(code_bytes.begin(), code_bytes.end());
  return kb;
}

}  // namespace gatejit
