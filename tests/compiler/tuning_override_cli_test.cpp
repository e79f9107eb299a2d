// The command line refuses a GATEJIT_MMA_TUNING it cannot parse as a usage
// error (exit 2), naming the key and its range, in every subcommand that
// compiles, before it reads anything else; the subcommands that never
// compile ignore it. rt=2147483648 killed the tool with SIGFPE.
#include <gtest/gtest.h>

#include "compiler/compiler_test_support.h"

namespace gatejit {
namespace {

using namespace testing_support;

constexpr const char *kContract = "--m 64 --n 1536 --k 7168 --target sm_90";

TEST(TuningOverrideCli, EveryCompilingSubcommandExitsTwoNamingTheKeyAndRange) {
  TempDir dir;
  ScopedMmaTuning scoped("rt=2147483648");
  const std::string says = "gatejit: error: GATEJIT_MMA_TUNING: rt=2147483648 is out of range: rt takes 1-4 (";
  const std::string spec = (dir / "no-such-spec.json").string();
  for (const std::string &args :
       {std::string("compile --no-cache ") + kContract, std::string("compile ") + kContract,
        std::string("ir --stage template ") + kContract, std::string("explain ") + kContract,
        "precompile " + spec + " -o " + (dir / "out.gjb").string()}) {
    SCOPED_TRACE(args);
    const CliResult r = gatejit_cli(dir, args);
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_EQ(r.err.rfind(says, 0), 0u) << r.err;
    EXPECT_EQ(r.out, "");
  }
  EXPECT_FALSE(fs::exists(dir / "out.gjb"));
}

TEST(TuningOverrideCli, MalformedItemsAreUsageErrorsToo) {
  TempDir dir;
  ScopedMmaTuning scoped("");
  for (const auto &[tuning, says] : std::initializer_list<std::pair<const char *, const char *>>{
           {"splits=65536", "splits=65536 is out of range: splits takes 1-32"},
           {"vecs=2147483648", "vecs=2147483648 is out of range: vecs takes 1-8"},
           {"tiled=2", "tiled=2 is out of range: tiled takes 0 or 1"},
           {"rt=-1", "rt='-1' is not a decimal number: rt takes 1-4"},
           {"rt", "'rt' has no '=value': rt takes 1-4"},
           {"rt=2,rt=2", "rt is given twice"},
           {"colour=1", "unknown key 'colour' (the keys: accs, attn,"}}) {
    SCOPED_TRACE(tuning);
    scoped.set(tuning);
    const CliResult r = gatejit_cli(dir, std::string("compile --no-cache ") + kContract);
    EXPECT_EQ(r.rc, 2) << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
  }
}

TEST(TuningOverrideCli, SubcommandsThatNeverCompileIgnoreIt) {
  TempDir dir;
  ScopedMmaTuning scoped("rt=2147483648");
  const CliResult stats = gatejit_cli(dir, "cache stats");
  EXPECT_EQ(stats.rc, 0) << stats.err;
  const CliResult inspect = gatejit_cli(dir, "inspect " + (dir / "missing.hsaco").string());
  EXPECT_EQ(inspect.rc, 1) << inspect.err;  // the command ran: the file is missing
  EXPECT_EQ(inspect.err.find("GATEJIT_MMA_TUNING"), std::string::npos) << inspect.err;
}

TEST(TuningOverrideCli, AValidOverrideCompiles) {
  TempDir dir;
  ScopedMmaTuning scoped("tiled=0,splits=04");
  const CliResult r = gatejit_cli(dir, std::string("compile --no-cache --json ") + kContract);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("/mma-tuning:splits=4,tiled=0\""), std::string::npos) << "the canonical text in the toolchain";
  EXPECT_NE(r.out.find("\"SPLITS\": 4"), std::string::npos);
}

}  // namespace
}  // namespace gatejit
