// Every GATEJIT_MMA_TUNING key at both ends of its range (tuning_keys())
// through the real planner and code generator: each compile finishes within
// a time bound and either builds or fails with a Status, never a signal.
// Each runs as its own `gatejit compile` process, killed at the bound, so a
// crash or a hang fails this test (naming the key, the value and the
// signal) instead of ending the run.
// A key gets a small contract whose plan reads it (the form it expects).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <map>
#include <sstream>
#include <thread>
#include <vector>

#include "compiler/compiler_test_support.h"
#include "tuning_override.h"

namespace gatejit::compiler {
namespace {

using namespace testing_support;

// Long past a real compile's few seconds on a loaded machine; the values
// this test guards against (rt=65536, splits=65536) ran past 2 minutes.
constexpr int kBoundSeconds = 90;

struct EdgeContract {
  const char *flags;    // gatejit compile's contract flags
  const char *context;  // other keys that route the plan to the form ("" none)
  const char *form;     // the report's template_file (nullptr: the key decides it)
};

constexpr const char *kSm90Gemv = "--target sm_90 --m 16 --n 1536 --k 7168 --template gemv";
constexpr const char *kGfx950Gemv = "--target gfx950 --m 4 --n 1536 --k 7168 --template gemv";
constexpr const char *kSm90Decode = "--target sm_90 --m 16 --n 1536 --k 7168 --template mma";
constexpr const char *kSm90Tall = "--target sm_90 --m 128 --n 1536 --k 7168";
constexpr const char *kGfx950Split = "--target gfx950 --m 64 --n 1536 --k 7168";
constexpr const char *kGfx950Tiled = "--target gfx950 --m 256 --n 1536 --k 7168";

// The contracts of each key (a key may have more than one: `splits` is read
// by both mma forms).
const std::multimap<std::string_view, EdgeContract> &edge_contracts() {
  static const std::multimap<std::string_view, EdgeContract> cases = {
      {"grows", {kSm90Gemv, "", "gemv"}},
      {"gunroll", {kSm90Gemv, "", "gemv"}},
      {"gksplit", {kGfx950Gemv, "", "gemv"}},
      {"gwfirst", {kGfx950Gemv, "", "gemv"}},
      {"rt", {"--target gfx950 --m 32 --n 1536 --k 7168", "tiled=0", "mma"}},
      {"rt", {kSm90Decode, "", "mma"}},
      {"ksplit", {kSm90Decode, "", "mma"}},
      {"budget", {kSm90Decode, "", "mma"}},
      {"vecs", {kSm90Decode, "", "mma"}},
      {"groups", {kSm90Decode, "", "mma"}},
      {"mtiles", {kSm90Tall, "tiled=0", "mma"}},
      {"mstride", {kSm90Tall, "tiled=0,mtiles=8", "mma"}},
      {"mrows", {"--target gfx950 --m 32 --n 1536 --k 7168", "tiled=0", "mma"}},
      {"unroll", {kSm90Decode, "", "mma"}},
      {"vw", {"--target gfx950 --m 32 --n 1536 --k 7168", "rt=2,mtiles=2,splits=7,mstride=32", "mma"}},
      {"gfx950_plan", {"--target sm_90 --m 96 --n 1536 --k 7168", "", "mma_tiled"}},
      {"splits", {kGfx950Split, "tiled=0", "mma"}},
      {"splits", {kSm90Tall, "wgmma=0", "mma_tiled"}},
      {"round", {"--target gfx950 --m 128 --n 1536 --k 7168", "", "mma_tiled"}},
      {"poll", {kGfx950Split, "tiled=0", "mma"}},
      {"poll", {"--target gfx950 --m 128 --n 1536 --k 7168", "", "mma_tiled"}},
      {"oneround", {"--target gfx950 --m 128 --n 1536 --k 7168", "", "mma_tiled"}},
      {"tiled", {"--target sm_90 --m 32 --n 1536 --k 7168", "", nullptr}},
      {"tile128", {"--target gfx950 --m 512 --n 1536 --k 7168", "", "mma_tiled"}},
      {"wgmma", {kSm90Tall, "", "mma_tiled"}},
      {"tma", {kSm90Tall, "", "mma_tiled"}},
      {"persistent", {"--target gfx950 --m 1024 --n 12288 --k 7168", "", "mma_tiled"}},
      {"refill", {kGfx950Tiled, "", "mma_tiled"}},
      {"drain", {kGfx950Tiled, "", "mma_tiled"}},
      {"wg", {kSm90Tall, "", "mma_tiled"}},
      {"pending", {kSm90Tall, "", "mma_tiled"}},
      {"accs", {kSm90Tall, "", "mma_tiled"}},
      {"bn", {kSm90Tall, "", "mma_tiled"}},
      {"bm", {kSm90Tall, "wgmma=0", "mma_tiled"}},
      {"bk", {"--target sm_90 --m 32 --n 1536 --k 7168", "", "mma_tiled"}},
      {"waves", {kSm90Tall, "wgmma=0", "mma_tiled"}},
      {"warps_n", {kSm90Tall, "wgmma=0", "mma_tiled"}},
      {"stages", {kGfx950Tiled, "", "mma_tiled"}},
      {"stages", {kSm90Tall, "", "mma_tiled"}},
      {"bps", {kSm90Tall, "", "mma_tiled"}},
      {"attn", {"--target gfx950 --m 16 --n 1536 --k 7168 --template mma", "", "mma"}},
      {"attn", {kGfx950Gemv, "", "gemv"}},
      {"prefetch", {"--target sm_90 --m 1 --n 3072 --k 7168 --template mma", "", "mma"}},
      {"elements", {"--target sm_90 --m 4 --n 1536 --k 7168 --template mma", "", "mma"}},
  };
  return cases;
}

const TuningKey &key_named(std::string_view name) {
  for (const TuningKey &k : tuning_keys())
    if (k.name == name) return k;
  throw std::invalid_argument(std::string(name));
}

// One `gatejit compile` run to its end or to the bound.
struct BoundedRun {
  int exit_code = -1;      // where it exited
  int signal = 0;          // where a signal ended it
  bool timed_out = false;  // killed at the bound
  double seconds = 0;
  std::string out, err;
};

// `gatejit compile --no-cache --json FLAGS` with GATEJIT_MMA_TUNING = tuning.
BoundedRun compile_bounded(const TempDir &dir, const std::string &flags, const std::string &tuning) {
  const fs::path out = dir / "stdout.txt", err = dir / "stderr.txt";
  std::vector<std::string> args = {GATEJIT_TOOL, "compile", "--no-cache", "--json"};
  std::istringstream words(flags);
  for (std::string w; words >> w;) args.push_back(w);
  std::vector<char *> argv;
  for (std::string &a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  ScopedMmaTuning scoped(tuning.c_str());  // inherited by the child
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {  // only async-signal-safe calls until exec
    const int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0) _exit(126);
    execv(argv[0], argv.data());
    _exit(127);
  }
  BoundedRun r;
  if (pid < 0) return r;
  int status = 0;
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (elapsed() > kBoundSeconds) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      r.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  r.seconds = elapsed();
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status) && !r.timed_out) r.signal = WTERMSIG(status);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

class TuningEdges : public testing::TestWithParam<std::string_view> {};

TEST_P(TuningEdges, EveryEndOfTheRangeCompilesOrFailsCleanlyInTime) {
  const TuningKey &key = key_named(GetParam());
  const auto [first, last] = edge_contracts().equal_range(key.name);
  ASSERT_NE(first, last) << key.name << " has no contract here: give it one whose plan reads it";
  const int64_t lo = key.only.empty() ? key.min : key.only.front();
  const int64_t hi = key.only.empty() ? key.max : key.only.back();
  TempDir dir;
  for (auto it = first; it != last; ++it) {
    const EdgeContract &e = it->second;
    for (int64_t v : lo == hi ? std::vector<int64_t>{lo} : std::vector<int64_t>{lo, hi}) {
      const std::string tuning =
          std::string(e.context) + (*e.context ? "," : "") + std::string(key.name) + "=" + std::to_string(v);
      SCOPED_TRACE(tuning + " " + e.flags);
      const BoundedRun r = compile_bounded(dir, e.flags, tuning);
      std::printf("  %-44s %-52s %6.1f s  exit %d\n", tuning.c_str(), e.flags, r.seconds, r.exit_code);
      ASSERT_FALSE(r.timed_out) << "ran past the " << kBoundSeconds << " s bound\n" << r.err;
      ASSERT_EQ(r.signal, 0) << "killed by signal " << r.signal << " (" << strsignal(r.signal) << ")\n" << r.err;
      ASSERT_NE(r.exit_code, -1) << "no exit status";
      if (r.exit_code != 0) {
        // A Status the planner or the code generator returned.
        EXPECT_EQ(r.exit_code, 1) << r.err;
        EXPECT_NE(r.err.find("gatejit: error: "), std::string::npos) << r.err;
        continue;
      }
      if (e.form) EXPECT_NE(r.out.find(std::string("\"template_file\": \"") + e.form + "\""), std::string::npos)
          << "not the form that reads " << key.name;
    }
  }
}

std::vector<std::string_view> key_names() {
  std::vector<std::string_view> names;
  for (const TuningKey &k : tuning_keys()) names.push_back(k.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(EveryKey, TuningEdges, testing::ValuesIn(key_names()),
                         [](const testing::TestParamInfo<std::string_view> &p) { return std::string(p.param); });

}  // namespace
}  // namespace gatejit::compiler
