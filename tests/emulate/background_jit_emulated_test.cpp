// The background JIT end to end on the emulated gfx950, through the C API:
// the first call of an unseen contract is served at once by the shipped
// generic kernel while the real compiler compiles the specialised one; the
// call after the compile keeps the generic kernel and has the runtime's
// loader thread load the new module; the call after the load runs the
// specialised kernel. Every launch's output is checked element by element.
#include <gtest/gtest.h>

#include "gatejit/emulator/gate_run.h"

namespace gatejit::emulator {
namespace {

#ifdef GATEJIT_SHIPPED_BUNDLE_PATH
TEST(BackgroundJitEmulated, GenericAtOnceThenTheSpecialisedKernelLoadedOffTheCall) {
  EmulatedGpu gpu(Target::kGfx950);
  GateRunRequest r;
  r.contract.target = Target::kGfx950;
  r.contract.m = 4;
  r.contract.n = 256;
  r.contract.k = 512;
  r.seed = 5;
  r.launches = 3;
  r.background_jit = true;
  r.bundles = {GATEJIT_SHIPPED_BUNDLE_PATH};
  auto report = run_gate(gpu, r);
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_TRUE(report->passed()) << report->mismatches << " mismatches of " << report->checked;
  EXPECT_EQ(report->checked, 3 * 4 * 256);
  ASSERT_EQ(report->paths.size(), 3u);
  ASSERT_EQ(report->launches.size(), 3u);
  // Launch 0: the generic kernel from the bundle, the compile queued or running.
  EXPECT_EQ(report->paths[0].rfind("generic (specialised ", 0), 0u) << report->paths[0];
  EXPECT_NE(report->paths[0].find("compiles in the background"), std::string::npos) << report->paths[0];
  // Launch 1: compiled, not yet loaded: this call still runs the generic kernel.
  EXPECT_NE(report->paths[1].find("[now done; the next call outside a graph capture swaps it in]"), std::string::npos)
      << report->paths[1];
  EXPECT_EQ(report->launches[1].kernel, report->launches[0].kernel) << "the call that found the kernel compiled did not keep the generic one";
  // Launch 2: swapped in by the loader thread.
  EXPECT_EQ(report->paths[2].rfind("specialised ", 0), 0u) << report->paths[2];
  EXPECT_NE(report->paths[2].find("in the background"), std::string::npos) << report->paths[2];
  EXPECT_NE(report->launches[2].kernel, report->launches[0].kernel);
  EXPECT_EQ(report->launches[2].kernel, report->kernel);
  EXPECT_NE(report->launches[0].kernel.find("generic"), std::string::npos) << report->launches[0].kernel;
}
#endif

}  // namespace
}  // namespace gatejit::emulator
