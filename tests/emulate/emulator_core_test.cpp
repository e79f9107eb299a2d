// The emulator's core on the seed contract (M = 1, N = 1536, K = 7168, bf16,
// sigmoid, gfx950 -> the gemv form): the code object as the compiler makes
// it, loaded by the emulator, launched with the plan's geometry, every
// output element checked against the host reference.
#include <gtest/gtest.h>

#include <chrono>

#include "gatejit/compiler/compiler.h"
#include "gatejit/emulator/emulator.h"
#include "gatejit/kernel_abi.h"
#include "support/gate_reference.h"
#include "support/seed_contract.h"

namespace gatejit::emulator {
namespace {

using reference::HostTensor;

TEST(EmulatorCore, SeedContractMatchesReference) {
  const Contract c = testing_support::seed(Target::kGfx950);
  auto compiled = compiler::compile(c);
  ASSERT_TRUE(compiled.ok()) << compiled.status().message();
  const KernelBinary &kb = compiled->binary;

  HostTensor hidden = reference::make_tensor(DType::kBF16, c.m, c.k, c.k);
  HostTensor weight = reference::make_tensor(DType::kBF16, c.n, c.k, c.k);
  HostTensor attn = reference::make_tensor(DType::kBF16, c.m, c.n, c.n);
  reference::fill_random(hidden, 1.0f, 11);
  reference::fill_random(weight, 6.0f / std::sqrt(float(c.k)), 12);
  reference::fill_random(attn, 1.0f, 13);
  HostTensor out = reference::make_tensor(DType::kBF16, c.m, c.n, c.n);
  for (size_t i = 0; i < out.bytes.size(); i += 2) out.bytes[i] = 0xc0, out.bytes[i + 1] = 0x7f;

  Device dev(Target::kGfx950);
  for (HostTensor *t : {&hidden, &weight, &attn, &out}) dev.register_host(t->bytes.data(), t->bytes.size());
  auto module = dev.load(kb.code);
  ASSERT_TRUE(module.ok()) << module.status().message();
  for (const auto &u : dev.unimplemented(*module)) ADD_FAILURE() << "unimplemented: " << u;

  void *ptrs[4] = {hidden.bytes.data(), weight.bytes.data(), attn.bytes.data(), out.bytes.data()};
  int64_t scalars[7] = {c.m, c.n, c.k, c.k, c.k, c.n, c.n};
  std::vector<void *> args;
  for (const AbiArg &a : declared_abi(kb)) {
    if (a.kind == AbiArgKind::kPointer) args.push_back(&ptrs[int(a.value)]);
    else args.push_back(&scalars[int(a.value) - int(AbiValue::kM)]);
  }
  LaunchGrid grid;
  grid.workgroups = kb.geometry.launch_grid(c.n, c.m);
  grid.workgroup_size = {kb.geometry.block_x, 1, 1};
  grid.dynamic_lds_bytes = kb.geometry.shared_bytes;
  RunStats stats;
  const auto t0 = std::chrono::steady_clock::now();
  Status s = dev.launch(*module, kb.symbol, grid, args.data(), RunOptions{}, &stats);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(s.ok()) << s.message();
  std::printf("[emulate] seed: %llu waves, %llu instructions, %.2f s\n", (unsigned long long)stats.waves,
              (unsigned long long)stats.instructions, secs);
  reference::GateProblem p{c.act, c.rounding, &hidden, &weight, &attn};
  const auto r = reference::check_gate(p, out);
  EXPECT_EQ(r.checked, c.m * c.n);
  EXPECT_EQ(r.mismatches, 0) << r.first_failure;
}

}  // namespace
}  // namespace gatejit::emulator
