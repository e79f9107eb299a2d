// Loads a precompiled kernel bundle with JIT disabled, launches the seed
// contract on the GPU and checks every element against the host reference.
//
//   bundle_launch KERNELS.gjb [M]
//
// This is the deployment path: no compiler, no LLVM, kernels from a bundle
// made elsewhere with `gatejit precompile`. Runs on the GPU machine
// (scripts/device_run.sh); elsewhere it says that no GPU is present.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "gatejit/gatejit.h"
#include "support/cuda_driver.h"
#include "support/gate_reference.h"

using namespace gatejit;

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s KERNELS.gjb [M]\n", argv[0]);
    return 2;
  }
  const int64_t M = argc > 2 ? std::atoll(argv[2]) : 1, N = 1536, K = 7168;
  std::string why;
  if (!gputest::driver(&why)) {
    std::printf("no GPU: %s\n", why.c_str());
    return 0;
  }
  gatejit_runtime_options_t options = GATEJIT_RUNTIME_OPTIONS_INIT;
  options.bundle_path = argv[1];
  options.disable_jit = 1;
  gatejit_runtime_t rt = nullptr;
  if (gatejit_status_t s = gatejit_runtime_create(&options, &rt)) {
    std::fprintf(stderr, "gatejit: %s\n", gatejit_status_message(s));
    return 1;
  }
  // Fresh random inputs, NaN-poisoned output.
  const uint64_t seed = std::random_device{}();
  auto hidden = reference::make_tensor(DType::kBF16, M, K, K), weight = reference::make_tensor(DType::kBF16, N, K, K),
       attn = reference::make_tensor(DType::kBF16, M, N, N), out = reference::make_tensor(DType::kBF16, M, N, N);
  reference::fill_random(hidden, 1.0f, seed);
  reference::fill_random(weight, float(6 / std::sqrt(double(K))), seed + 1);
  reference::fill_random(attn, 2.0f, seed + 2);
  gputest::DeviceBuffer dh(hidden.bytes.size()), dw(weight.bytes.size()), da(attn.bytes.size()), dout(out.bytes.size());
  dh.upload(hidden.bytes.data(), hidden.bytes.size());
  dw.upload(weight.bytes.data(), weight.bytes.size());
  da.upload(attn.bytes.data(), attn.bytes.size());
  gputest::check(gputest::driver(nullptr)->cuMemsetD16(dout.dptr(), 0x7fc0, out.bytes.size() / 2), "poison");

  gatejit_gate_args_t args = GATEJIT_GATE_ARGS_INIT;
  args.hidden = {dh.ptr(), GATEJIT_BF16, M, K, K};
  args.weight = {dw.ptr(), GATEJIT_BF16, N, K, K};
  args.attn = {da.ptr(), GATEJIT_BF16, M, N, N};
  args.out = {dout.ptr(), GATEJIT_BF16, M, N, N};
  args.act = GATEJIT_SIGMOID;
  args.rounding = GATEJIT_ROUNDING_BOUNDARY;
  args.device_kind = GATEJIT_DEVICE_CUDA;
  char *how = nullptr;
  if (gatejit_status_t s = gatejit_explain(rt, &args, &how)) {
    std::fprintf(stderr, "explain: %s\n", gatejit_status_message(s));
    return 1;
  }
  std::printf("M=%lld N=%lld K=%lld: %s\n", (long long)M, (long long)N, (long long)K, how);
  gatejit_string_free(how);
  if (gatejit_status_t s = gatejit_gate_epilogue(rt, &args)) {
    std::fprintf(stderr, "launch: %s\n", gatejit_status_message(s));
    return 1;
  }
  gputest::check(gputest::driver(nullptr)->cuCtxSynchronize(), "synchronize");
  dout.download(out.bytes.data(), out.bytes.size());
  reference::GateProblem p{Activation::kSigmoid, Rounding::kBoundary, &hidden, &weight, &attn};
  const auto r = reference::check_gate(p, out);
  std::printf("checked %lld elements against the host reference (seed %llu): %lld mismatches%s%s\n",
              (long long)r.checked, (unsigned long long)seed, (long long)r.mismatches,
              r.mismatches ? "; first: " : "", r.first_failure.c_str());
  gatejit_runtime_destroy(rt);
  return r.mismatches == 0 ? 0 : 1;
}
