// Code-object checks with the real LLVM tools: the hsaco the compiler links
// in process must be what llvm-readelf and llvm-objdump (independent readers)
// say it is, and the report (read by gatejit's own code) must agree with them.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/compiler_test_support.h"
#include "gatejit/compiler/compiler.h"
#include "gatejit/contract.h"
#include "gatejit/kernel_abi.h"
#include "gatejit/kernel_binary.h"
#include "gatejit/template_choice.h"

namespace gatejit {
namespace {

using namespace testing_support;

namespace fs = std::filesystem;
using testing::HasSubstr;


struct CommandResult {
  int rc = -1;
  std::string out;  // stdout and stderr together
};

CommandResult run(const std::string &cmd) {
  CommandResult r;
  FILE *p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// The LLVM tool of the LLVM the compiler links. LLVM_TOOLS_DIR comes from
// CMake; where it is empty, the Debian/apt.llvm.org layout of the LLVM major
// version the compiler's fingerprint names ("llvm-22.1.8"), then the versioned
// name on PATH.
std::string tool(const char *name) {
  static const std::string major = [] {
    std::smatch m;
    const std::string fp = compiler::fingerprint();
    return std::regex_search(fp, m, std::regex(R"(llvm-(\d+)\.)")) ? m[1].str() : std::string("22");
  }();
  for (const std::string &dir : {std::string(LLVM_TOOLS_DIR), "/usr/lib/llvm-" + major + "/bin"}) {
    if (dir.empty()) continue;
    const fs::path p = fs::path(dir) / name;
    if (fs::exists(p)) return p.string();
  }
  return std::string(name) + "-" + major;
}

void write_bytes(const fs::path &path, const std::vector<uint8_t> &bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}


// The kernel's scalar fields from llvm-readelf's YAML rendering of the
// amdhsa metadata note, e.g. "    .vgpr_count:     68". Only kernel-level
// keys (indented 4, or "  - " for a kernel's first key) count: the entries of
// .args are nested deeper and may carry keys of their own (.name, .size).
std::map<std::string, std::string> readelf_kernel_fields(const std::string &notes) {
  static const std::regex line(R"(^(  - |    )\.(\w+):\s+(\S+)\s*$)");
  static const char *kWanted[] = {"name", "symbol", "vgpr_count", "sgpr_count", "agpr_count",
                                  "group_segment_fixed_size", "private_segment_fixed_size",
                                  "kernarg_segment_size", "wavefront_size", "vgpr_spill_count",
                                  "sgpr_spill_count"};
  std::map<std::string, std::string> fields;
  std::istringstream in(notes.substr(std::min(notes.size(), notes.find("amdhsa.kernels:"))));
  std::string l;
  std::smatch m;
  while (std::getline(in, l)) {
    if (!std::regex_match(l, m, line)) continue;
    for (const char *w : kWanted)
      if (m[2] == w && !fields.count(w)) fields[w] = m[3];
  }
  return fields;
}

// How many disassembled instructions have this mnemonic.
int count_mnemonic(const std::string &disasm, const std::string &mnemonic) {
  std::istringstream in(disasm);
  std::string l;
  int n = 0;
  while (std::getline(in, l)) {
    const size_t b = l.find_first_not_of(" \t");
    if (b == std::string::npos || l[0] != '\t') continue;  // instructions are tab-indented
    const size_t e = l.find_first_of(" \t", b);
    if (l.compare(b, e - b, mnemonic) == 0 && e - b == mnemonic.size()) ++n;
  }
  return n;
}

int histogram_count(const nlohmann::json &report, const std::string &mnemonic) {
  return report["instructions"]["histogram"].value(mnemonic, 0);
}

// Global/buffer loads narrower than 16 bytes.
int narrow_global_loads(const nlohmann::json &report) {
  int n = 0;
  for (const auto &[op, count] : report["instructions"]["histogram"].items()) {
    const bool vmem_load = op.rfind("global_load_", 0) == 0 || op.rfind("buffer_load_", 0) == 0;
    if (vmem_load && op.find("dwordx4") == std::string::npos) n += count.get<int>();
  }
  return n;
}

struct CrossCheckCase {
  const char *name;
  Target target;
  int64_t m;
  TemplateKind tmpl;
};

class ReportMatchesReadelf : public testing::TestWithParam<CrossCheckCase> {};

TEST_P(ReportMatchesReadelf, RegisterAndSegmentNumbers) {
  const CrossCheckCase &p = GetParam();
  Contract c = seed();
  c.target = p.target;
  c.m = p.m;
  c.template_kind = p.tmpl;
  auto compiled = compiler::compile(c);
  ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
  TempDir dir;
  const fs::path hsaco = dir / "kernel.hsaco";
  write_bytes(hsaco, compiled->binary.code);

  const CommandResult notes = run(tool("llvm-readelf") + " --notes " + hsaco.string());
  ASSERT_EQ(notes.rc, 0) << notes.out;
  const std::string target_id = target_triple_id(p.target);
  EXPECT_THAT(notes.out, HasSubstr("NT_AMDGPU_METADATA"));
  EXPECT_THAT(notes.out, HasSubstr("amdhsa.kernels:"));
  EXPECT_THAT(notes.out, HasSubstr("amdhsa.target:   " + target_id));
  EXPECT_EQ(compiled->report.value("target_id", ""), target_id);

  const auto f = readelf_kernel_fields(notes.out);
  const nlohmann::json &k = compiled->report["kernels"][0];
  auto field = [&](const char *key) -> std::string {
    auto it = f.find(key);
    return it == f.end() ? "<missing " + std::string(key) + ">" : it->second;
  };
  EXPECT_EQ(field("name"), compiled->binary.symbol);
  EXPECT_EQ(field("symbol"), k.value("symbol", ""));
  EXPECT_EQ(field("vgpr_count"), std::to_string(k.value("vgpr_count", -1)));
  EXPECT_EQ(field("sgpr_count"), std::to_string(k.value("sgpr_count", -1)));
  EXPECT_EQ(field("agpr_count"), std::to_string(k.value("agpr_count", -1)));
  EXPECT_EQ(field("group_segment_fixed_size"), std::to_string(k.value("lds_bytes", -1)));
  EXPECT_EQ(field("private_segment_fixed_size"), std::to_string(k.value("scratch_bytes", -1)));
  EXPECT_EQ(field("kernarg_segment_size"), std::to_string(k.value("kernarg_bytes", -1)));
  EXPECT_EQ(field("wavefront_size"), std::to_string(k.value("wave_size", -1)));
  EXPECT_EQ(field("vgpr_spill_count"), std::to_string(k.value("vgpr_spill_count", -1)));
  EXPECT_EQ(field("sgpr_spill_count"), std::to_string(k.value("sgpr_spill_count", -1)));

  // The kernel ABI and what the issue requires of every kernel: no scratch.
  EXPECT_EQ(k.value("kernarg_bytes", -1), kKernelArgBytes);
  EXPECT_EQ(k.value("wave_size", -1), 64);
  EXPECT_EQ(k.value("scratch_bytes", -1), 0);
  EXPECT_EQ(k.value("vgpr_spill_count", -1), 0);
  EXPECT_EQ(k.value("sgpr_spill_count", -1), 0);

  // llvm-objdump decodes it and the report's histogram counts the same
  // instructions for the mnemonics the checks below rely on.
  const std::string cpu = target_name(p.target);
  const CommandResult dis = run(tool("llvm-objdump") + " -d --mcpu=" + cpu + " " + hsaco.string());
  ASSERT_EQ(dis.rc, 0) << dis.out;
  EXPECT_THAT(dis.out, HasSubstr("<" + compiled->binary.symbol + ">:"));
  EXPECT_THAT(dis.out, HasSubstr("s_endpgm"));
  EXPECT_THAT(dis.out, testing::Not(HasSubstr("<unknown>")));
  for (const char *op : {"global_load_dwordx4", "global_load_ushort", "v_add_f32_dpp", "v_mov_b32_dpp",
                         "s_endpgm", "global_store_short"})
    EXPECT_EQ(count_mnemonic(dis.out, op), histogram_count(compiled->report, op)) << op;
}

INSTANTIATE_TEST_SUITE_P(
    Amdgpu, ReportMatchesReadelf,
    testing::Values(CrossCheckCase{"gfx950_gemv_m1", Target::kGfx950, 1, TemplateKind::kAuto},
                    CrossCheckCase{"gfx950_gemv_m16", Target::kGfx950, 16, TemplateKind::kGemv},
                    CrossCheckCase{"gfx942_gemv_m1", Target::kGfx942, 1, TemplateKind::kAuto},
                    CrossCheckCase{"gfx950_generic", Target::kGfx950, 1, TemplateKind::kGeneric},
                    CrossCheckCase{"gfx942_generic", Target::kGfx942, 4, TemplateKind::kGeneric}),
    [](const auto &info) { return std::string(info.param.name); });

// The seed contract's code: 16-byte weight loads, DPP cross-lane reduction,
// no LDS, no scratch. Checked in the objdump text and the report alike.
class SeedGemvCode : public testing::TestWithParam<std::pair<Target, int64_t>> {};

TEST_P(SeedGemvCode, VectorLoadsAndDppReduction) {
  Contract c = seed();
  c.target = GetParam().first;
  c.m = GetParam().second;
  c.template_kind = TemplateKind::kGemv;  // gfx950 M = 16 takes the mma's thin grid rows since v84
  auto compiled = compiler::compile(c);
  ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
  const nlohmann::json &r = compiled->report;
  ASSERT_EQ(r.value("template", ""), "gemv");
  TempDir dir;
  const fs::path hsaco = dir / "seed.hsaco";
  write_bytes(hsaco, compiled->binary.code);
  const CommandResult dis =
      run(tool("llvm-objdump") + " -d --mcpu=" + target_name(c.target) + " " + hsaco.string());
  ASSERT_EQ(dis.rc, 0) << dis.out;

  // 16-byte vector loads, in the disassembly and in the report.
  const int x4 = count_mnemonic(dis.out, "global_load_dwordx4") + count_mnemonic(dis.out, "buffer_load_dwordx4");
  EXPECT_GT(x4, 0) << "no 16-byte loads in\n" << dis.out;
  EXPECT_EQ(x4, histogram_count(r, "global_load_dwordx4") + histogram_count(r, "buffer_load_dwordx4"));
  // Every weight (and hidden) element is read by a 16-byte load: the only
  // narrower vector-memory loads allowed are the attn reads, one element per
  // (output row, output column of the wave). A narrow weight (or hidden) load
  // would add at least one more.
  const LaunchGeometry &geo = compiled->binary.geometry;
  const uint32_t waves_per_block = geo.block_x / uint32_t(target_wave_size(c.target));
  ASSERT_GT(waves_per_block, 0u);
  const int64_t columns_per_wave = std::max<int64_t>(1, geo.n_per_block / waves_per_block);
  EXPECT_LE(narrow_global_loads(r), c.m * columns_per_wave) << r["instructions"].dump();
  // Both operands of the dot product stream through x4 loads: at least one per
  // hidden row plus one for the weight row.
  EXPECT_GE(x4, c.m + 1);

  // Cross-lane reduction by DPP, not through LDS. LDS holds only the
  // epilogue's sums (M x the block's columns, v47: the outputs are finished
  // in pieces of several columns): one write a lane and one vector read a
  // piece, a handful of ds instructions.
  int dpp = 0, ds = 0;
  for (const auto &[op, n] : r["instructions"]["histogram"].items()) {
    if (op.size() > 4 && op.ends_with("_dpp")) dpp += n.get<int>();
    if (op.rfind("ds_", 0) == 0) ds += n.get<int>();
  }
  EXPECT_GT(dpp, 0) << r["instructions"].dump();
  EXPECT_LE(ds, 4) << r["instructions"].dump();
  EXPECT_THAT(dis.out, HasSubstr("_dpp "));
  EXPECT_EQ(r["kernels"][0].value("lds_bytes", -1), int64_t(c.m) * geo.n_per_block * 4);
  EXPECT_EQ(r["kernels"][0].value("scratch_bytes", -1), 0);

  // Occupancy: the kernel is scheduled for the waves per SIMD its grid
  // places (WAVES_PER_EU, "amdgpu-waves-per-eu"); a SIMD's 512 registers a
  // lane hold that many waves (research/gfx950-model.md).
  const int64_t waves = r["tuning"].value("WAVES_PER_EU", 0);
  ASSERT_GE(waves, 1) << r["tuning"].dump();
  EXPECT_LE(r["kernels"][0].value("vgpr_count", 1000) + r["kernels"][0].value("agpr_count", 0), 512 / waves);
  EXPECT_TRUE(r["gates"]["occupancy_holds_the_grid"].value("passed", false)) << r["gates"].dump();
  // gfx950 multiplies packed bf16 pairs with the dot instruction (as the seed
  // kernel does), not scalar converts and FMAs: 4 dots per 16-byte weight
  // vector and hidden row, and no fp32 FMA outside the epilogue.
  if (c.target == Target::kGfx950) {
    const int dots = histogram_count(r, "v_dot2c_f32_bf16_e32") + histogram_count(r, "v_dot2_f32_bf16");
    EXPECT_GE(dots, 4 * c.m) << r["instructions"].dump();
    EXPECT_EQ(count_mnemonic(dis.out, "v_dot2c_f32_bf16_e32") + count_mnemonic(dis.out, "v_dot2_f32_bf16"), dots);
    EXPECT_EQ(histogram_count(r, "v_pk_fma_f32"), 0) << r["instructions"].dump();
  }
}

INSTANTIATE_TEST_SUITE_P(Amdgpu, SeedGemvCode,
                         testing::Values(std::pair{Target::kGfx950, int64_t(1)},
                                         std::pair{Target::kGfx942, int64_t(1)},
                                         std::pair{Target::kGfx950, int64_t(16)}),
                         [](const auto &info) {
                           return std::string(target_name(info.param.first)) + "_m" +
                                  std::to_string(info.param.second);
                         });

// Test names for (dtype, M) parameters: "bf16_m128".
std::string dtype_m_name(const testing::TestParamInfo<std::pair<DType, int64_t>> &info) {
  return std::string(dtype_name(info.param.first)) + "_m" + std::to_string(info.param.second);
}

// The mma template's gfx950 code (issue 6): MFMA 16x16x32 instructions, one
// per (hidden tile, step) in the unrolled loop; every weight and hidden load
// 16 bytes wide; no scratch; LDS (the K-split partials only) within gfx950's
// 160 KiB; and the VGPR count that sets the occupancy docs/templates.md states.
class MmaGfx950Code : public testing::TestWithParam<std::pair<DType, int64_t>> {};

// The seed contract for `target` with every dtype `dtype` and M = m.
Contract seed_with(Target target, DType dtype, int64_t m) {
  Contract c = seed(target);
  c.dtype_hidden = c.dtype_weight = c.dtype_attn = c.dtype_out = dtype;
  c.m = m;
  return c;
}

TEST_P(MmaGfx950Code, MfmaVectorLoadsNoScratch) {
  const Contract c = seed_with(Target::kGfx950, GetParam().first, GetParam().second);
  auto compiled = compiler::compile(c);
  ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
  const nlohmann::json &r = compiled->report;
  ASSERT_EQ(r.value("template", ""), "mma") << r.value("reason", "");
  TempDir dir;
  const fs::path hsaco = dir / "mma.hsaco";
  write_bytes(hsaco, compiled->binary.code);
  const CommandResult dis = run(tool("llvm-objdump") + " -d --mcpu=gfx950 " + hsaco.string());
  ASSERT_EQ(dis.rc, 0) << dis.out;
  const std::string mfma = c.dtype_out == DType::kBF16 ? "v_mfma_f32_16x16x32_bf16" : "v_mfma_f32_16x16x32_f16";
  const int64_t hidden_tiles = std::min<int64_t>((c.m + 15) / 16, 8);
  EXPECT_GE(count_mnemonic(dis.out, mfma), hidden_tiles) << "no " << mfma << " in\n" << dis.out;
  EXPECT_EQ(count_mnemonic(dis.out, mfma), histogram_count(r, mfma));
  // Operands: 16-byte loads only; the narrow loads are the epilogue's attn
  // reads (4 accumulator elements per lane and tile pair; a wave covers
  // n_per_block / 16 weight tiles of 16 rows).
  const int64_t weight_tiles = compiled->binary.geometry.n_per_block / 16;
  EXPECT_GT(histogram_count(r, "global_load_dwordx4"), 0);
  EXPECT_LE(narrow_global_loads(r), 4 * hidden_tiles * weight_tiles) << r["instructions"].dump();
  const nlohmann::json &k = r["kernels"][0];
  EXPECT_EQ(k.value("scratch_bytes", -1), 0);
  EXPECT_EQ(k.value("vgpr_spill_count", -1), 0);
  EXPECT_GT(k.value("lds_bytes", 0), 0);             // the K-split partials
  EXPECT_LE(k.value("lds_bytes", 1 << 30), 160 * 1024);  // gfx950 LDS per workgroup
  // Registers (arch + acc) for the waves per SIMD the grid places.
  const int64_t waves = r["tuning"].value("WAVES_PER_EU", 0);
  ASSERT_GE(waves, 1) << r["tuning"].dump();
  EXPECT_LE(k.value("vgpr_count", 1000) + k.value("agpr_count", 0), 512 / waves) << k.dump();
}

INSTANTIATE_TEST_SUITE_P(Gfx950, MmaGfx950Code,
                         testing::Values(std::pair{DType::kBF16, int64_t(32)}, std::pair{DType::kBF16, int64_t(128)},
                                         std::pair{DType::kF16, int64_t(64)}, std::pair{DType::kBF16, int64_t(512)}),
                         dtype_m_name);

// v70: gfx950 M = 17-48 (16-bit weights) skips the K split where blocks of
// 16 columns and 16 hidden rows already fill the CUs; v83: where they would
// not (N = 1536 M <= 32: 192 blocks for 256 CUs; the gate's rule), a fixed
// M's grid rows take fewer rows (ThinGridRowsWhereSixteenRowBlocksLeaveCusIdle).
// The seed contract on gfx950 at another M and N.
Contract gfx950_seed_shape(int64_t m, int64_t n) {
  Contract c = seed(Target::kGfx950);
  c.m = m;
  c.n = n;
  return c;
}

TEST(Gfx950Plan, UnsplitWhereSixteenRowBlocksFillTheCus) {
  struct Case {
    int64_t m, n;
    bool unsplit;
  };
  for (const Case &k : {Case{17, 1536, true}, Case{32, 1536, true}, Case{33, 1536, true}, Case{48, 1536, true},
                        Case{64, 1536, false}, Case{17, 3072, true}, Case{48, 3072, true}, Case{64, 3072, false}}) {
    SCOPED_TRACE("m=" + std::to_string(k.m) + " n=" + std::to_string(k.n));
    const Contract c = gfx950_seed_shape(k.m, k.n);
    auto compiled = compiler::compile(c);
    ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
    const nlohmann::json &r = compiled->report;
    ASSERT_EQ(r.value("template", ""), "mma");
    const nlohmann::json &t = r["tuning"];
    const int64_t blocks = r["grid"][0].get<int64_t>() * r["grid"][1].get<int64_t>();
    if (k.unsplit) {
      EXPECT_EQ(t.value("SPLITS", 0), 1) << t.dump();
      EXPECT_EQ(t.value("RT", 0), 1) << t.dump();
      EXPECT_EQ(t.value("MT", 0), 1) << t.dump();
      EXPECT_GE(blocks, 256);
    } else {
      EXPECT_GT(t.value("SPLITS", 0), 1) << t.dump();
    }
    EXPECT_TRUE(r["gates"]["workgroups_fill_cus"].value("passed", false)) << r["gates"].dump();
  }
}

// v83: at N = 1536 M = 17-32 (v84: 15-32), 16-row blocks are 96 x 2 = 192 workgroups for
// 256 CUs. A fixed M then takes 3 grid rows of ceil(M / 3) rows each (the
// tiles' other rows clamped copies, never stored) and no K split: 288
// workgroups, every gate passing, and the launch's grid y follows the
// stride (geometry.m_per_block). A dynamic M keeps the split (its grid rows
// follow the launch's M), and so does N = 768 (6 grid rows: more weight
// re-reads than kMostThinGridRows allows). N = 1024 takes 4 (v86).
TEST(Gfx950Plan, ThinGridRowsWhereSixteenRowBlocksLeaveCusIdle) {
  // (v84 took M = 15-16 here too; since v99 the loader gives N = 1536 the
  // gemv there: its 288 workgroups put two on some CUs, and the rows' attn
  // round trip after the reduction makes them slower in the model. N = 2048,
  // 128 x 2 workgroups, keeps them.)
  for (const int64_t m : {15, 16}) {
    auto one_five = compiler::compile(gfx950_seed_shape(m, 1536));
    ASSERT_TRUE(one_five.ok()) << one_five.status().to_string();
    EXPECT_EQ(one_five->report.value("template", ""), "gemv") << m;
    auto two_rows = compiler::compile(gfx950_seed_shape(m, 2048));
    ASSERT_TRUE(two_rows.ok()) << two_rows.status().to_string();
    EXPECT_EQ(two_rows->report.value("template", ""), "mma") << m;
    EXPECT_EQ(two_rows->report["grid"], nlohmann::json::parse("[128, 2, 1]")) << m;
  }
  for (const int64_t m : {17, 24, 32}) {
    SCOPED_TRACE("m=" + std::to_string(m));
    auto compiled = compiler::compile(gfx950_seed_shape(m, 1536));
    ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
    const nlohmann::json &r = compiled->report;
    ASSERT_EQ(r.value("template", ""), "mma");
    const nlohmann::json &t = r["tuning"];
    EXPECT_EQ(t.value("SPLITS", 0), 1) << t.dump();
    EXPECT_EQ(t.value("M_STRIDE", 0), (m + 2) / 3) << t.dump();
    EXPECT_EQ(compiled->binary.geometry.m_per_block, uint32_t((m + 2) / 3));
    EXPECT_EQ(r["grid"], nlohmann::json::parse("[96, 3, 1]"));
    EXPECT_EQ(r["model"].value("workgroups", 0), 288);
    // Hidden bytes through L2: M rows for each of the 96 grid columns.
    EXPECT_EQ(r["model"].value("l2_bytes", int64_t(0)),
              3 * 1536 * 7168 * 2 + 96 * m * 7168 * 2 + m * 1536 * 4);
    for (const auto &[name, gate] : r["gates"].items())
      EXPECT_TRUE(gate.value("passed", false)) << name << ": " << gate.dump();
  }
  Contract dynamic = gfx950_seed_shape(1, 1536);
  dynamic.m_dynamic = true;
  dynamic.m = 0;
  dynamic.m_max = 32;
  auto d = compiler::compile(dynamic);
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  EXPECT_GT(d->report["tuning"].value("SPLITS", 0), 1) << d->report["tuning"].dump();
  // v89: past K = 7168 the thin rows pin the occupancy their grid needs
  // (amdgpu-waves-per-eu's minimum = the 8 waves a SIMD it places). Without
  // it LLVM unrolled the K loop into 68 (K = 8192) to 100 (K = 16384) VGPRs
  // and the occupancy gate failed (v87 then kept the split). A grid row of
  // more than kThinMostRowsPastK rows (M = 24: 8) keeps the split there:
  // too little weight in flight. So does K = 9216 (an odd count of steps a
  // wave, UNROLL 1: thin_rows_serve_k).
  for (const auto &[m, k] : std::vector<std::pair<int64_t, int64_t>>{
           {17, 8192}, {18, 8192}, {24, 8192}, {17, 16384}, {32, 8192}, {17, 9216}}) {  // (M = 16: the gemv, v99)
    SCOPED_TRACE("m=" + std::to_string(m) + " k=" + std::to_string(k));
    Contract long_k = gfx950_seed_shape(m, 1536);
    long_k.k = long_k.ld_hidden = long_k.ld_weight = k;
    auto lk = compiler::compile(long_k);
    ASSERT_TRUE(lk.ok()) << lk.status().to_string();
    const nlohmann::json &t = lk->report["tuning"];
    const bool thin = (m + 2) / 3 <= kThinMostRowsPastK && thin_rows_serve_k(k);
    EXPECT_EQ(t.value("SPLITS", 0) == 1, thin) << t.dump();
    if (thin) {
      EXPECT_EQ(t.value("M_STRIDE", 0), (m + 2) / 3) << t.dump();
      EXPECT_EQ(t.value("MIN_WAVES_PER_EU", 0), 8) << t.dump();
      EXPECT_EQ(t.value("WAVES_PER_EU", 0), 8) << t.dump();
      EXPECT_LE(lk->report["kernels"][0].value("vgpr_count", 999), 64);
      EXPECT_EQ(lk->report["kernels"][0].value("scratch_bytes", -1), 0);
    }
    for (const auto &[name, gate] : lk->report["gates"].items())
      EXPECT_TRUE(gate.value("passed", false)) << name << ": " << gate.dump();
  }
  {
    // M = 16 past K = 7168 keeps the thin rows where they place one
    // workgroup a CU (v99): N = 1024, 64 x 4.
    Contract decode = gfx950_seed_shape(16, 1024);
    decode.k = decode.ld_hidden = decode.ld_weight = 8192;
    auto d16 = compiler::compile(decode);
    ASSERT_TRUE(d16.ok()) << d16.status().to_string();
    EXPECT_EQ(d16->report.value("template", ""), "mma");
    EXPECT_EQ(d16->report["grid"], nlohmann::json::parse("[64, 4, 1]"));
    EXPECT_EQ(d16->report["tuning"].value("SPLITS", 0), 1);
    for (const auto &[name, gate] : d16->report["gates"].items())
      EXPECT_TRUE(gate.value("passed", false)) << name << ": " << gate.dump();
  }
  auto n768 = compiler::compile(gfx950_seed_shape(32, 768));
  ASSERT_TRUE(n768.ok()) << n768.status().to_string();
  EXPECT_GT(n768->report["tuning"].value("SPLITS", 0), 1) << n768->report["tuning"].dump();
  EXPECT_EQ(n768->report["tuning"].value("M_STRIDE", 0), 32);
  // N = 1024 (v86: 4 grid rows) up to M = 32. Above it the split: 4 grid
  // rows of 9-11 predicted faster at K = 7168 but failed the in-flight gate
  // at most other K (perf-notes v89, "Not taken").
  for (const int64_t m : {32, 40}) {
    SCOPED_TRACE("n=1024 m=" + std::to_string(m));
    auto n1024 = compiler::compile(gfx950_seed_shape(m, 1024));
    ASSERT_TRUE(n1024.ok()) << n1024.status().to_string();
    if (m > 32) {
      EXPECT_GT(n1024->report["tuning"].value("SPLITS", 0), 1) << n1024->report["tuning"].dump();
    } else {
      EXPECT_EQ(n1024->report["grid"], nlohmann::json::parse("[64, 4, 1]"));
      EXPECT_EQ(n1024->report["tuning"].value("M_STRIDE", 0), (m + 3) / 4);
    }
    for (const auto &[name, gate] : n1024->report["gates"].items())
      EXPECT_TRUE(gate.value("passed", false)) << name << ": " << gate.dump();
  }
}

// gfx950's tiled shapes (kernel_plan.cpp, amd_tile_shape), each where the
// model puts it ahead of the register-streamed form: 128 x 64 where the
// grid holds three a CU (v74, about 1.6x), and from M = 128 in one round of
// two a CU 64 x 128 tiles where they fill it at least three quarters (v77)
// and 64 x 64 tiles (v76; no slower at N = 1536 M = 128, +0.7%), and from
// M = 97 where those tiles fill at most half the round (v82: not at
// N = 12288), and from M = 49 where the register-streamed form's split
// also needs more than one round (v85). Each stages its epilogue, and every gate passes but the one
// listed for N = 1536 M = 256. Outside them, the register-streamed form.
TEST(Gfx950Plan, TiledShapeWhereItsGridFillsWholeRounds) {
  struct Case {
    int64_t m, n, bn, bm, stages;  // bn = 0: the register-streamed form
  };
  // v85: M = 49-96 where the register-streamed form's K split needs more
  // than a round (N = 3072, 4096), not where it fits one (N = 1536, 2048
  // at M = 64). v98: from M = 65 where the tiles' own split polls (N = 1536,
  // 2048), not where it would meet by arrival (N = 1024: 16 splits).
  for (const Case &k : {Case{64, 1536, 0, 0, 0}, Case{64, 2048, 0, 0, 0}, Case{49, 3072, 64, 64, 4},
                        Case{80, 3072, 64, 64, 4}, Case{96, 4096, 64, 64, 4}, Case{64, 12288, 0, 0, 0},
                        Case{96, 1536, 64, 64, 4}, Case{65, 2048, 64, 64, 4}, Case{80, 1024, 0, 0, 0},
                        Case{100, 1536, 64, 64, 4}, Case{112, 3072, 64, 64, 4},
                        Case{112, 12288, 0, 0, 0}, Case{128, 1536, 64, 64, 4}, Case{256, 1536, 64, 64, 4},
                        Case{256, 3072, 128, 128, 4}, Case{512, 1536, 128, 128, 4},
                        Case{1024, 1536, 128, 128, 4}, Case{768, 1536, 128, 128, 4}, Case{128, 12288, 64, 64, 4},
                        Case{2048, 1536, 64, 128, 3}, Case{1024, 3072, 64, 128, 3}, Case{256, 12288, 64, 128, 3},
                        Case{768, 3072, 0, 0, 0}, Case{384, 12288, 0, 0, 0}, Case{4096, 1536, 128, 64, 2},
                        Case{2048, 3072, 128, 64, 2}, Case{512, 12288, 128, 64, 2}, Case{1024, 12288, 128, 64, 2},
                        Case{4096, 3072, 128, 64, 2}}) {
    SCOPED_TRACE("m=" + std::to_string(k.m) + " n=" + std::to_string(k.n));
    const Contract c = gfx950_seed_shape(k.m, k.n);
    auto compiled = compiler::compile(c);
    ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
    const nlohmann::json &r = compiled->report;
    ASSERT_EQ(r.value("template_file", ""), k.bn ? "mma_tiled" : "mma");
    if (!k.bn) continue;
    const nlohmann::json &t = r["tuning"];
    EXPECT_EQ(t.value("BN", 0), k.bn);
    EXPECT_EQ(t.value("BM", 0), k.bm);
    EXPECT_EQ(t.value("STAGES", 0), k.stages);
    EXPECT_EQ(t.value("EPI_STAGED", 0), 1);
    // 4 waves a block, but for the 128 x 128 tiles' 8 (v96): the model did
    // not see what 8-wave 64 x 128 blocks cost (24-43% slower on the H200
    // where it put them level; perf-notes, session 17), and did see 8-wave
    // 128 x 128 blocks (within 10% at 10 rows, v72 and v96).
    const bool wide = k.bn == 128 && k.bm == 128;
    EXPECT_EQ(r["workgroup_size"][0].get<int64_t>() * r["workgroup_size"][1].get<int64_t>() *
                  r["workgroup_size"][2].get<int64_t>(),
              wide ? 512 : 256);
    for (const auto &[gate, verdict] : r["gates"].items())
      EXPECT_TRUE(!verdict.value("applies", false) || verdict.value("passed", false) ||
                  (gate == "weight_bytes_in_flight" && k.n == 1536 && k.m == 256))
          << gate << ": " << verdict.dump();
    const double tiled = r["model"]["predicted_us"].get<double>();
    ScopedMmaTuning streamed{"tiled=0"};
    auto other = compiler::compile(c);
    ASSERT_TRUE(other.ok()) << other.status().to_string();
    const double streamed_us = other->report["model"]["predicted_us"].get<double>();
    EXPECT_LT(tiled, (wide ? 0.9 : k.bn == 128 ? 0.8 : k.bm == 128 ? 0.9 : 1.01) * streamed_us);
  }
}

// v96: gfx950's 128 x 128 tiles of 8 waves (2 x 4 of 64 x 32), 4 stages,
// one workgroup a CU, where M from 256 fills its 128-row tiles at least 7/8
// and a K split of 2-5 fills one round of the 256 CUs. Their polls go in
// rounds of 64 registers where every split at once would not fit beside the
// rest of an 8-wave tail (M = 512: 5 splits in one round spilled), so every
// gate passes with no scratch; and the model puts them ahead of the 64 x 64
// tiles (tile128=0) wherever they are taken.
TEST(Gfx950Plan, WideTilesWhereTheirKSplitFillsOneRound) {
  struct Case {
    int64_t m, n, splits, round;  // splits 0: not taken
  };
  for (const Case &k : {Case{448, 1536, 5, 2}, Case{512, 1536, 5, 2}, Case{640, 1536, 4, 4}, Case{768, 1536, 3, 3},
                        Case{1024, 1536, 2, 2}, Case{256, 3072, 5, 2}, Case{384, 3072, 3, 3}, Case{256, 1536, 0, 0},
                        Case{384, 1536, 0, 0}, Case{192, 3072, 0, 0}, Case{320, 3072, 0, 0}, Case{128, 6144, 0, 0},
                        Case{2048, 1536, 0, 0}}) {
    SCOPED_TRACE("m=" + std::to_string(k.m) + " n=" + std::to_string(k.n));
    const Contract c = gfx950_seed_shape(k.m, k.n);
    auto compiled = compiler::compile(c);
    ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
    const nlohmann::json &r = compiled->report;
    const nlohmann::json &t = r["tuning"];
    const bool wide = t.value("BN", 0) == 128 && t.value("BM", 0) == 128;
    EXPECT_EQ(wide, k.splits > 0) << t.dump();
    if (!wide) continue;
    EXPECT_EQ(r["workgroup_size"][0].get<int64_t>(), 512);
    EXPECT_EQ(t.value("STAGES", 0), 4);
    EXPECT_EQ(t.value("SPLITS", 0), k.splits);
    EXPECT_EQ(t.value("SPLIT_POLL", 0), 1);
    EXPECT_EQ(t.value("SPLIT_ROUND", 0), k.round);
    for (const auto &[gate, verdict] : r["gates"].items())
      EXPECT_TRUE(!verdict.value("applies", false) || verdict.value("passed", false)) << gate << ": " << verdict.dump();
    EXPECT_LE(r["kernels"][0].value("vgpr_count", 999), 256);  // 2 waves a SIMD
    const double wide_us = r["model"]["predicted_us"].get<double>();
    ScopedMmaTuning narrow{"tile128=0"};
    auto other = compiler::compile(c);
    ASSERT_TRUE(other.ok()) << other.status().to_string();
    EXPECT_NE(other->report["tuning"].value("BM", 0), 128);
    EXPECT_LT(wide_us, other->report["model"]["predicted_us"].get<double>());
  }
}

// v96 and v98 take their tiles only where each split's K loop is long
// against its meeting: the 128 x 128 tiles from K = 4096, the 64 x 64 tiles
// at M = 65-96 where a split has at least two rings of K tiles. Shorter, the
// other plan (fewer splits, or the register-streamed form) predicts faster,
// and the planner keeps it (a review found K = 512-2048 rows taken and
// predicted up to 1.6x slower).
TEST(Gfx950Plan, NewTileShapesOnlyWhereTheKLoopIsLong) {
  struct Case {
    int64_t m, n, k;
    const char *shape;        // "wide": 128 x 128; "tiles": 64 x 64; "streamed": the register-streamed form
    const char *alternative;  // the override that gives the other plan
  };
  for (const Case &k : {Case{512, 1536, 4096, "wide", "tile128=0"}, Case{768, 1536, 2048, "tiles", "tile128=1"},
                        Case{1024, 1536, 1024, "tiles", "tile128=1"}, Case{512, 3072, 512, "tiles", "tile128=1"},
                        Case{96, 2048, 4096, "tiles", "tiled=0"}, Case{80, 2048, 2048, "streamed", "tiled=1"},
                        Case{65, 4096, 1024, "streamed", "tiled=1"}, Case{65, 1280, 4096, "streamed", "tiled=1"}}) {
    SCOPED_TRACE("m=" + std::to_string(k.m) + " n=" + std::to_string(k.n) + " k=" + std::to_string(k.k));
    Contract c = gfx950_seed_shape(k.m, k.n);
    c.k = k.k, c.ld_hidden = k.k, c.ld_weight = k.k;
    auto compiled = compiler::compile(c);
    ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
    const nlohmann::json &t = compiled->report["tuning"];
    const std::string form = compiled->report.value("template_file", "");
    const std::string shape = form == "mma" ? "streamed" : t.value("BM", 0) == 128 && t.value("BN", 0) == 128 ? "wide" : "tiles";
    EXPECT_EQ(shape, k.shape) << t.dump();
    const double chosen = compiled->report["model"]["predicted_us"].get<double>();
    ScopedMmaTuning other{k.alternative};
    auto alternative = compiler::compile(c);
    ASSERT_TRUE(alternative.ok()) << alternative.status().to_string();
    EXPECT_LT(chosen, alternative->report["model"]["predicted_us"].get<double>() * 1.005) << k.alternative;
  }
}

// v79: where gfx950's 128 x 64 tiles outnumber the workgroups the GPU holds
// at once (three a CU: 768), the grid is those 768, each looping over tiles
// (tile_order.mlir), scheduled to keep room for all of them (three waves a
// SIMD: at most 168 registers a lane), so every gate passes; with one
// workgroup a tile (persistent=0) the grid of several rounds fails
// occupancy_holds_the_grid. The code facts read the K loop, not the loop
// over tiles around it, as the main loop (the same loop both ways). Where
// the tiles fit one round the grid is a workgroup a tile.
TEST(Gfx950Plan, PersistentGridWhereTilesOutnumberOneRound) {
  struct Case {
    int64_t m, n, tiles_n, tiles_m;
  };
  for (const Case &k : {Case{1024, 12288, 96, 16}, Case{4096, 3072, 24, 64}, Case{4096, 12288, 96, 64}}) {
    SCOPED_TRACE("m=" + std::to_string(k.m) + " n=" + std::to_string(k.n));
    const Contract c = gfx950_seed_shape(k.m, k.n);
    auto compiled = compiler::compile(c);
    ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
    const nlohmann::json &r = compiled->report;
    ASSERT_EQ(r.value("template_file", ""), "mma_tiled");
    EXPECT_EQ(r["grid"], nlohmann::json::array({768, 1, 1}));
    EXPECT_EQ(r["tiles"], nlohmann::json::array({k.tiles_n, k.tiles_m, 1}));
    EXPECT_EQ(compiled->binary.geometry.persistent_workgroups, 768u);
    EXPECT_EQ(r["tuning"].value("MIN_WAVES_PER_EU", 0), 3) << r["tuning"].dump();
    EXPECT_EQ(r["tuning"].value("TILE_GROUP_M", 0), 16) << r["tuning"].dump();
    for (const auto &[gate, verdict] : r["gates"].items())
      EXPECT_TRUE(!verdict.value("applies", false) || verdict.value("passed", false)) << gate << ": " << verdict.dump();
    ScopedMmaTuning one_a_tile{"persistent=0"};
    auto rounds = compiler::compile(c);
    ASSERT_TRUE(rounds.ok()) << rounds.status().to_string();
    const nlohmann::json &q = rounds->report;
    EXPECT_EQ(q["grid"], q["tiles"]);
    EXPECT_EQ(rounds->binary.geometry.persistent_workgroups, 0u);
    EXPECT_FALSE(q["gates"]["occupancy_holds_the_grid"].value("passed", true)) << q["gates"].dump();
    const int64_t loop = r["code_facts"]["loop_instructions"].get<int64_t>();
    const int64_t loop_rounds = q["code_facts"]["loop_instructions"].get<int64_t>();
    EXPECT_GT(loop, 0);
    EXPECT_LT(std::abs(loop - loop_rounds), loop_rounds / 5) << loop << " against " << loop_rounds;
  }
  for (const auto &[m, n] : std::vector<std::pair<int64_t, int64_t>>{{512, 12288}, {4096, 1536}, {2048, 3072}}) {
    SCOPED_TRACE("m=" + std::to_string(m) + " n=" + std::to_string(n));
    auto compiled = compiler::compile(gfx950_seed_shape(m, n));
    ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
    EXPECT_EQ(compiled->binary.geometry.persistent_workgroups, 0u);
    EXPECT_EQ(compiled->report["grid"], compiled->report["tiles"]);
  }
}

// The gfx950 disassembly of a compiled contract, one instruction a line.
std::vector<std::string> gfx950_instructions(const compiler::CompiledKernel &compiled) {
  TempDir dir;
  const fs::path hsaco = dir / "kernel.hsaco";
  write_bytes(hsaco, compiled.binary.code);
  const CommandResult dis = run(tool("llvm-objdump") + " -d --mcpu=gfx950 " + hsaco.string());
  EXPECT_EQ(dis.rc, 0) << dis.out;
  std::vector<std::string> lines;
  std::istringstream in(dis.out);
  for (std::string line; std::getline(in, line);) {
    const size_t at = line.find_first_not_of(" \t");
    if (at != std::string::npos && line[at] >= 'a' && line[at] <= 'z' && line.find("//") != std::string::npos &&
        line.find('<') == std::string::npos)
      lines.push_back(line.substr(at));
  }
  return lines;
}
bool starts_with(const std::string &s, std::string_view prefix) { return s.rfind(prefix, 0) == 0; }

// v80: gfx9's K-split reduction loads every split's partials in one round
// where their registers fit (10 splits at N = 1536 M = 128, 5 at M = 256:
// 16 registers each, 256 a lane at two waves a SIMD), and the plan says
// one round, so the model charges the one wait chain the code has. The
// code: after the arrival atomic, all SPLITS x TILES 16-byte partial loads
// go out before the first wait on them. oneround=0 keeps the rounds of 64
// registers (the rule before v80), and the plan then counts them.
TEST(Gfx950Plan, SplitPartialsLoadInOneRound) {
  for (const auto &[m, splits] : std::vector<std::pair<int64_t, int64_t>>{{128, 10}, {256, 5}}) {
    SCOPED_TRACE("m=" + std::to_string(m));
    ScopedMmaTuning arrival{"poll=0"};  // the arrival's rounds (v94 polls these plans: tiled_poll_test.cpp)
    auto compiled = compiler::compile(gfx950_seed_shape(m, 1536));
    ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
    const nlohmann::json &r = compiled->report;
    ASSERT_EQ(r.value("template_file", ""), "mma_tiled");
    const nlohmann::json &t = r["tuning"];
    EXPECT_EQ(t.value("SPLITS", 0), splits) << t.dump();
    EXPECT_EQ(t.value("SPLIT_ROUND", 0), splits) << t.dump();
    EXPECT_EQ(r["plan_facts"].value("reduction_rounds", 0), 1);
    const std::vector<std::string> isa = gfx950_instructions(*compiled);
    auto atomic = std::find_if(isa.begin(), isa.end(), [](const std::string &l) { return starts_with(l, "global_atomic"); });
    ASSERT_NE(atomic, isa.end());
    auto first_load = std::find_if(atomic, isa.end(), [](const std::string &l) { return starts_with(l, "global_load_dwordx4"); });
    ASSERT_NE(first_load, isa.end());
    int64_t together = 0;
    for (auto it = first_load; it != isa.end() && !starts_with(*it, "s_waitcnt vmcnt"); ++it)
      together += starts_with(*it, "global_load_dwordx4");
    constexpr int64_t kTilesALane = 4;  // 64 x 64 tiles, 2 x 2 waves: 4 MFMA tiles, a 16-byte load each
    EXPECT_GE(together, splits * kTilesALane);
    arrival.set("oneround=0,poll=0");
    auto looped = compiler::compile(gfx950_seed_shape(m, 1536));
    ASSERT_TRUE(looped.ok()) << looped.status().to_string();
    EXPECT_EQ(looped->report["tuning"].value("SPLIT_ROUND", 0), 4);
    EXPECT_EQ(looped->report["plan_facts"].value("reduction_rounds", 0), (splits + 3) / 4);
  }
}

// v81: gfx950's register-streamed mma with a K split (N = 1536 M = 17-32
// until v83, and 96: 7 splits at 8 waves a SIMD, 64 registers a lane) finishes 4-column
// pieces, so the last block's partial loads of every split (7 x 4
// registers) and its attn loads go out before the first wait: one round
// trip in the tail, where 8-column pieces (56 registers) left some for a
// second. Where no split or fewer registers call for it the piece stays 8
// columns (M = 48; vw=8 asks for them back, and the second round trip
// returns). sm_90 follows the same rule with its own facts (a forced split
// there, 672 blocks of 16 warps, leaves a lane few registers: 4 columns),
// and its 8-byte stores beside the element-wise fallback pass the epilogue
// gate. vw=2 is refused (a piece's sums are whole 16-byte vectors:
// tuning_override_test.cpp).
// Since v93 these splits meet by poll, whose loads are the same partials;
// the 8-column case keeps the arrival (poll=0) that v81 measured.
TEST(Gfx950Plan, SplitPiecesLeaveTheTailOneRoundTrip) {
  struct Case {
    Target target;
    int64_t m;
    const char *tuning;
    int64_t vw, tail;  // tail < 0: not checked
  };
  // M = 17-32 take thin grid rows without a split since v83; the split
  // they had (the same code object) is asked for.
  const char *split = "rt=2,mtiles=2,splits=7,mstride=32";
  for (const Case &k : {Case{Target::kGfx950, 17, split, 4, 1}, Case{Target::kGfx950, 32, split, 4, 1},
                        Case{Target::kGfx950, 96, "tiled=0", 4, 1}, Case{Target::kGfx950, 48, "", 8, -1},
                        Case{Target::kGfx950, 32, "rt=2,mtiles=2,splits=7,mstride=32,vw=8,poll=0", 8, 2},
                        Case{Target::kSm90, 32, "tiled=0,splits=7", 4, -1}}) {
    SCOPED_TRACE(std::string(target_name(k.target)) + " m=" + std::to_string(k.m) + " " + k.tuning);
    Contract c = gfx950_seed_shape(k.m, 1536);
    c.target = k.target;
    ScopedMmaTuning tuning{k.tuning};
    auto compiled = compiler::compile(c);
    ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
    const nlohmann::json &r = compiled->report;
    ASSERT_EQ(r.value("template_file", ""), "mma");
    EXPECT_EQ(r["tuning"].value("VW", 0), k.vw) << r["tuning"].dump();
    if (k.tail >= 0) EXPECT_EQ(r["code_facts"].value("tail_round_trips", -1), k.tail);
    for (const auto &[gate, verdict] : r["gates"].items())
      EXPECT_TRUE(!verdict.value("applies", false) || verdict.value("passed", false)) << gate << ": " << verdict.dump();
  }
}

// v80: the staged epilogue loads every attn piece without a branch (a
// piece outside the output loads the first one and is not stored). With a
// branch a piece, the persistent grid's epilogue (its attn loaded there)
// waited for every memory operation before each of its 4 pieces, the
// previous pieces' out stores included (3 such drains after the first out
// store); now only before the last.
TEST(Gfx950Plan, PersistentEpilogueDrainsOnlyBeforeItsLastPiece) {
  auto compiled = compiler::compile(gfx950_seed_shape(1024, 12288));
  ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
  ASSERT_EQ(compiled->binary.geometry.persistent_workgroups, 768u);
  ASSERT_EQ(compiled->report["tuning"].value("EPI_ATTN_EARLY", 1), 0);
  const std::vector<std::string> isa = gfx950_instructions(*compiled);
  auto store = std::find_if(isa.begin(), isa.end(), [](const std::string &l) { return starts_with(l, "global_store_dwordx4"); });
  ASSERT_NE(store, isa.end());
  int64_t drains = 0, stores = 0;
  for (auto it = store; it != isa.end(); ++it) {
    drains += starts_with(*it, "s_waitcnt vmcnt(0)");
    stores += starts_with(*it, "global_store_dwordx4");
  }
  EXPECT_EQ(stores, 4);
  EXPECT_LE(drains, 1);
}

// v75: the staged epilogue's tile in parts over the stage slots. Each part
// fits one stage and there are no more parts than stages, on both targets;
// one part where a stage holds the whole tile, powers of two of rows where
// that makes few enough parts, else as many rows as a stage holds (sm_90
// with 3 stages at M = 2048 staged its 100 KiB tile in 120 KiB before v75
// and must still).
TEST(StagedEpilogue, PartsFitTheStageSlots) {
  struct Case {
    Target target;
    int64_t m, n;
    const char *tuning;
    int64_t parts, rows;
  };
  for (const Case &k : {Case{Target::kSm90, 32, 1536, "", 1, 32}, Case{Target::kSm90, 512, 1536, "", 2, 32},
                        Case{Target::kSm90, 2048, 1536, "", 4, 32}, Case{Target::kSm90, 2048, 1536, "stages=3", 3, 51},
                        Case{Target::kGfx950, 4096, 1536, "", 2, 32}, Case{Target::kGfx950, 2048, 1536, "", 2, 64},
                        Case{Target::kGfx950, 512, 1536, "tile128=0", 2, 32},
                        Case{Target::kGfx950, 512, 1536, "", 4, 32}}) {
    SCOPED_TRACE(std::string(target_name(k.target)) + " m=" + std::to_string(k.m) + " " + k.tuning);
    Contract c = gfx950_seed_shape(k.m, k.n);
    c.target = k.target;
    ScopedMmaTuning tuning{k.tuning};
    auto compiled = compiler::compile(c);
    ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
    const nlohmann::json &t = compiled->report["tuning"];
    ASSERT_EQ(compiled->report.value("template_file", ""), "mma_tiled");
    EXPECT_EQ(t.value("EPI_STAGED", 0), 1);
    EXPECT_EQ(t.value("EPI_PARTS", 0), k.parts);
    EXPECT_EQ(t.value("EPI_PART_ROWS", 0), k.rows);
    const int64_t bn = t["BN"], bm = t["BM"], bk = t["BK"], stages = t["STAGES"];
    const int64_t ld = bn + ((8 - bn) % 32 + 32) % 32;  // EPI_LD: 8 mod 32
    EXPECT_LE(k.rows * ld * 4, (bn + bm) * bk * 2) << "a part larger than its stage slot";
    EXPECT_LE(k.parts, stages);
    EXPECT_GE(k.parts * k.rows, bm);
  }
}

// gfx950_plan=1 lowers gfx950's own plan for sm_90 (the GPU suite runs its
// mma cases on such a bundle, scripts/device_run.sh): the same form, and in
// the tiled form the same shape, stages, K split and epilogue, in fragments;
// in the register-streamed form gfx950's thin grid rows (v83-v84) and its K
// split (v88: N = 1536 M = 64, 5 splits) over sm_90's own tiles (N = 1536
// M = 32: 3 grid rows; N = 2048 M = 16: 2).
TEST(Gfx950Plan, Sm90MirrorTakesGfx950sPlan) {
  for (const auto &[m, n] : std::vector<std::pair<int64_t, int64_t>>{{16, 2048}, {32, 1536}, {64, 3072}, {64, 1536},
                                                                     {128, 1536}, {512, 1536}, {2048, 1536},
                                                                     {512, 12288}, {256, 1003}, {1024, 12288}}) {
    SCOPED_TRACE("m=" + std::to_string(m) + " n=" + std::to_string(n));
    auto amd = compiler::compile(gfx950_seed_shape(m, n));
    ASSERT_TRUE(amd.ok()) << amd.status().to_string();
    Contract c = gfx950_seed_shape(m, n);
    c.target = Target::kSm90;
    ScopedMmaTuning mirror{"gfx950_plan=1"};
    auto sm90 = compiler::compile(c);
    ASSERT_TRUE(sm90.ok()) << sm90.status().to_string();
    const nlohmann::json &a = amd->report, &b = sm90->report;
    ASSERT_EQ(b.value("template_file", ""), a.value("template_file", ""));
    if (a.value("template_file", "") != "mma_tiled") {
      // Thin grid rows (a stride under the tiles' rows): the same grid rows.
      const bool thin = a["tuning"].value("M_STRIDE", 0) < 16 * a["tuning"].value("MT", 0);
      if (thin) EXPECT_EQ(b["tuning"].value("M_STRIDE", -1), a["tuning"].value("M_STRIDE", -2));
      if (thin) EXPECT_EQ(b["grid"][1], a["grid"][1]);
      EXPECT_EQ(b["tuning"].value("SPLITS", -1), a["tuning"].value("SPLITS", -2));
      continue;
    }
    for (const char *key : {"BN", "BM", "BK", "STAGES", "SPLITS", "WARPS_N", "EPI_STAGED", "PERSISTENT_WORKGROUPS",
                            "TILE_GROUP_M"})
      EXPECT_EQ(b["tuning"].value(key, -1), a["tuning"].value(key, -2)) << key;
    EXPECT_EQ(b["tuning"].value("WGMMA", -1), 0);
    EXPECT_EQ(b["grid"], a["grid"]);
  }
}

// gfx950's tiled form, asked for with GATEJIT_MMA_TUNING=tiled=1 at every M
// of the list (auto takes it from M = 128, amd_tile_shape). Operands go
// from global memory straight into LDS (global_load_lds_dwordx4, nothing
// written to LDS from registers but the K-split flag and the staged
// epilogue's tile), fragments come back as 16-byte LDS reads into the MFMA;
// no scratch, no spills; the epilogue's tile lies over the stage globals
// and takes no LDS of its own (v75: beside them it cost the 128 x 64
// prefill tiles their staging, and the 64 x 64 tiles a stage); the
// epilogue goes out in 16-byte pieces, its element-wise fallback loads attn
// in one round trip.
class TiledMmaGfx950Code : public testing::TestWithParam<std::pair<DType, int64_t>> {
  ScopedMmaTuning tuning_{"tiled=1"};
};

TEST_P(TiledMmaGfx950Code, LoadsGlobalToLdsAndFeedsMfmaFromLds) {
  const Contract c = seed_with(Target::kGfx950, GetParam().first, GetParam().second);
  auto compiled = compiler::compile(c);
  ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
  const nlohmann::json &r = compiled->report;
  ASSERT_EQ(r.value("template_file", ""), "mma_tiled") << r.value("reason", "");
  const char *mfma = c.dtype_out == DType::kBF16 ? "v_mfma_f32_16x16x32_bf16" : "v_mfma_f32_16x16x32_f16";
  EXPECT_GT(histogram_count(r, "global_load_lds_dwordx4"), 0) << r["instructions"].dump();
  EXPECT_GT(histogram_count(r, "ds_read_b128"), 0);
  EXPECT_GT(histogram_count(r, mfma), 0);
  EXPECT_EQ(histogram_count(r, "ds_write_b128"), 0);
  // 16-byte global loads into registers are the K-split partials (at most
  // one per accumulator tile and split) and the staged epilogue's attn
  // pieces (BN x BM outputs in 8-element pieces over 256 threads).
  const int64_t splits = r["tuning"]["SPLITS"], stages = r["tuning"]["STAGES"], bn = r["tuning"]["BN"],
                bm = r["tuning"]["BM"], bk = r["tuning"]["BK"], warps_n = r["tuning"]["WARPS_N"];
  // 4 waves of 64, 8 for the 128 x 128 tiles (v96).
  const bool wide = bn == 128 && bm == 128;
  const int64_t waves = wide ? 8 : 4, warps_m = waves / warps_n;
  const int64_t tiles = (bn / (16 * warps_n)) * (bm / (16 * warps_m));  // 16 x 16 MFMA tiles per wave
  const int64_t attn_pieces = bn * bm / 8 / (64 * waves);
  EXPECT_LE(histogram_count(r, "global_load_dwordx4"), (splits > 1 ? splits * tiles : 0) + attn_pieces)
      << "operands must not pass through registers";
  // The staged epilogue (gfx950 since v73): 16-byte out stores, the gate
  // that asks for them passing, and the element-wise fallback's attn loads
  // in one round trip (a branch per load made it 16: the tail was 17).
  EXPECT_EQ(r["tuning"].value("EPI_STAGED", -1), 1);
  EXPECT_GT(histogram_count(r, "global_store_dwordx4"), 0);
  EXPECT_TRUE(r["gates"]["wide_epilogue_accesses"].value("passed", false)) << r["gates"].dump();
  EXPECT_LE(r["code_facts"].value("tail_round_trips", 99), 4);
  const nlohmann::json &k = r["kernels"][0];
  EXPECT_EQ(k.value("scratch_bytes", -1), 0);
  EXPECT_EQ(k.value("vgpr_spill_count", -1), 0);
  const LaunchGeometry &geo = compiled->binary.geometry;
  // The stages are static LDS (a global each), the epilogue's f32 tile in
  // parts over them; dynamic LDS holds the K-split flag alone.
  EXPECT_EQ(k.value("lds_bytes", 0), stages * (bn + bm) * bk * 2);
  EXPECT_EQ(geo.shared_bytes, splits > 1 ? 16u : 0u);
  // Two workgroups a CU's 160 KiB; 128 x 64 tiles three; 128 x 128 tiles one.
  EXPECT_LE(k.value("lds_bytes", 0) + int64_t(geo.shared_bytes), (wide ? 160 : 80) * 1024);
  if (bn == 128 && !wide) EXPECT_LE(3 * (k.value("lds_bytes", 0) + int64_t(geo.shared_bytes)), 160 * 1024);
  EXPECT_EQ(geo.block_x, uint32_t(64 * waves));

  // The stages overlap: no barrier of the K loop waits for every LDS-DMA
  // load in flight (the stage barrier has no workgroup fence), and no
  // fragment reads of a stage wait for all of them, in the loop or after it.
  // Before v27 every barrier and every read waited: vmcnt(0); until v63 the
  // reads after a refill under a branch still did, in some of the STAGES
  // unrolled slots; until v77, with 64 x 128 tiles, one slot in three after
  // the ring's live checks joined.
  auto isa = compiler::emit_stage(c, compiler::Stage::kIsa);
  ASSERT_TRUE(isa.ok()) << isa.status().to_string();
  std::istringstream lines(*isa);
  std::string line, previous;
  int barriers_without_drain = 0, read_groups = 0, read_groups_after_drain = 0;
  bool in_reads = false;
  while (std::getline(lines, line)) {
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == ';' || line[first] == '.') continue;
    line = line.substr(first);
    const bool drain = previous.rfind("s_waitcnt vmcnt(0)", 0) == 0;
    if (line.rfind("s_barrier", 0) == 0 && !drain) ++barriers_without_drain;
    const bool read = line.rfind("ds_read_b128", 0) == 0;
    if (read && !in_reads) {
      ++read_groups;
      if (drain) ++read_groups_after_drain;
    }
    in_reads = read;
    previous = line;
  }
  EXPECT_GE(barriers_without_drain, stages);
  EXPECT_GE(read_groups, stages);
  EXPECT_EQ(read_groups_after_drain, 0) << *isa;
}

INSTANTIATE_TEST_SUITE_P(Gfx950, TiledMmaGfx950Code,
                         testing::Values(std::pair{DType::kBF16, int64_t(64)}, std::pair{DType::kF16, int64_t(128)},
                                         std::pair{DType::kBF16, int64_t(512)}, std::pair{DType::kBF16, int64_t(2048)},
                                         std::pair{DType::kBF16, int64_t(4096)}),
                         dtype_m_name);

// v95 (DRAIN): gfx950's tiled K loop ends with nothing in flight. The
// waits before a stage barrier (@wait_copies) are all alike with the
// repeats of REFILL_ALWAYS (drain=0); drained, the peeled last ring counts
// them down, younger tiles STAGES - 2 .. 0 (vmcnt 8, 4, 0 at 4 stages),
// and the tail has one round trip fewer: the wait for the repeats is gone.
// Uneven splits (M = 128: 11 or 12 tiles, S0 at run time), one split of
// 4 stages (M = 1024) and of 3 (M = 2048).
TEST(TiledMmaGfx950Drain, TheLastRingCountsDownAndTheTailLosesTheRepeats) {
  struct Run {
    std::vector<int> barrier_waits;  // vmcnt of each wait a stage barrier follows
    int64_t tail = -1, stages = 0;
  };
  auto run = [](const char *tuning, int64_t m) {
    ScopedMmaTuning scoped(tuning);
    const Contract c = seed_with(Target::kGfx950, DType::kBF16, m);
    Run out;
    auto compiled = compiler::compile(c);
    EXPECT_TRUE(compiled.ok()) << compiled.status().to_string();
    if (!compiled.ok()) return out;
    out.tail = compiled->report["code_facts"].value("tail_round_trips", int64_t(-1));
    out.stages = compiled->report["tuning"].value("STAGES", int64_t(0));
    auto isa = compiler::emit_stage(c, compiler::Stage::kIsa);
    EXPECT_TRUE(isa.ok()) << isa.status().to_string();
    if (!isa.ok()) return out;
    std::vector<std::string> lines;
    std::istringstream in(*isa);
    for (std::string line; std::getline(in, line);) {
      const auto first = line.find_first_not_of(" \t");
      if (first != std::string::npos && line[first] != ';' && line[first] != '.') lines.push_back(line.substr(first));
    }
    const std::regex vmcnt(R"(^s_waitcnt vmcnt\((\d+)\))");
    for (size_t i = 0; i < lines.size(); ++i) {
      std::smatch hit;
      if (!std::regex_search(lines[i], hit, vmcnt) || hit[1] == "63") continue;  // 63: no vmcnt wait
      for (size_t j = i + 1; j < std::min(lines.size(), i + 4); ++j)
        if (lines[j].rfind("s_barrier", 0) == 0) {
          out.barrier_waits.push_back(std::stoi(hit[1]));
          break;
        }
    }
    return out;
  };
  for (int64_t m : {128, 1024, 2048}) {
    SCOPED_TRACE("M " + std::to_string(m));
    const Run repeats = run("drain=0", m), drained = run("", m);
    ASSERT_FALSE(repeats.barrier_waits.empty());
    ASSERT_GE(repeats.stages, 3);
    const int steady = *std::max_element(repeats.barrier_waits.begin(), repeats.barrier_waits.end());
    for (int w : repeats.barrier_waits) EXPECT_EQ(w, steady);
    const int younger = int(repeats.stages) - 2, per_tile = steady / younger;
    ASSERT_GT(per_tile, 0);
    for (int y = 0; y <= younger; ++y)
      EXPECT_NE(std::find(drained.barrier_waits.begin(), drained.barrier_waits.end(), y * per_tile),
                drained.barrier_waits.end())
          << "no wait for " << y << " younger tiles";
    EXPECT_EQ(drained.tail, repeats.tail - 1);
  }
}

// sm_90's mma kernel: mma.sync m16n8k16 with the dtype's operand type, 16-byte
// operand loads.
TEST(PtxCode, MmaUsesMmaSync) {
  Contract c = seed(Target::kSm90);
  c.m = 8;
  auto compiled = compiler::compile(c);
  ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
  ASSERT_EQ(compiled->report.value("template", ""), "mma");
  const std::string ptx(compiled->binary.code.begin(), compiled->binary.code.end());
  EXPECT_THAT(ptx, HasSubstr("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"));
  EXPECT_THAT(ptx, testing::ContainsRegex(R"(ld\.global[.\w]*\.v4\.(b|u|f)32)"));
}

// v69: the sm_90 mma contracts of the kind the H200 measured faster ask
// attn's lines into L2 at the kernel's start (N = 3072, fixed M = 1 and 16);
// each way out of that kind does not: N alone (1536 and 4096 at M = 1, the
// mma forced), M (4, 8), a dynamic M, an fp8 weight, an fp8 out.
TEST(PtxCode, AttnPrefetchedWhereMeasuredFaster) {
  struct Case {
    const char *what;
    int64_t m, n;
    bool prefetch;
    void (*adjust)(Contract &);
  };
  auto none = [](Contract &) {};
  for (const Case &k : {Case{"n3072 m1", 1, 3072, true, none}, Case{"n3072 m16", 16, 3072, true, none},
                        Case{"n1536 m1", 1, 1536, false, none},
                        Case{"n4096 m1", 1, 4096, false, none}, Case{"n3072 m4", 4, 3072, false, none},
                        Case{"n3072 m8", 8, 3072, false, none},
                        Case{"n3072 dynamic 16", 16, 3072, false,
                             [](Contract &c) {
                               c.m_dynamic = true;
                               c.m_max = 16;
                             }},
                        Case{"n3072 m16 fp8 weight", 16, 3072, false,
                             [](Contract &c) {
                               c.dtype_weight = DType::kFP8E4M3;
                               c.weight_scale = WeightScale::kPerChannel;
                             }},
                        Case{"n3072 m16 fp8 out", 16, 3072, false, [](Contract &c) {
                               c.dtype_out = DType::kFP8E4M3;
                               c.out_scale = OutScale::kPerTokenGroup128;
                             }}}) {
    SCOPED_TRACE(k.what);
    Contract c = seed(Target::kSm90);
    c.m = k.m;
    c.n = k.n;
    c.template_kind = TemplateKind::kMma;  // the form v69 measured, in every row
    k.adjust(c);
    auto isa = compiler::emit_stage(c, compiler::Stage::kIsa);
    ASSERT_TRUE(isa.ok()) << isa.status().to_string();
    EXPECT_NE(isa->find("mma.sync"), std::string::npos);
    EXPECT_EQ(isa->find("prefetch.global.L2") != std::string::npos, k.prefetch);
  }
}

// The sm_90 seed kernel is PTX that names its target and entry, with 16-byte
// vector loads (ld.global.v4.b32 / v2.b64 family) for the operands.
TEST(PtxCode, SeedContractIsPtxWithVectorLoads) {
  Contract c = seed(Target::kSm90);
  c.template_kind = TemplateKind::kGemv;  // auto picks mma at this N on sm_90
  auto compiled = compiler::compile(c);
  ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
  const std::string ptx(compiled->binary.code.begin(), compiled->binary.code.end());
  EXPECT_THAT(ptx, HasSubstr(".target sm_90"));
  EXPECT_THAT(ptx, HasSubstr(".entry " + compiled->binary.symbol + "("));
  EXPECT_THAT(ptx, testing::ContainsRegex(R"(ld\.global[.\w]*\.v(4\.(b|u|f)32|2\.(b|u|f)64))"));
  // The warp reduction is done with shuffles. At this N the warps of a group
  // split K (docs/templates.md): shared memory holds exactly one fp32 partial
  // per warp of the block, and the epilogue's sums (M x the block's columns,
  // v47), nothing more.
  EXPECT_THAT(ptx, HasSubstr("shfl.sync"));
  const int64_t warps = compiled->report["workgroup_size"][0].get<int64_t>() / 32;
  const int64_t sums = c.m * compiled->binary.geometry.n_per_block * 4;
  EXPECT_EQ(compiled->report["kernels"][0].value("shared_bytes", -1), warps * 4 + sums);
}

// Where N alone fills the GPU there is no K split: no shared memory but the
// epilogue's sums (M x the block's columns, v47).
TEST(PtxCode, LargeNUsesSharedMemoryOnlyForTheEpilogue) {
  Contract c = seed(Target::kSm90);
  c.n = 12288;
  auto compiled = compiler::compile(c);
  ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
  const std::string ptx(compiled->binary.code.begin(), compiled->binary.code.end());
  EXPECT_THAT(ptx, HasSubstr("shfl.sync"));
  EXPECT_EQ(compiled->report["kernels"][0].value("shared_bytes", -1), c.m * compiled->binary.geometry.n_per_block * 4);
}

// sm_90 above M = 16: the tiled form. Operands go global -> shared memory by
// cp.async (16-byte chunks). Up to M = 32 fragments come from shared memory in
// 16-byte reads into mma.sync; above, wgmma reads both operands from shared
// memory itself (four m64nBNk16 per 64-K stage, after an async-proxy fence,
// one group left in flight), one warpgroup per 64 hidden rows. K is split
// across grid z and the split blocks meet through a workspace sized for every
// split of every tile, an atomic arrival count and device-scope fences.
// Nothing spills to local memory.
class TiledMmaPtx : public testing::TestWithParam<std::pair<DType, int64_t>> {};

TEST_P(TiledMmaPtx, StagesThroughSharedMemoryAndSplitsK) {
  const Contract c = seed_with(Target::kSm90, GetParam().first, GetParam().second);
  auto compiled = compiler::compile(c);
  ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
  const nlohmann::json &r = compiled->report;
  ASSERT_EQ(r.value("template_file", ""), "mma_tiled") << r.value("reason", "");
  const LaunchGeometry &geo = compiled->binary.geometry;
  const std::string ptx(compiled->binary.code.begin(), compiled->binary.code.end());
  const nlohmann::json tuning = r["tuning"];
  const int64_t bn = tuning["BN"], bm = tuning["BM"], splits = tuning["SPLITS"];
  const std::string type = c.dtype_out == DType::kBF16 ? "bf16" : "f16";
  const int64_t stages = tuning["STAGES"], stage_bytes = (bn + bm) * tuning["BK"].get<int64_t>() * 2;
  // sm_90's table splits fit one round and their polls one or two (v94).
  const bool poll = tuning.value("SPLIT_POLL", 0) == 1;
  EXPECT_EQ(poll, splits > 1);
  if (c.m <= 32) {
    // Every thread copies 16-byte chunks.
    EXPECT_THAT(ptx, HasSubstr("cp.async.cg.shared.global"));
    EXPECT_THAT(ptx, HasSubstr("cp.async.wait_group"));
    EXPECT_FALSE(geo.tensor_maps.any());
    EXPECT_EQ(int64_t(geo.shared_bytes), stages * stage_bytes);
    EXPECT_EQ(tuning.value("WGMMA", -1), 0);
    EXPECT_THAT(ptx, testing::ContainsRegex(R"(ld\.shared\.v4\.(b|u|f)32)"));
    EXPECT_THAT(ptx, HasSubstr("mma.sync.aligned.m16n8k16.row.col.f32." + type + "." + type + ".f32"));
    EXPECT_EQ(r["workgroup_size"][0].get<int64_t>(), 128);
  } else {
    EXPECT_EQ(tuning.value("WGMMA", -1), 1);
    EXPECT_THAT(ptx, HasSubstr(".target sm_90a"));
    // The stages come through the tensor memory accelerator: two boxes per
    // stage described by the tensor maps passed by value after the 11
    // arguments of the ABI, each landing on the stage's mbarrier (placed
    // after the stages).
    EXPECT_EQ(tuning.value("TMA", -1), 1);
    EXPECT_THAT(ptx, testing::Not(HasSubstr("cp.async.cg")));
    EXPECT_THAT(ptx, HasSubstr("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"));
    EXPECT_THAT(ptx, HasSubstr("mbarrier.try_wait.parity.shared.b64"));
    EXPECT_EQ(count_of(ptx, "mbarrier.init.shared.b64"), stages);
    const std::string map_param = ".param .align 64 .b8 " + compiled->binary.symbol + "_param_";
    EXPECT_THAT(ptx, HasSubstr(map_param + std::to_string(kKernelArgCount) + "[128]"));
    EXPECT_THAT(ptx, HasSubstr(map_param + std::to_string(kKernelArgCount + 1) + "[128]"));
    EXPECT_EQ(count_of(ptx, "cvta.param.u64"), kTensorMapArgCount);  // the maps are read in place, not copied
    EXPECT_EQ(geo.tensor_maps.box_k, 64u);
    EXPECT_EQ(int64_t(geo.tensor_maps.weight_rows), bn);
    EXPECT_EQ(int64_t(geo.tensor_maps.hidden_rows), bm);
    EXPECT_EQ(r["tensor_map_boxes"], nlohmann::json({64, bn, bm}));  // the report says what the runtime encodes
    EXPECT_EQ(int64_t(geo.shared_bytes), stages * stage_bytes + stages * 12);  // a barrier and a counter per stage
    // No block barrier in the K loop: one after the barriers' set-up, the
    // K-split arrival's two (the poll meeting has none) and the staged
    // epilogue's two.
    EXPECT_EQ(count_of(ptx, "bar.sync"), (splits > 1 && !poll ? 3 : 1) + 2);
    // Two warpgroups count themselves in to free a slot; one needs no count.
    EXPECT_EQ(count_of(ptx, "atom.shared.inc.u32"), bm / 64 > 1 ? 1 : 0);
    const std::string wgmma = fmt::format("wgmma.mma_async.sync.aligned.m64n{}k16.f32.{}.{}", bn, type, type);
    EXPECT_EQ(count_of(ptx, wgmma), 4) << wgmma;
    EXPECT_THAT(ptx, testing::Not(HasSubstr("fence.proxy.async")));  // TMA lands through the async proxy
    // One group left running after a stage's products (the table's; v32).
    EXPECT_EQ(tuning.value("WGMMA_PENDING", -1), 1);
    EXPECT_THAT(ptx, HasSubstr("wgmma.wait_group.sync.aligned \t1;"));
    EXPECT_THAT(ptx, testing::Not(HasSubstr("mma.sync")));
    // The products read no shared memory through registers: the only
    // 16-byte shared loads are the staged epilogue's, two per 8-element
    // piece of the output tile.
    const int64_t pieces_per_thread = (bm * bn / 8 + 128 * (bm / 64) - 1) / (128 * (bm / 64));
    EXPECT_EQ(count_of(ptx, "ld.shared.v4.b32"), 2 * pieces_per_thread);
    // The descriptors assume the stages start on a 1024-byte boundary: the
    // dynamic shared memory is the kernel's only shared variable.
    EXPECT_EQ(count_of(ptx, ".shared .align"), 1);
    EXPECT_EQ(bm % 64, 0);
    EXPECT_EQ(r["workgroup_size"][0].get<int64_t>(), 128 * (bm / 64));  // a warpgroup per 64 hidden rows
  }
  EXPECT_THAT(ptx, testing::Not(HasSubstr(".local")));
  // N = 1536: the epilogue goes through shared memory in whole 16-byte
  // pieces of attn and out, when both pointers are on 16 bytes (checked at
  // run time: attn | out & 15); the element-wise form stays for the rest.
  EXPECT_EQ(tuning.value("EPI_STAGED", -1), 1);
  EXPECT_TRUE(std::regex_search(ptx, std::regex(R"(and\.b64\s+%rd\d+, %rd\d+, 15;)")));
  EXPECT_TRUE(ptx.find("st.global.v4.b32") != std::string::npos);
  EXPECT_TRUE(ptx.find("st.global.b16") != std::string::npos);
  // The stages are dynamic shared memory, within what a block can opt in to.
  EXPECT_GT(geo.shared_bytes, 0u);
  EXPECT_LE(geo.shared_bytes, max_shared_bytes(Target::kSm90));
  EXPECT_EQ(r.value("dynamic_shared_bytes", 0u), geo.shared_bytes);
  EXPECT_EQ(int64_t(geo.n_per_block), bn);
  EXPECT_EQ(int64_t(geo.m_per_block), bm);
  EXPECT_EQ(int64_t(geo.k_blocks), splits);
  if (splits > 1) {
    const int64_t tiles = ((c.n + bn - 1) / bn) * ((c.m + bm - 1) / bm);
    const std::string workspace =
        "gatejit_partials[" + std::to_string(splits * tiles * bn * bm * 4) + "]";
    EXPECT_THAT(ptx, HasSubstr(workspace));
    if (poll) {
      // The poll meeting (v94): pairs of partials stored and polled with
      // relaxed 64-bit accesses at device scope; no counter, no fence.
      EXPECT_THAT(ptx, HasSubstr("st.relaxed.gpu.global.b64"));
      EXPECT_THAT(ptx, HasSubstr("ld.relaxed.gpu.global.b64"));
      EXPECT_THAT(ptx, testing::Not(HasSubstr("gatejit_arrivals")));
      EXPECT_THAT(ptx, testing::Not(HasSubstr("atom.global")));
      EXPECT_THAT(ptx, testing::Not(HasSubstr("fence.acq_rel.gpu")));
    } else {
      EXPECT_THAT(ptx, HasSubstr("gatejit_arrivals[" + std::to_string(tiles * 4) + "]"));
      EXPECT_THAT(ptx, HasSubstr("atom.global.add.u32"));
      EXPECT_THAT(ptx, HasSubstr("fence.acq_rel.gpu"));
    }
  } else {
    EXPECT_THAT(ptx, testing::Not(HasSubstr("gatejit_partials")));
    EXPECT_THAT(ptx, testing::Not(HasSubstr("atom.global")));
  }
}

INSTANTIATE_TEST_SUITE_P(Sm90, TiledMmaPtx,
                         testing::Values(std::pair{DType::kBF16, int64_t(32)}, std::pair{DType::kF16, int64_t(24)},
                                         std::pair{DType::kBF16, int64_t(64)}, std::pair{DType::kF16, int64_t(128)},
                                         std::pair{DType::kBF16, int64_t(512)}, std::pair{DType::kBF16, int64_t(2048)}),
                         dtype_m_name);

// Tuning overrides (GATEJIT_MMA_TUNING) ask for stages and blocks per SM
// that may not fit together: the planner keeps the pipeline's fewest stages
// (wgmma: 3, one stage's products run while two more are copied) and asks
// ptxas for no more blocks per SM than the shared memory holds (228 KiB per
// SM, 1 KiB of it reserved per block). v26's sweep ran a variant whose
// impossible request left wgmma with 2 stages: NaN results.
TEST(PtxCode, TiledStagesFitTheBlocksAskedPerSm) {
  ScopedMmaTuning scoped("");
  for (const char *tuning : {"", "bn=32,stages=4,bps=4", "wg=2,bn=256,stages=9,bps=9", "bps=6", "wgmma=0,bps=5",
                             "wgmma=0,bn=64,bm=64,stages=8,bps=4"}) {
    for (int64_t m : {64, 2048}) {
      scoped.set(tuning);
      auto compiled = compiler::compile(seed_with(Target::kSm90, DType::kBF16, m));
      ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
      const nlohmann::json &r = compiled->report;
      ASSERT_EQ(r.value("template_file", ""), "mma_tiled");
      const std::string ptx(compiled->binary.code.begin(), compiled->binary.code.end());
      std::smatch blocks;
      ASSERT_TRUE(std::regex_search(ptx, blocks, std::regex(R"(\.minnctapersm (\d+))"))) << tuning;
      const int64_t stages = r["tuning"]["STAGES"], wgmma = r["tuning"]["WGMMA"];
      EXPECT_GE(stages, wgmma ? 3 : 2) << tuning << " M " << m;
      EXPECT_LE(std::stoll(blocks[1]) * (compiled->binary.geometry.shared_bytes + 1024), 228 * 1024)
          << tuning << " M " << m;
    }
  }
}

// pending=0 (a sweep knob): each stage's wgmma group is waited for and its
// slot refilled at once, STAGES tiles ahead (the prologue fills every slot).
TEST(PtxCode, WgmmaPendingZeroRefillsTheStageJustUsed) {
  ScopedMmaTuning scoped("pending=0");
  auto compiled = compiler::compile(seed_with(Target::kSm90, DType::kBF16, 512));
  ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
  const nlohmann::json &tuning = compiled->report["tuning"];
  EXPECT_EQ(tuning.value("WGMMA_PENDING", -1), 0);
  const std::string ptx(compiled->binary.code.begin(), compiled->binary.code.end());
  EXPECT_THAT(ptx, HasSubstr("wgmma.wait_group.sync.aligned \t0;"));
  EXPECT_THAT(ptx, testing::Not(HasSubstr("wgmma.wait_group.sync.aligned \t1;")));
  // The prologue issues a stage per slot: two boxes each.
  const int64_t stages = tuning["STAGES"];
  EXPECT_GE(count_of(ptx, "cp.async.bulk.tensor.2d"), 2 * stages + 2);
}

// Where 8-element row pieces are not whole 16-byte accesses (N = 1003),
// the epilogue works on the accumulator layout's elements, 2 bytes each;
// every attn element is loaded before the first out element is stored, so
// that in place (out = attn) the loads need not wait for the stores one by
// one (v34).
TEST(PtxCode, TiledEpilogueElementwiseLoadsAttnBeforeAnyStore) {
  for (int64_t m : {40, 512}) {
    Contract c = seed_with(Target::kSm90, DType::kBF16, m);
    c.n = 1003;
    c.ld_attn = c.ld_out = 1003;
    auto compiled = compiler::compile(c);
    ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
    ASSERT_EQ(compiled->report.value("template_file", ""), "mma_tiled");
    EXPECT_EQ(compiled->report["tuning"].value("EPI_STAGED", -1), 0);
    const std::string ptx(compiled->binary.code.begin(), compiled->binary.code.end());
    const size_t first_store = ptx.find("st.global.b16");
    const size_t last_load = ptx.rfind("ld.global.b16");
    ASSERT_NE(first_store, std::string::npos);
    ASSERT_NE(last_load, std::string::npos);
    EXPECT_LT(last_load, first_store) << "M " << m;
  }
}

// The staged epilogue's attn pieces are loaded before the K loop where the
// registers allow (v35): not with M = 1024's split 192 x 128 tiles, whose
// partials come back beside the accumulators. At M = 2048 (no K split)
// every 16-byte global load before the first wgmma is an attn piece.
TEST(PtxCode, StagedEpilogueLoadsAttnBeforeTheKLoopWhereRegistersAllow) {
  for (auto [m, early] : {std::pair<int64_t, int64_t>{2048, 1}, {512, 1}, {1024, 0}}) {
    auto compiled = compiler::compile(seed_with(Target::kSm90, DType::kBF16, m));
    ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
    const nlohmann::json &tuning = compiled->report["tuning"];
    EXPECT_EQ(tuning.value("EPI_STAGED", -1), 1) << "M " << m;
    EXPECT_EQ(tuning.value("EPI_ATTN_EARLY", -1), early) << "M " << m;
    if (m != 2048) continue;
    const std::string ptx(compiled->binary.code.begin(), compiled->binary.code.end());
    const int64_t threads = compiled->report["workgroup_size"][0].get<int64_t>();
    const int64_t pieces = tuning["BM"].get<int64_t>() * tuning["BN"].get<int64_t>() / 8;
    const std::string before_k_loop = ptx.substr(0, ptx.find("wgmma.mma_async"));
    EXPECT_EQ(count_of(before_k_loop, "ld.global.v4.b32"), (pieces + threads - 1) / threads);
  }
}

// wgmma accumulators: accs=2 (a sweep knob) gives the K steps of a stage
// two accumulators in turn, summed after the K loop: two register sets
// alternate in the four instructions of a stage.
TEST(PtxCode, WgmmaAccumulatorsTakeTheKStepsInTurn) {
  ScopedMmaTuning scoped("accs=2");
  auto compiled = compiler::compile(seed_with(Target::kSm90, DType::kBF16, 512));
  ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
  EXPECT_EQ(compiled->report["tuning"].value("ACCS", -1), 2);
  const std::string ptx(compiled->binary.code.begin(), compiled->binary.code.end());
  std::vector<std::string> first_registers;
  const std::regex wgmma(R"(wgmma\.mma_async[^{]*\{(%r\d+),)");
  for (auto it = std::sregex_iterator(ptx.begin(), ptx.end(), wgmma); it != std::sregex_iterator(); ++it)
    first_registers.push_back((*it)[1]);
  ASSERT_EQ(first_registers.size(), 4u);
  EXPECT_NE(first_registers[0], first_registers[1]);
  EXPECT_EQ(first_registers[0], first_registers[2]);
  EXPECT_EQ(first_registers[1], first_registers[3]);
}

// tma=0 keeps the wgmma products but copies the stages as before, every
// thread 16-byte cp.async chunks: no tensor maps in the ABI or geometry.
TEST(PtxCode, WgmmaWithoutTmaCopiesChunks) {
  ScopedMmaTuning scoped("tma=0");
  auto compiled = compiler::compile(seed_with(Target::kSm90, DType::kBF16, 512));
  ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
  const nlohmann::json &r = compiled->report;
  EXPECT_EQ(r["tuning"].value("WGMMA", -1), 1);
  EXPECT_EQ(r["tuning"].value("TMA", -1), 0);
  const std::string ptx(compiled->binary.code.begin(), compiled->binary.code.end());
  EXPECT_THAT(ptx, HasSubstr("cp.async.cg.shared.global"));
  EXPECT_THAT(ptx, testing::Not(HasSubstr("cp.async.bulk.tensor")));
  EXPECT_THAT(ptx, testing::Not(HasSubstr("mbarrier")));
  EXPECT_THAT(ptx, HasSubstr("fence.proxy.async.shared::cta"));  // cp.async lands through the generic proxy
  EXPECT_THAT(ptx, testing::Not(HasSubstr("_param_11")));
  EXPECT_FALSE(compiled->binary.geometry.tensor_maps.any());
}

// At M = 16 and below, and where K is not a whole number of 64-element
// stages, sm_90 keeps the register-streamed form (no K split, no dynamic
// shared memory).
TEST(PtxCode, RegisterStreamedMmaWhereTiledDoesNotApply) {
  for (auto [m, k] : {std::pair<int64_t, int64_t>{16, 7168}, {128, 7160}}) {
    Contract c = seed(Target::kSm90);
    c.m = m;
    c.k = c.ld_hidden = c.ld_weight = k;
    auto compiled = compiler::compile(c);
    ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
    EXPECT_EQ(compiled->report.value("template", ""), "mma");
    EXPECT_EQ(compiled->report.value("template_file", ""), "mma") << "m " << m << " k " << k;
    EXPECT_EQ(compiled->binary.geometry.k_blocks, 1u);
    EXPECT_EQ(compiled->binary.geometry.shared_bytes, 0u);
  }
}


// Executables declare their ABI (kernel_abi.h): the argument list the plan
// writes into the binary, which the runtime packs a launch from, is the code
// object's own parameter list, argument for argument (the sizes the AMDGPU
// metadata gives its explicit arguments, or the PTX entry's .param list):
// every form on every target, the TMA form's two 128-byte tensor maps
// included. A template whose signature changed without its plan would fail
// here, not at a launch.
TEST(DeclaredAbi, IsTheCodeObjectsParameterList) {
  std::vector<Contract> contracts;
  for (Target t : {Target::kGfx950, Target::kGfx942, Target::kSm90})
    for (int64_t m : {1, 32, 2048}) contracts.push_back(seed_with(t, DType::kBF16, m));
  Contract generic = seed(Target::kSm90);
  generic.template_kind = TemplateKind::kGeneric;
  contracts.push_back(generic);
  bool saw_tensor_maps = false;
  for (const Contract &c : contracts) {
    auto compiled = compiler::compile(c);
    ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
    const std::vector<AbiArg> abi = declared_abi(compiled->binary);
    EXPECT_EQ(abi, compiled->binary.abi) << "the compiler writes its list out";
    nlohmann::json want = nlohmann::json::array();
    for (const AbiArg &a : abi) {
      want.push_back(abi_arg_bytes(a.kind));
      saw_tensor_maps |= a.kind == AbiArgKind::kTensorMap;
    }
    EXPECT_EQ(compiled->report["kernels"][0]["arg_bytes"], want)
        << canonical_text(c) << ": " << abi_text(abi) << " (" << compiled->report.value("template_file", "") << ")";
    EXPECT_EQ(compiled->report.value("abi", ""), abi_text(abi));
  }
  EXPECT_TRUE(saw_tensor_maps) << "no TMA kernel among the contracts: the 128-byte arguments went unchecked";
}

}  // namespace
}  // namespace gatejit
