// The C API without a GPU: statuses carry codes and messages, explain works,
// and a launch says exactly what is missing instead of crashing.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "gatejit/gatejit.h"
#include "support/child_process.h"

namespace {

namespace testing_support = gatejit::testing_support;

std::string take(gatejit_status_t s, gatejit_status_code_t *code = nullptr) {
  if (code) *code = gatejit_status_code(s);
  std::string m = gatejit_status_message(s);
  gatejit_status_free(s);
  return m;
}

TEST(CApi, NullArgumentsAreErrorsNotCrashes) {
  gatejit_status_code_t code;
  EXPECT_NE(take(gatejit_runtime_create(nullptr, nullptr), &code).find("out_runtime"), std::string::npos);
  EXPECT_EQ(code, GATEJIT_INVALID_ARGUMENT);
  EXPECT_NE(take(gatejit_gate_epilogue(nullptr, nullptr)).find("runtime"), std::string::npos);
  EXPECT_EQ(gatejit_status_code(nullptr), GATEJIT_OK);
  EXPECT_STREQ(gatejit_status_message(nullptr), "");
}

// The argument and option structs carry their size (API version 2), so they
// can grow: a size the library does not know is refused, naming the field,
// the size it expects and the macro that sets it; a runtime is not created.
TEST(CApi, StructSizeIsCheckedAndNamed) {
  EXPECT_EQ(gatejit_api_version(), GATEJIT_API_VERSION);  // what a run-time binding compares
  gatejit_runtime_options_t o = GATEJIT_RUNTIME_OPTIONS_INIT;
  EXPECT_EQ(o.struct_size, sizeof(gatejit_runtime_options_t));
  o.disable_cache = 1;
  gatejit_runtime_t rt = nullptr;
  gatejit_status_code_t code;
  for (size_t bad : {size_t(0), sizeof(gatejit_runtime_options_t) - 8, sizeof(gatejit_runtime_options_t) + 8}) {
    gatejit_runtime_options_t b = o;
    b.struct_size = bad;
    const std::string m = take(gatejit_runtime_create(&b, &rt), &code);
    EXPECT_EQ(code, GATEJIT_INVALID_ARGUMENT);
    EXPECT_NE(m.find("options.struct_size = " + std::to_string(bad)), std::string::npos) << m;
    EXPECT_NE(m.find(bad < sizeof(gatejit_runtime_options_t) ? "GATEJIT_RUNTIME_OPTIONS_INIT" : "newer gatejit.h"),
              std::string::npos)
        << m;
    EXPECT_EQ(rt, nullptr);
  }
  ASSERT_EQ(take(gatejit_runtime_create(&o, &rt)), "");
  gatejit_gate_args_t a = GATEJIT_GATE_ARGS_INIT;
  EXPECT_EQ(a.struct_size, sizeof(gatejit_gate_args_t));
  a.struct_size = 0;
  char *text = nullptr;
  const std::string m = take(gatejit_explain(rt, &a, &text), &code);
  EXPECT_EQ(code, GATEJIT_INVALID_ARGUMENT);
  EXPECT_NE(m.find("args.struct_size = 0: set it to sizeof(gatejit_gate_args_t) = " +
                   std::to_string(sizeof(gatejit_gate_args_t)) + " (GATEJIT_GATE_ARGS_INIT"),
            std::string::npos)
      << m;
  EXPECT_EQ(text, nullptr);
  gatejit_runtime_destroy(rt);
}

// API version 3: GATEJIT_FP8_E4M3 and args.weight_scale after version 2's
// fields; version 4: args.out_scale, the struct's last field, so that the
// structs of versions 2 and 3 are prefixes of it.
TEST(CApi, VersionsThreeAndFourAddScalesAtTheEnd) {
  EXPECT_GE(GATEJIT_API_VERSION, 4);
  EXPECT_EQ(gatejit_api_version(), GATEJIT_API_VERSION);
  EXPECT_EQ(int(GATEJIT_FP8_E4M3), 3);
  EXPECT_EQ(offsetof(gatejit_gate_args_t, weight_scale) + sizeof(gatejit_tensor_t),
            offsetof(gatejit_gate_args_t, out_scale));
  EXPECT_EQ(offsetof(gatejit_gate_args_t, out_scale) + sizeof(gatejit_tensor_t), sizeof(gatejit_gate_args_t));
  EXPECT_EQ(offsetof(gatejit_gate_args_t, weight_scale) % alignof(gatejit_tensor_t), 0u);
  const gatejit_gate_args_t a = GATEJIT_GATE_ARGS_INIT;
  EXPECT_EQ(a.weight_scale.data, nullptr);  // the initialiser leaves no scales
  EXPECT_EQ(a.out_scale.data, nullptr);
}


// API version 5: record_path and disable_shipped_bundle at the end of the
// options; a version-2 to -4 caller's smaller struct is still accepted, and
// nothing past its size is read (the fields there are garbage here: reading
// record_path would crash or create a file).
TEST(CApi, VersionFiveAddsRuntimeOptionsAtTheEnd) {
  EXPECT_EQ(GATEJIT_API_VERSION, 5);
  EXPECT_EQ(offsetof(gatejit_runtime_options_t, record_path), offsetof(gatejit_runtime_options_t, bundle_path) + 8);
  const gatejit_runtime_options_t init = GATEJIT_RUNTIME_OPTIONS_INIT;
  EXPECT_EQ(init.record_path, nullptr);
  EXPECT_EQ(init.disable_shipped_bundle, 0);
  gatejit_runtime_options_t o = init;
  o.struct_size = offsetof(gatejit_runtime_options_t, record_path);
  o.disable_cache = 1;
  o.record_path = reinterpret_cast<const char *>(uintptr_t(1));
  o.disable_shipped_bundle = 7;
  gatejit_runtime_t rt = nullptr;
  EXPECT_EQ(take(gatejit_runtime_create(&o, &rt)), "");
  ASSERT_NE(rt, nullptr);
  char *text = nullptr;
  // Resolving records nothing (record_path was not read) and does not crash.
  gatejit_status_free(gatejit_resolve_contract_json(rt, R"({"m": 1, "n": 256, "k": 512, "target": "sm_90"})", &text));
  gatejit_string_free(text);
  gatejit_runtime_destroy(rt);
}

// The statuses an entry point gives for `args`: code and message.
std::vector<std::pair<gatejit_status_code_t, std::string>> statuses(gatejit_runtime_t rt,
                                                                     const gatejit_gate_args_t *args) {
  std::vector<std::pair<gatejit_status_code_t, std::string>> out;
  char *text = nullptr;
  for (int entry = 0; entry < 3; ++entry) {
    gatejit_status_code_t code;
    const std::string m = take(entry == 0   ? gatejit_explain(rt, args, &text)
                               : entry == 1 ? gatejit_prepare(rt, args)
                                            : gatejit_gate_epilogue(rt, args),
                               &code);
    out.emplace_back(code, m);
  }
  gatejit_string_free(text);
  return out;
}

// Valid bf16 arguments (a tiny shape on fake pointers) for a device that
// cannot exist: a call that reads them stops at "device_ordinal = -3".
gatejit_gate_args_t args_for_device_minus_3() {
  static char fake[64] __attribute__((aligned(16)));
  gatejit_gate_args_t a = GATEJIT_GATE_ARGS_INIT;
  a.hidden = {fake, GATEJIT_BF16, 1, 8, 8};
  a.weight = {fake, GATEJIT_BF16, 8, 8, 8};
  a.attn = {fake, GATEJIT_BF16, 1, 8, 8};
  a.out = a.attn;
  a.device_kind = GATEJIT_DEVICE_HIP;
  a.device_ordinal = -3;
  return a;
}

// A caller built against version 2 passes struct_size =
// offsetof(gatejit_gate_args_t, weight_scale): accepted, and read as a call
// without scales (whatever lies past its struct); other sizes short of
// version 3's are refused naming args.struct_size. Without a device every
// call stops at the device, after the arguments were read: device_ordinal
// -3 names itself, so the fields before weight_scale arrived.
TEST(CApi, VersionTwoStructSizeIsReadAsACallWithoutScales) {
  gatejit_runtime_options_t o = GATEJIT_RUNTIME_OPTIONS_INIT;
  o.disable_cache = 1;
  gatejit_runtime_t rt = nullptr;
  ASSERT_EQ(take(gatejit_runtime_create(&o, &rt)), "");
  gatejit_gate_args_t a = args_for_device_minus_3();
  const size_t v2 = offsetof(gatejit_gate_args_t, weight_scale), v3 = sizeof(gatejit_gate_args_t);

  gatejit_gate_args_t full = a;
  for (const auto &[code, m] : statuses(rt, &full)) {
    EXPECT_EQ(code, GATEJIT_INVALID_ARGUMENT) << m;
    EXPECT_NE(m.find("device_ordinal = -3"), std::string::npos) << m;
  }
  // Garbage in the version-3 field: read by a version-3 call ...
  gatejit_gate_args_t garbage = a;
  std::memset(&garbage.weight_scale, 0xa5, sizeof garbage.weight_scale);
  for (const auto &[code, m] : statuses(rt, &garbage)) {
    EXPECT_EQ(code, GATEJIT_INVALID_ARGUMENT) << m;
    EXPECT_NE(m.find("weight_scale.dtype"), std::string::npos) << m;
  }
  // ... never by a version-2 one.
  garbage.struct_size = v2;
  for (const auto &[code, m] : statuses(rt, &garbage)) {
    EXPECT_EQ(code, GATEJIT_INVALID_ARGUMENT) << m;
    EXPECT_NE(m.find("device_ordinal = -3"), std::string::npos) << m;
    EXPECT_EQ(m.find("struct_size"), std::string::npos) << m;
    EXPECT_EQ(m.find("weight_scale"), std::string::npos) << m;
  }
  // A device error (no HIP here) is the same for both sizes.
  gatejit_gate_args_t on_device = a;
  on_device.device_ordinal = 0;
  const auto as_v3 = statuses(rt, &on_device);
  on_device.struct_size = v2;
  const auto as_v2 = statuses(rt, &on_device);
  EXPECT_EQ(as_v2, as_v3);
  for (const auto &[code, m] : as_v2) EXPECT_EQ(m.find("struct_size"), std::string::npos) << m;

  for (size_t bad : {v2 - 8, v2 + 1, v2 + 8, v3 - 8, v3 - 1}) {
    gatejit_gate_args_t b = a;
    b.struct_size = bad;
    for (const auto &[code, m] : statuses(rt, &b)) {
      EXPECT_EQ(code, GATEJIT_INVALID_ARGUMENT) << m;
      EXPECT_NE(m.find("args.struct_size = " + std::to_string(bad)), std::string::npos) << m;
    }
  }
  gatejit_runtime_destroy(rt);
}

// A caller built against version 3 passes struct_size =
// offsetof(gatejit_gate_args_t, out_scale): accepted, and read as a call
// without out scales, whatever lies past its struct.
TEST(CApi, VersionThreeStructSizeIsReadAsACallWithoutOutScales) {
  gatejit_runtime_options_t o = GATEJIT_RUNTIME_OPTIONS_INIT;
  o.disable_cache = 1;
  gatejit_runtime_t rt = nullptr;
  ASSERT_EQ(take(gatejit_runtime_create(&o, &rt)), "");
  gatejit_gate_args_t garbage = args_for_device_minus_3();
  std::memset(&garbage.out_scale, 0xa5, sizeof garbage.out_scale);
  for (const auto &[code, m] : statuses(rt, &garbage)) {
    EXPECT_EQ(code, GATEJIT_INVALID_ARGUMENT) << m;
    EXPECT_NE(m.find("out_scale.dtype"), std::string::npos) << m;
  }
  garbage.struct_size = offsetof(gatejit_gate_args_t, out_scale);
  for (const auto &[code, m] : statuses(rt, &garbage)) {
    EXPECT_EQ(code, GATEJIT_INVALID_ARGUMENT) << m;
    EXPECT_NE(m.find("device_ordinal = -3"), std::string::npos) << m;
    EXPECT_EQ(m.find("out_scale"), std::string::npos) << m;
  }
  gatejit_runtime_destroy(rt);
}

// Nothing past a version-2 caller's struct is read: the struct ends where
// an inaccessible page begins (a read past it would crash the child).
TEST(CApi, NothingPastAVersionTwoStructIsRead) {
  const size_t v2 = offsetof(gatejit_gate_args_t, weight_scale);
  const long page = sysconf(_SC_PAGESIZE);
  const int rc = testing_support::exit_code_within(30, [&] {
    void *mem = mmap(nullptr, size_t(2 * page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) return 2;
    char *guard = static_cast<char *>(mem) + page;
    if (mprotect(guard, size_t(page), PROT_NONE) != 0) return 3;
    gatejit_gate_args_t a = args_for_device_minus_3();
    a.struct_size = v2;
    auto *v2_args = reinterpret_cast<gatejit_gate_args_t *>(guard - v2);
    std::memcpy(static_cast<void *>(v2_args), &a, v2);
    gatejit_runtime_options_t o = GATEJIT_RUNTIME_OPTIONS_INIT;
    o.disable_cache = 1;
    gatejit_runtime_t rt = nullptr;
    if (gatejit_runtime_create(&o, &rt) != nullptr) return 4;
    for (const auto &[code, m] : statuses(rt, v2_args))
      if (m.find("device_ordinal = -3") == std::string::npos) return 5;
    gatejit_runtime_destroy(rt);
    return 0;
  });
  EXPECT_EQ(rc, 0) << (rc == 128 + SIGSEGV ? "read past the version-2 struct" : "failed");
}

// A runtime without disk cache, bundles or JIT: a lookup finds no kernel.
gatejit_runtime_t runtime_without_kernels() {
  gatejit_runtime_options_t o = GATEJIT_RUNTIME_OPTIONS_INIT;
  o.disable_cache = 1;
  gatejit_runtime_t rt = nullptr;
  EXPECT_EQ(take(gatejit_runtime_create(&o, &rt)), "");
  return rt;
}

TEST(CApi, ExplainWithoutKernelsSaysWhatWasTried) {
  gatejit_runtime_t rt = runtime_without_kernels();
  ASSERT_NE(rt, nullptr);
  char *text = nullptr;
  gatejit_status_code_t code;
  const std::string m = take(gatejit_explain_contract_json(
                                 rt, R"({"m": 1, "n": 1536, "k": 7168, "dtype": "bf16", "target": "gfx950"})", &text),
                             &code);
  EXPECT_EQ(code, GATEJIT_UNSUPPORTED);
  EXPECT_NE(m.find("JIT not attached"), std::string::npos) << m;
  EXPECT_EQ(text, nullptr);
  EXPECT_NE(take(gatejit_explain_contract_json(rt, R"({"k": 0, "n": 1})", &text), &code).find("k = 0"),
            std::string::npos);
  EXPECT_EQ(code, GATEJIT_INVALID_ARGUMENT);
  gatejit_runtime_destroy(rt);
}

// fp8 contracts through the JSON entry point: a valid one gets as far as the
// kernel lookup (no JIT here); gfx942, missing scales and an unknown scale
// kind are argument errors naming why.
TEST(CApi, ExplainContractJsonTakesFp8Weights) {
  gatejit_runtime_t rt = runtime_without_kernels();
  ASSERT_NE(rt, nullptr);
  char *text = nullptr;
  gatejit_status_code_t code;
  std::string m = take(gatejit_explain_contract_json(rt, R"({"m": 4, "n": 1536, "k": 7168, "target": "gfx950",
      "dtype_weight": "fp8_e4m3", "weight_scale": "block128"})", &text), &code);
  EXPECT_EQ(code, GATEJIT_UNSUPPORTED) << m;
  EXPECT_NE(m.find("JIT not attached"), std::string::npos) << m;
  const struct {
    const char *json;
    const char *says;
  } bad[] = {
      {R"({"n": 1536, "k": 7168, "target": "gfx942", "dtype_weight": "fp8_e4m3", "weight_scale": "per_channel"})",
       "fnuz"},
      {R"({"n": 1536, "k": 7168, "dtype_weight": "fp8_e4m3"})", "weight_scale"},
      {R"({"n": 1536, "k": 7168, "dtype_weight": "fp8_e4m3", "weight_scale": "tensor"})",
       "none, per_channel, block128"},
      {R"({"n": 1536, "k": 7168, "weight_scale": "per_channel"})", "weight_scale = per_channel"},
      {R"({"n": 1536, "k": 7168, "dtype": "fp8_e4m3", "weight_scale": "per_channel"})", "dtype_hidden = fp8_e4m3"},
  };
  for (const auto &b : bad) {
    m = take(gatejit_explain_contract_json(rt, b.json, &text), &code);
    EXPECT_EQ(code, GATEJIT_INVALID_ARGUMENT) << b.json << ": " << m;
    EXPECT_NE(m.find(b.says), std::string::npos) << b.json << ": " << m;
  }
  EXPECT_EQ(text, nullptr);
  gatejit_runtime_destroy(rt);
}

TEST(CApi, LaunchOnAMachineWithoutTheDeviceLibrarySaysWhatIsMissing) {
  gatejit_runtime_options_t o = GATEJIT_RUNTIME_OPTIONS_INIT;
  o.disable_cache = 1;
  gatejit_runtime_t rt = nullptr;
  ASSERT_EQ(take(gatejit_runtime_create(&o, &rt)), "");
  gatejit_gate_args_t a = GATEJIT_GATE_ARGS_INIT;
  static char fake[64] __attribute__((aligned(16)));
  a.hidden = {fake, GATEJIT_BF16, 1, 8, 8};
  a.weight = {fake, GATEJIT_BF16, 8, 8, 8};
  a.attn = {fake, GATEJIT_BF16, 1, 8, 8};
  a.out = a.attn;
  a.device_kind = GATEJIT_DEVICE_HIP;  // no ROCm on any machine of this project
  gatejit_status_code_t code;
  const std::string m = take(gatejit_gate_epilogue(rt, &a), &code);
  EXPECT_EQ(code, GATEJIT_DEVICE_ERROR);
  EXPECT_NE(m.find("HIP"), std::string::npos) << m;
  a.device_kind = gatejit_device_kind_t(5);
  EXPECT_NE(take(gatejit_gate_epilogue(rt, &a)).find("device_kind = 5"), std::string::npos);
  gatejit_runtime_destroy(rt);
}

TEST(CApi, MissingBundleIsAClearError) {
  gatejit_runtime_options_t o = GATEJIT_RUNTIME_OPTIONS_INIT;
  o.bundle_path = "/nonexistent/kernels.gjb";
  gatejit_runtime_t rt = nullptr;
  const std::string m = take(gatejit_runtime_create(&o, &rt));
  EXPECT_NE(m.find("/nonexistent/kernels.gjb"), std::string::npos) << m;
  EXPECT_EQ(rt, nullptr);
}

TEST(CApi, UnknownTemplateOverrideIsAClearError) {
  setenv("GATEJIT_TEMPLATE", "fastest", 1);
  gatejit_runtime_options_t o = GATEJIT_RUNTIME_OPTIONS_INIT;
  o.disable_cache = 1;
  gatejit_runtime_t rt = nullptr;
  gatejit_status_code_t code;
  const std::string m = take(gatejit_runtime_create(&o, &rt), &code);
  unsetenv("GATEJIT_TEMPLATE");
  EXPECT_EQ(code, GATEJIT_INVALID_ARGUMENT);
  EXPECT_NE(m.find("GATEJIT_TEMPLATE"), std::string::npos) << m;
  EXPECT_NE(m.find("auto, gemv, mma, generic"), std::string::npos) << m;
  EXPECT_EQ(rt, nullptr);
}

}  // namespace
