// The gatejit command line (the real binary, GATEJIT_TOOL) against the
// library: compile -o writes what compile() produces, --json is the report,
// inspect reads the same numbers back, --contract FILE.json equals the flags,
// and ir prints each pipeline stage.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "compiler/compiler_test_support.h"
#include "gatejit/compiler/compiler.h"
#include "gatejit/contract.h"

namespace gatejit {
namespace {

using namespace testing_support;

namespace fs = std::filesystem;
using testing::HasSubstr;



std::vector<uint8_t> slurp_bytes(const fs::path &p) {
  const std::string s = slurp(p);
  return {s.begin(), s.end()};
}



constexpr const char *kSeedFlags = "--m 1 --n 1536 --k 7168 --dtype bf16 --act sigmoid";


nlohmann::json parse_json(const std::string &text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << "not valid JSON:\n" << text;
  return j;
}

class CliCompile : public testing::TestWithParam<Target> {};

TEST_P(CliCompile, OutputFileEqualsLibraryCodeObject) {
  const Target t = GetParam();
  TempDir dir;
  auto lib = compiler::compile(seed(t));
  ASSERT_TRUE(lib.ok()) << lib.status().to_string();
  const std::string flags = std::string("compile ") + kSeedFlags + " --target " + target_name(t);
  // A fresh cache (miss: compiled now), the same cache again (hit: read back
  // from disk) and --no-cache must all write the library's code object.
  const std::string runs[] = {"cache miss", "cache hit", "--no-cache"};
  for (size_t i = 0; i < std::size(runs); ++i) {
    SCOPED_TRACE(runs[i]);
    const fs::path output = dir / ("kernel-" + std::to_string(i) + ".bin");
    const std::string extra = runs[i] == "--no-cache" ? " --no-cache" : "";
    const CliResult r = gatejit_cli(dir, flags + extra + " -o " + output.string());
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(slurp_bytes(output), lib->binary.code);
    // The human-readable summary names the kernel and the file.
    EXPECT_THAT(r.out, HasSubstr(lib->binary.symbol));
    EXPECT_THAT(r.out, HasSubstr(output.string()));
  }
}

TEST_P(CliCompile, JsonReportHasTheFields) {
  const Target t = GetParam();
  TempDir dir;
  const CliResult r = gatejit_cli(dir, std::string("compile ") + kSeedFlags + " --target " + target_name(t) + " --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  const nlohmann::json j = parse_json(r.out);
  ASSERT_TRUE(j.is_object());
  auto lib = compiler::compile(seed(t));
  ASSERT_TRUE(lib.ok());
  nlohmann::json expected = lib->report;
  for (const char *f : {"compile_ms", "template", "reason", "grid", "workgroup_size", "contract", "target_id",
                        "format", "toolchain", "kernels", "instructions"})
    EXPECT_TRUE(j.contains(f)) << f;
  EXPECT_TRUE(j["compile_ms"].is_number());
  EXPECT_GT(j["compile_ms"].get<double>(), 0.0);
  // Where the compile went, phase by phase; the phases up to the code
  // object are inside compile_ms, the report's own (model) after it.
  const std::vector<std::string> code_phases = target_is_amdgpu(t)
      ? std::vector<std::string>{"plan", "instantiate", "mlir_context", "mlir_parse", "mlir_passes", "translate",
                                 "llvm_opt", "llvm_codegen", "link"}
      : std::vector<std::string>{"plan", "instantiate", "mlir_context", "mlir_parse", "mlir_passes", "translate",
                                 "llvm_opt", "llvm_codegen"};
  ASSERT_TRUE(j.contains("compile_phases_ms")) << j.dump();
  double code_ms = 0;
  for (const std::string &phase : code_phases) {
    ASSERT_TRUE(j["compile_phases_ms"].contains(phase)) << phase << " in " << j["compile_phases_ms"].dump();
    code_ms += j["compile_phases_ms"][phase].get<double>();
  }
  EXPECT_GT(j["compile_phases_ms"]["mlir_passes"].get<double>(), 0.0);
  EXPECT_LE(code_ms, j["compile_ms"].get<double>() + 0.01);
  for (const char *phase : {"code_report", "fingerprint", "model"}) EXPECT_TRUE(j["compile_phases_ms"].contains(phase));
  // The seed contract (M = 1): gemv on every target (sm_90 since v51).
  EXPECT_EQ(j["template"], "gemv");
  // What the tuning table chose, as the library reports it.
  ASSERT_TRUE(j.contains("tuning") && j["tuning"].is_object()) << j.dump();
  EXPECT_EQ(j["tuning"], expected["tuning"]);
  EXPECT_TRUE(j["tuning"].contains("KSPLIT") && j["tuning"].contains("UNROLL")) << j["tuning"].dump();
  EXPECT_TRUE(j["tuning"].contains("ROWS")) << j["tuning"].dump();
  EXPECT_EQ(j["target_id"], expected["target_id"]);
  EXPECT_EQ(j["grid"], expected["grid"]);
  EXPECT_EQ(j["workgroup_size"], expected["workgroup_size"]);
  EXPECT_EQ(j["contract"], canonical_text(*normalize(seed(t))));
  ASSERT_EQ(j["kernels"].size(), 1u);
  if (target_is_amdgpu(t)) {
    for (const char *f : {"vgpr_count", "sgpr_count", "lds_bytes", "scratch_bytes", "kernarg_bytes", "wave_size"}) {
      ASSERT_TRUE(j["kernels"][0].contains(f)) << f;
      EXPECT_EQ(j["kernels"][0][f], expected["kernels"][0][f]) << f;
    }
    EXPECT_GT(j["kernels"][0]["vgpr_count"].get<int>(), 0);
  }
  // Apart from the timing the CLI's report is the library's.
  // (The CLI adds what the disk cache did; the library knows no cache.)
  nlohmann::json a = j, b = expected;
  for (const char *timing : {"compile_ms", "compile_phases_ms"}) {
    a.erase(timing);
    b.erase(timing);
  }
  a.erase("cache");
  EXPECT_EQ(a, b);
}

TEST_P(CliCompile, InspectReadsBackTheSameKernel) {
  const Target t = GetParam();
  TempDir dir;
  const fs::path output = dir / "kernel.bin";
  const CliResult c = gatejit_cli(
      dir, std::string("compile ") + kSeedFlags + " --target " + target_name(t) + " --json -o " + output.string());
  ASSERT_EQ(c.rc, 0) << c.err;
  const nlohmann::json compiled = parse_json(c.out);
  const CliResult i = gatejit_cli(dir, "inspect " + output.string() + " --json");
  ASSERT_EQ(i.rc, 0) << i.err;
  const nlohmann::json inspected = parse_json(i.out);
  ASSERT_EQ(inspected["kernels"].size(), 1u);
  const auto &ck = compiled["kernels"][0];
  const auto &ik = inspected["kernels"][0];
  EXPECT_EQ(ik["symbol"], ck["symbol"]);
  EXPECT_EQ(inspected["target_id"], compiled["target_id"]);
  EXPECT_EQ(inspected["format"], compiled["format"]);
  EXPECT_EQ(inspected["instructions"], compiled["instructions"]);
  if (target_is_amdgpu(t)) {
    for (const char *f : {"vgpr_count", "sgpr_count", "agpr_count", "lds_bytes", "scratch_bytes", "kernarg_bytes"})
      EXPECT_EQ(ik[f], ck[f]) << f;
  } else {
    EXPECT_EQ(ik["registers_declared_total"], ck["registers_declared_total"]);
  }
  // inspect knows nothing of contracts or timings: it reads the file only.
  EXPECT_FALSE(inspected.contains("compile_ms"));
  EXPECT_FALSE(inspected.contains("template"));

  // The text form prints the same symbol.
  const CliResult text = gatejit_cli(dir, "inspect " + output.string());
  ASSERT_EQ(text.rc, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr(ck["symbol"].get<std::string>()));
}

TEST_P(CliCompile, ContractFileEqualsFlags) {
  const Target t = GetParam();
  TempDir dir;
  const fs::path json = dir / "contract.json";
  {
    std::ofstream out(json);
    out << nlohmann::json{{"m", 1}, {"n", 1536}, {"k", 7168}, {"dtype", "bf16"}, {"act", "sigmoid"},
                          {"target", target_name(t)}}
               .dump();
  }
  const fs::path from_file = dir / "from_file.bin", from_flags = dir / "from_flags.bin";
  const CliResult a = gatejit_cli(dir, "compile --contract " + json.string() + " -o " + from_file.string());
  ASSERT_EQ(a.rc, 0) << a.err;
  const CliResult b = gatejit_cli(
      dir, std::string("compile ") + kSeedFlags + " --target " + target_name(t) + " -o " + from_flags.string());
  ASSERT_EQ(b.rc, 0) << b.err;
  const auto file_bytes = slurp_bytes(from_file);
  EXPECT_FALSE(file_bytes.empty());
  EXPECT_EQ(file_bytes, slurp_bytes(from_flags));

  // Flags given with --contract override the file's keys.
  const fs::path overridden = dir / "overridden.bin";
  const CliResult o =
      gatejit_cli(dir, "compile --contract " + json.string() + " --act silu -o " + overridden.string());
  ASSERT_EQ(o.rc, 0) << o.err;
  Contract silu = seed(t);
  silu.act = Activation::kSilu;
  auto lib = compiler::compile(silu);
  ASSERT_TRUE(lib.ok());
  EXPECT_EQ(slurp_bytes(overridden), lib->binary.code);
  EXPECT_NE(slurp_bytes(overridden), file_bytes);
}

INSTANTIATE_TEST_SUITE_P(Targets, CliCompile, testing::Values(Target::kGfx950, Target::kGfx942, Target::kSm90),
                         [](const auto &info) { return std::string(target_name(info.param)); });

struct IrCase {
  const char *name;
  Target target;
  const char *stage;
  std::vector<std::string> expect;  // substrings the stage's text must contain
};

class CliIr : public testing::TestWithParam<IrCase> {};

TEST_P(CliIr, PrintsTheStage) {
  const IrCase &p = GetParam();
  TempDir dir;
  const CliResult r = gatejit_cli(
      dir, std::string("ir ") + kSeedFlags + " --target " + target_name(p.target) + " --stage " + p.stage);
  ASSERT_EQ(r.rc, 0) << r.err;
  for (const std::string &s : p.expect) EXPECT_THAT(r.out, HasSubstr(s)) << p.stage;
  auto stage = compiler::parse_stage(p.stage);
  ASSERT_TRUE(stage.ok());
  auto lib = compiler::emit_stage(seed(p.target), *stage);
  ASSERT_TRUE(lib.ok()) << lib.status().to_string();
  EXPECT_EQ(r.out, *lib);
}

INSTANTIATE_TEST_SUITE_P(
    Stages, CliIr,
    testing::Values(
        IrCase{"gfx950_template", Target::kGfx950, "template", {"gpu.func", "gatejit_gemv_bf16_sigmoid_boundary"}},
        IrCase{"gfx950_gpu", Target::kGfx950, "gpu", {"gpu.func", "gpu.subgroup_reduce"}},
        IrCase{"gfx950_llvm", Target::kGfx950, "llvm", {"define", "amdgpu_kernel", "amdgcn-amd-amdhsa"}},
        IrCase{"gfx950_isa", Target::kGfx950, "isa", {"global_load_dwordx4", "gfx950", "s_endpgm", "_dpp"}},
        IrCase{"gfx942_isa", Target::kGfx942, "isa", {"global_load_dwordx4", "gfx942"}},
        IrCase{"sm_90_gpu", Target::kSm90, "gpu", {"gpu.func", "gpu.subgroup_reduce", "gatejit_gemv_sums"}},
        IrCase{"sm_90_llvm", Target::kSm90, "llvm", {"define", "nvptx64"}},
        IrCase{"sm_90_isa", Target::kSm90, "isa", {".entry", ".target sm_90"}}),
    [](const auto &info) { return std::string(info.param.name); });

TEST(CliIrErrors, UnknownStageIsRefused) {
  TempDir dir;
  const CliResult r = gatejit_cli(dir, std::string("ir ") + kSeedFlags + " --target gfx950 --stage bogus");
  EXPECT_NE(r.rc, 0);
  EXPECT_THAT(r.err, HasSubstr("stage"));
  EXPECT_EQ(r.out, "");
}

TEST(CliInspect, RejectsAFileThatIsNoCodeObject) {
  TempDir dir;
  const fs::path junk = dir / "junk.bin";
  std::ofstream(junk) << "this is neither an ELF code object nor PTX\n";
  const CliResult r = gatejit_cli(dir, "inspect " + junk.string() + " --json");
  EXPECT_NE(r.rc, 0);
  EXPECT_THAT(r.err, HasSubstr(junk.string()));
}

}  // namespace
}  // namespace gatejit
