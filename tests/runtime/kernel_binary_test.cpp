// The kernel binary's encoded form: version 2 carries the TMA boxes of
// kernels that take tensor maps; version 1 entries (caches and bundles
// written before) still decode, as kernels without them.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gatejit/kernel_binary.h"

namespace gatejit {
namespace {

using testing::HasSubstr;

KernelBinary ptx_binary(TensorMapBoxes maps) {
  KernelBinary kb;
  kb.key = "k";
  kb.contract_text = "c";
  kb.target = Target::kSm90;
  kb.format = BinaryFormat::kPtx;
  kb.symbol = "gatejit_mma_bf16_sigmoid_boundary";
  kb.geometry = {128, 64, false, 64, 2, 65584};
  kb.geometry.tensor_maps = maps;
  kb.toolchain = "tc";
  kb.report_json = "{}";
  kb.code = {'.', 'v', 'e', 'r'};
  return kb;
}

// "GJKB" | version | meta length | meta | code length | code | XXH3-64, as
// a writer of `version` laid it out.
std::vector<uint8_t> blob(uint32_t version, const nlohmann::json &meta, const std::vector<uint8_t> &code) {
  std::vector<uint8_t> out = {'G', 'J', 'K', 'B'};
  auto u32 = [&](uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(uint8_t(v >> (8 * i)));
  };
  auto u64 = [&](uint64_t v) {
    for (int i = 0; i < 8; ++i) out.push_back(uint8_t(v >> (8 * i)));
  };
  const std::string text = meta.dump();
  u32(version);
  u32(uint32_t(text.size()));
  out.insert(out.end(), text.begin(), text.end());
  u64(code.size());
  out.insert(out.end(), code.begin(), code.end());
  u64(XXH3_64bits(out.data(), out.size()));
  return out;
}

nlohmann::json meta_of(const std::vector<uint8_t> &encoded) {
  uint32_t len = 0;
  for (int i = 0; i < 4; ++i) len |= uint32_t(encoded[8 + i]) << (8 * i);
  return nlohmann::json::parse(encoded.begin() + 12, encoded.begin() + 12 + len);
}

TEST(KernelBinary, TensorMapBoxesRoundTrip) {
  const auto encoded = encode_kernel_binary(ptx_binary({64, 192, 128}));
  auto decoded = decode_kernel_binary(encoded);
  ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
  EXPECT_TRUE(decoded->geometry.tensor_maps.any());
  EXPECT_EQ(decoded->geometry.tensor_maps.box_k, 64u);
  EXPECT_EQ(decoded->geometry.tensor_maps.weight_rows, 192u);
  EXPECT_EQ(decoded->geometry.tensor_maps.hidden_rows, 128u);
  EXPECT_EQ(decoded->geometry.shared_bytes, 65584u);

  auto none = decode_kernel_binary(encode_kernel_binary(ptx_binary({})));
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->geometry.tensor_maps.any());
}

TEST(KernelBinary, VersionOneEntriesDecodeWithoutTensorMaps) {
  nlohmann::json meta = meta_of(encode_kernel_binary(ptx_binary({})));
  meta.erase("tensor_maps");
  auto decoded = decode_kernel_binary(blob(1, meta, {'p', 't', 'x'}));
  ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
  EXPECT_FALSE(decoded->geometry.tensor_maps.any());
  EXPECT_EQ(decoded->symbol, "gatejit_mma_bf16_sigmoid_boundary");
}

// A version-1 writer knew no tensor maps: a field of that name there is not
// read.
TEST(KernelBinary, VersionOneIgnoresATensorMapsField) {
  const nlohmann::json meta = meta_of(encode_kernel_binary(ptx_binary({64, 64, 64})));
  auto decoded = decode_kernel_binary(blob(1, meta, {'p'}));
  ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
  EXPECT_FALSE(decoded->geometry.tensor_maps.any());
}

TEST(KernelBinary, UnknownVersionsAreRefusedNamingThem) {
  const nlohmann::json meta = meta_of(encode_kernel_binary(ptx_binary({64, 64, 64})));
  for (uint32_t version : {0u, kKernelBinaryVersion + 1}) {
    auto decoded = decode_kernel_binary(blob(version, meta, {'p'}));
    ASSERT_FALSE(decoded.ok());
    EXPECT_EQ(decoded.status().code(), StatusCode::kCorrupt);
    EXPECT_THAT(decoded.status().message(), HasSubstr("version " + std::to_string(version)));
  }
}

// A version-2 entry must say whether its kernel takes tensor maps: one
// without the field would be launched without the arguments it reads.
TEST(KernelBinary, VersionTwoWithoutTensorMapsFieldIsCorrupt) {
  nlohmann::json meta = meta_of(encode_kernel_binary(ptx_binary({})));
  meta.erase("tensor_maps");
  auto decoded = decode_kernel_binary(blob(2, meta, {'p'}));
  ASSERT_FALSE(decoded.ok());
  EXPECT_THAT(decoded.status().message(), HasSubstr("tensor_maps"));
}

// Geometry fields are unsigned 32-bit integers. A float (1e300 would be an
// undefined float-to-int cast, found by the bundle fuzzer), a negative
// integer (it would wrap) or one past 32 bits is corrupt, naming the field.
TEST(KernelBinary, GeometryFieldsMustBeUnsigned32BitIntegers) {
  const nlohmann::json good = meta_of(encode_kernel_binary(ptx_binary({64, 64, 64})));
  for (const char *field : {"block_x", "n_per_block", "m_per_block", "k_blocks", "shared_bytes", "persistent_workgroups"}) {
    for (const nlohmann::json &bad : {nlohmann::json(1e300), nlohmann::json(-1), nlohmann::json(64.0),
                                      nlohmann::json(uint64_t(1) << 32), nlohmann::json("64")}) {
      nlohmann::json meta = good;
      meta[field] = bad;
      auto decoded = decode_kernel_binary(blob(kKernelBinaryVersion, meta, {'p'}));
      ASSERT_FALSE(decoded.ok()) << field << " = " << bad.dump();
      EXPECT_THAT(decoded.status().message(), HasSubstr(field)) << bad.dump();
    }
  }
  for (const char *field : {"box_k", "weight_rows", "hidden_rows"}) {
    nlohmann::json meta = good;
    meta["tensor_maps"][field] = 1e300;
    auto decoded = decode_kernel_binary(blob(kKernelBinaryVersion, meta, {'p'}));
    ASSERT_FALSE(decoded.ok()) << field;
    EXPECT_THAT(decoded.status().message(), HasSubstr(field));
  }
}

// A persistent grid (v79): the field is written only where set (every
// other entry keeps its bytes), round-trips, and launches min(tiles, it)
// workgroups in one dimension; it needs row tiles and no K split.
TEST(KernelBinary, PersistentGridRoundTripsAndBoundsTheLaunch) {
  KernelBinary kb = ptx_binary({});
  kb.geometry.k_blocks = 1;
  kb.geometry.shared_bytes = 16;
  EXPECT_FALSE(meta_of(encode_kernel_binary(kb)).contains("persistent_workgroups"));
  EXPECT_EQ(kb.geometry.launch_grid(12288, 1024), (std::array<uint32_t, 3>{192, 16, 1}));
  kb.geometry.persistent_workgroups = 768;
  const auto encoded = encode_kernel_binary(kb);
  EXPECT_EQ(meta_of(encoded).value("persistent_workgroups", 0), 768);
  auto decoded = decode_kernel_binary(encoded);
  ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
  const LaunchGeometry &g = decoded->geometry;
  EXPECT_EQ(g.persistent_workgroups, 768u);
  // 64 x 64 tiles: 192 x 16 tiles at N = 12288 M = 1024, 192 x 1 at M = 1.
  EXPECT_EQ(g.launch_grid(12288, 1024), (std::array<uint32_t, 3>{768, 1, 1}));
  EXPECT_EQ(g.launch_grid(12288, 1), (std::array<uint32_t, 3>{192, 1, 1}));
  EXPECT_EQ(g.launch_grid(64, 64), (std::array<uint32_t, 3>{1, 1, 1}));
  for (auto bad : {std::pair<const char *, nlohmann::json>{"k_blocks", 2}, {"m_per_block", 0},
                   {"grid_y_is_m", true}, {"persistent_workgroups", uint64_t(1) << 31}}) {
    nlohmann::json meta = meta_of(encoded);
    meta[bad.first] = bad.second;
    auto refused = decode_kernel_binary(blob(kKernelBinaryVersion, meta, kb.code));
    ASSERT_FALSE(refused.ok()) << bad.first;
    EXPECT_THAT(refused.status().message(), HasSubstr("persistent_workgroups")) << bad.first;
  }
}

// Version 3 carries the kernel's argument list; a declared list other than
// the classic one comes back as written, versions 1 and 2 decode with the
// classic list (with the tensor maps where they have boxes).
TEST(KernelBinary, TheDeclaredAbiRoundTripsAndOlderVersionsGetTheClassicOne) {
  KernelBinary kb = ptx_binary({});
  kb.abi = {{AbiArgKind::kPointer, AbiValue::kOut}, {AbiArgKind::kScalar, AbiValue::kM},
            {AbiArgKind::kPointer, AbiValue::kAttn}};
  auto decoded = decode_kernel_binary(encode_kernel_binary(kb));
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(decoded->abi, kb.abi);
  // An empty list is written as the classic one.
  auto classic = decode_kernel_binary(encode_kernel_binary(ptx_binary({64, 64, 64})));
  ASSERT_TRUE(classic.ok()) << classic.status().message();
  EXPECT_EQ(classic->abi, classic_abi(true));
  for (uint32_t version : {1u, 2u}) {
    nlohmann::json meta = meta_of(encode_kernel_binary(ptx_binary(version == 2 ? TensorMapBoxes{64, 64, 64}
                                                                              : TensorMapBoxes{})));
    meta.erase("abi");
    if (version == 1) meta.erase("tensor_maps");
    auto old = decode_kernel_binary(blob(version, meta, {'p'}));
    ASSERT_TRUE(old.ok()) << version << ": " << old.status().message();
    EXPECT_EQ(old->abi, classic_abi(version == 2)) << version;
  }
}

TEST(KernelBinary, AnIllFormedAbiIsCorruptNamingWhatIsWrong) {
  const nlohmann::json good = meta_of(encode_kernel_binary(ptx_binary({})));
  struct Bad {
    nlohmann::json abi;
    const char *says;
  };
  const std::vector<Bad> bad = {
      {nlohmann::json("ptr hidden"), "abi must be a list"},
      {nlohmann::json::array({nlohmann::json::array({"pointer"})}), "[kind, value] pairs"},
      {nlohmann::json::array({nlohmann::json::array({"texture", "hidden"})}), "'texture'"},
      {nlohmann::json::array({nlohmann::json::array({"pointer", "scale"})}), "'scale'"},
      {nlohmann::json::array({nlohmann::json::array({"scalar", "out"})}), "abi[0] = scalar out"},
      {nlohmann::json::array({nlohmann::json::array({"tensor_map", "weight"})}), "tensor map"},
  };
  for (const Bad &b : bad) {
    nlohmann::json meta = good;
    meta["abi"] = b.abi;
    auto decoded = decode_kernel_binary(blob(kKernelBinaryVersion, meta, {'p'}));
    ASSERT_FALSE(decoded.ok()) << b.abi.dump();
    EXPECT_THAT(decoded.status().message(), HasSubstr(b.says)) << b.abi.dump();
  }
  // Boxes to encode tensor maps with, but no tensor map declared: the
  // launcher would pass the kernel two arguments short.
  nlohmann::json meta = meta_of(encode_kernel_binary(ptx_binary({64, 64, 64})));
  meta["abi"] = meta_of(encode_kernel_binary(ptx_binary({})))["abi"];
  auto short_list = decode_kernel_binary(blob(kKernelBinaryVersion, meta, {'p'}));
  ASSERT_FALSE(short_list.ok());
  EXPECT_THAT(short_list.status().message(), HasSubstr("without tensor map arguments"));
}

// An fp8 kernel declares its scales (gate_abi): the entry writes the list
// with ["pointer", "weight_scale"] last and reads it back as it was, on both
// targets; a scalar or a tensor map of the scales is corrupt.
TEST(KernelBinary, AWeightScaleArgumentRoundTrips) {
  KernelBinary ptx = ptx_binary({});
  ptx.symbol = "gatejit_gemv_bf16_wfp8_e4m3_block128_sigmoid_boundary";
  ptx.abi = gate_abi(false, true);
  KernelBinary hsaco = ptx;
  hsaco.target = Target::kGfx950;
  hsaco.format = BinaryFormat::kHsaco;
  hsaco.code = {0x7f, 'E', 'L', 'F'};
  for (const KernelBinary &kb : {ptx, hsaco}) {
    SCOPED_TRACE(binary_format_name(kb.format));
    const std::vector<uint8_t> encoded = encode_kernel_binary(kb);
    const nlohmann::json abi = meta_of(encoded)["abi"];
    ASSERT_TRUE(abi.is_array()) << abi.dump();
    ASSERT_EQ(abi.size(), 12u) << abi.dump();
    EXPECT_EQ(abi.back(), nlohmann::json::array({"pointer", "weight_scale"})) << abi.dump();
    auto decoded = decode_kernel_binary(encoded);
    ASSERT_TRUE(decoded.ok()) << decoded.status().message();
    EXPECT_EQ(decoded->abi, gate_abi(false, true));
    EXPECT_EQ(abi_text(decoded->abi).substr(abi_text(decoded->abi).rfind(", ") + 2), "ptr weight_scale");
    EXPECT_EQ(decoded->symbol, kb.symbol);
  }
  // With tensor maps, the scales come after them.
  KernelBinary tma = ptx_binary({64, 64, 64});
  tma.abi = gate_abi(true, true);
  auto with_maps = decode_kernel_binary(encode_kernel_binary(tma));
  ASSERT_TRUE(with_maps.ok()) << with_maps.status().message();
  EXPECT_EQ(with_maps->abi, gate_abi(true, true));
  EXPECT_EQ(with_maps->abi.back().value, AbiValue::kWeightScale);

  const nlohmann::json good = meta_of(encode_kernel_binary(ptx));
  for (const char *kind : {"scalar", "tensor_map"}) {
    nlohmann::json meta = good;
    meta["abi"].back() = nlohmann::json::array({kind, "weight_scale"});
    auto decoded = decode_kernel_binary(blob(kKernelBinaryVersion, meta, {'p'}));
    ASSERT_FALSE(decoded.ok()) << kind;
    EXPECT_EQ(decoded.status().code(), StatusCode::kCorrupt);
    EXPECT_THAT(decoded.status().message(), HasSubstr(std::string("abi[11] = ") + kind + " weight_scale"));
  }
}

TEST(KernelBinary, TensorMapBoxesOutOfRangeAreCorrupt) {
  // Rows out of range; a K width other than the kernels' 128-byte swizzle
  // row (a stage would land short of what its barrier expects); rows
  // without a width.
  for (TensorMapBoxes bad : {TensorMapBoxes{64, 0, 64}, TensorMapBoxes{64, 64, 257}, TensorMapBoxes{512, 64, 64},
                             TensorMapBoxes{32, 64, 64}, TensorMapBoxes{0, 64, 64}}) {
    auto decoded = decode_kernel_binary(encode_kernel_binary(ptx_binary(bad)));
    ASSERT_FALSE(decoded.ok()) << bad.box_k << " " << bad.weight_rows << " " << bad.hidden_rows;
    EXPECT_THAT(decoded.status().message(), HasSubstr("tensor map boxes"));
  }
  // One stage of both boxes must fit the kernel's shared memory.
  KernelBinary small = ptx_binary({64, 64, 64});
  small.geometry.shared_bytes = 64 * 128 * 2 - 16;
  auto too_big = decode_kernel_binary(encode_kernel_binary(small));
  ASSERT_FALSE(too_big.ok());
  EXPECT_THAT(too_big.status().message(), HasSubstr("within the shared memory"));
  // Only CUDA kernels (sm_90 PTX or cubin) take tensor maps.
  KernelBinary hsaco = ptx_binary({64, 64, 64});
  hsaco.target = Target::kGfx950;
  hsaco.format = BinaryFormat::kHsaco;
  auto decoded = decode_kernel_binary(encode_kernel_binary(hsaco));
  ASSERT_FALSE(decoded.ok());
  EXPECT_THAT(decoded.status().message(), HasSubstr("CUDA kernels only"));
}

// The native-code cache's entries: a cubin keeps the PTX entry's metadata
// (tensor maps included); a format that is not code for the entry's target
// is refused, so a cubin never reaches the HIP loader or an hsaco the CUDA one.
TEST(KernelBinary, CubinEntriesRoundTripAndFormatsMatchTheirTarget) {
  KernelBinary cubin = ptx_binary({64, 64, 64});
  cubin.format = BinaryFormat::kCubin;
  cubin.code = {0x7f, 'E', 'L', 'F', 2, 1};
  auto decoded = decode_kernel_binary(encode_kernel_binary(cubin));
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(decoded->format, BinaryFormat::kCubin);
  EXPECT_EQ(decoded->code, cubin.code);
  EXPECT_EQ(decoded->geometry.tensor_maps.weight_rows, 64u);
  EXPECT_STREQ(binary_format_name(BinaryFormat::kCubin), "cubin");

  for (auto [target, format] : {std::pair{Target::kGfx950, BinaryFormat::kCubin},
                                std::pair{Target::kGfx950, BinaryFormat::kPtx},
                                std::pair{Target::kSm90, BinaryFormat::kHsaco}}) {
    KernelBinary wrong = ptx_binary({});
    wrong.target = target;
    wrong.format = format;
    auto refused = decode_kernel_binary(encode_kernel_binary(wrong));
    ASSERT_FALSE(refused.ok()) << binary_format_name(format);
    EXPECT_THAT(refused.status().message(), HasSubstr("is not code for"));
  }
  nlohmann::json meta = meta_of(encode_kernel_binary(ptx_binary({})));
  meta["format"] = "sass";
  auto unknown = decode_kernel_binary(blob(kKernelBinaryVersion, meta, {1, 2}));
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.status().message(), HasSubstr("unknown format 'sass'"));
}

}  // namespace
}  // namespace gatejit
