// The C API without a GPU: statuses carry codes and messages, explain works,
// and a launch says exactly what is missing instead of crashing.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "gatejit/gatejit.h"

namespace {

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

TEST(CApi, ExplainWithoutKernelsSaysWhatWasTried) {
  gatejit_runtime_options_t o = GATEJIT_RUNTIME_OPTIONS_INIT;
  o.disable_cache = 1;
  gatejit_runtime_t rt = nullptr;
  ASSERT_EQ(take(gatejit_runtime_create(&o, &rt)), "");
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
