// Compile-time benchmarks of the in-process compiler.
//
//  BM_ColdCompile      one compiler::compile() per iteration. The compiler has
//                      no in-memory cache, so every iteration runs the whole
//                      pipeline (template -> MLIR -> LLVM -> code object);
//                      only process-wide one-time setup (target registration)
//                      is shared between iterations.
//  BM_FirstCompileInFreshProcess
//                      re-executes this program (a fresh process, nothing
//                      initialised) to compile once, and reports the time of
//                      that first compile() call - what a serving process pays
//                      for its first JIT miss - and the child's whole wall time.
//
//   ./build/bench/compile_bench --benchmark_filter=ColdCompile
#include <benchmark/benchmark.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "gatejit/compiler/compiler.h"
#include "support/seed_contract.h"
#include "gatejit/contract.h"

extern char **environ;

namespace {

using gatejit::Contract;
using gatejit::Target;

using gatejit::testing_support::seed;

// Which template each compiles follows the loader's choice (docs/contract.md):
// seed and m16 are gemv on gfx9xx and mma on sm_90; m128 is mma.
enum Variant : int64_t { kSeed = 0, kM16 = 1, kM128 = 2, kGeneric = 3 };

Contract variant_contract(Target t, int64_t v) {
  Contract c = seed(t);
  if (v == kM16) c.m = 16;
  if (v == kM128) c.m = 128;
  if (v == kGeneric) c.template_kind = gatejit::TemplateKind::kGeneric;
  return c;
}

const char *variant_name(int64_t v) {
  return v == kSeed ? "seed" : v == kM16 ? "m16" : v == kM128 ? "m128" : "generic";
}

void BM_ColdCompile(benchmark::State &state, Contract c) {
  size_t bytes = 0;
  for (auto _ : state) {
    auto r = gatejit::compiler::compile(c);
    if (!r.ok()) {
      state.SkipWithError(r.status().to_string().c_str());
      return;
    }
    bytes = r->binary.code.size();
    benchmark::DoNotOptimize(r->binary.code.data());
  }
  state.counters["code_bytes"] = double(bytes);
}

void register_cold_compiles() {
  auto add = [](Target t, int64_t v) {
    const std::string name = std::string("BM_ColdCompile/") + gatejit::target_name(t) + "/" + variant_name(v);
    benchmark::RegisterBenchmark(name.c_str(), BM_ColdCompile, variant_contract(t, v))
        ->Unit(benchmark::kMillisecond)
        ->MinTime(1.0)
        ->Repetitions(5)
        ->ReportAggregatesOnly(true);
  };
  for (Target t : {Target::kGfx950, Target::kGfx942, Target::kSm90}) add(t, kSeed);
  for (Target t : {Target::kGfx950, Target::kSm90}) {
    add(t, kM16);
    add(t, kM128);
    add(t, kGeneric);
  }
}

// --- first compile in a fresh process -------------------------------------

constexpr std::string_view kChildFlag = "--gatejit-first-compile-child=";

// Child side: compile once, print the compile() wall time in ms on stdout.
int child_main(Target t) {
  const auto start = std::chrono::steady_clock::now();
  auto r = gatejit::compiler::compile(seed(t));
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!r.ok()) {
    std::fprintf(stderr, "%s\n", r.status().to_string().c_str());
    return 1;
  }
  std::printf("%.6f\n", ms);
  return 0;
}

void BM_FirstCompileInFreshProcess(benchmark::State &state, Target t) {
  const std::string flag = std::string(kChildFlag) + gatejit::target_name(t);
  double process_ms_total = 0;
  for (auto _ : state) {
    int fds[2];
    if (pipe(fds) != 0) {
      state.SkipWithError("pipe failed");
      return;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    char *argv[] = {const_cast<char *>("/proc/self/exe"), const_cast<char *>(flag.c_str()), nullptr};
    const auto start = std::chrono::steady_clock::now();
    pid_t pid = 0;
    const int err = posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    close(fds[1]);
    if (err != 0) {
      close(fds[0]);
      state.SkipWithError("posix_spawn failed");
      return;
    }
    std::string out;
    char buf[256];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof buf)) > 0) out.append(buf, size_t(n));
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    process_ms_total +=
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || out.empty()) {
      state.SkipWithError("child compile failed");
      return;
    }
    state.SetIterationTime(std::strtod(out.c_str(), nullptr) / 1000.0);
  }
  state.counters["process_ms"] = benchmark::Counter(process_ms_total, benchmark::Counter::kAvgIterations);
}

void register_first_compiles() {
  for (Target t : {Target::kGfx950, Target::kGfx942, Target::kSm90})
    benchmark::RegisterBenchmark((std::string("BM_FirstCompileInFreshProcess/") + gatejit::target_name(t)).c_str(),
                                 BM_FirstCompileInFreshProcess, t)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->Iterations(5)
        ->Repetitions(3)
        ->ReportAggregatesOnly(true);
}

}  // namespace

int main(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a.rfind(kChildFlag, 0) == 0) {
      auto t = gatejit::parse_target(a.substr(kChildFlag.size()));
      return t.ok() ? child_main(*t) : 2;
    }
  }
  register_cold_compiles();
  register_first_compiles();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
