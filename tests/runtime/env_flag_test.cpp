// Boolean environment variables, one spelling rule for all of them
// (gatejit/env_flag.h), and what a malformed one does to runtime creation.
#include "gatejit/env_flag.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "gatejit/gatejit.h"
#include "runtime_core.h"

namespace gatejit {
namespace {

TEST(EnvFlag, SpellingsInAnyCase) {
  for (const char *on : {"1", "true", "TRUE", "yes", "Yes", "on", "ON"}) EXPECT_EQ(parse_flag(on), true) << on;
  for (const char *off : {"0", "false", "False", "no", "NO", "off", "Off"}) EXPECT_EQ(parse_flag(off), false) << off;
  for (const char *bad : {"2", "maybe", "y", "truee", " 1", "enabled"}) EXPECT_EQ(parse_flag(bad), std::nullopt) << bad;
}

TEST(EnvFlag, UnsetOrEmptyIsTheDefaultAndAnythingElseNamesTheVariable) {
  const char *name = "GATEJIT_ENV_FLAG_TEST";
  unsetenv(name);
  EXPECT_EQ(*env_flag(name), false);
  EXPECT_EQ(*env_flag(name, true), true);
  setenv(name, "", 1);
  EXPECT_EQ(*env_flag(name, true), true);
  setenv(name, "On", 1);
  EXPECT_EQ(*env_flag(name), true);
  setenv(name, "sometimes", 1);
  auto bad = env_flag(name);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("GATEJIT_ENV_FLAG_TEST='sometimes'"), std::string::npos)
      << bad.status().message();
  unsetenv(name);
}

// `name`=maybe makes gatejit_runtime_create fail with an invalid-argument
// status that names the variable and its value, and hand back no runtime.
void expect_malformed_flag_fails_creation(const char *name, const gatejit_runtime_options_t *options) {
  setenv(name, "maybe", 1);
  gatejit_runtime_t rt = nullptr;
  gatejit_status_t s = gatejit_runtime_create(options, &rt);
  unsetenv(name);
  ASSERT_NE(s, nullptr) << name;
  EXPECT_EQ(gatejit_status_code(s), GATEJIT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gatejit_status_message(s)).find(std::string(name) + "='maybe'"), std::string::npos)
      << gatejit_status_message(s);
  EXPECT_EQ(rt, nullptr);
  gatejit_status_free(s);
}

TEST(EnvFlag, MalformedDisableJitFailsRuntimeCreation) {
  expect_malformed_flag_fails_creation("GATEJIT_DISABLE_JIT", nullptr);

  // With the JIT enabled, creation loads GATEJIT_JIT_LIBRARY (and fails on a
  // missing one); with it disabled, the variable is not read. So "off" and
  // "ON" are seen as false and true.
  gatejit_runtime_t rt = nullptr;
  setenv("GATEJIT_JIT_LIBRARY", "/nonexistent/libgatejit_jit.so", 1);
  setenv("GATEJIT_DISABLE_JIT", "off", 1);
  gatejit_status_t s = gatejit_runtime_create(nullptr, &rt);
  EXPECT_NE(std::string(gatejit_status_message(s)).find("GATEJIT_JIT_LIBRARY"), std::string::npos)
      << gatejit_status_message(s);
  gatejit_status_free(s);
  setenv("GATEJIT_DISABLE_JIT", "ON", 1);
  s = gatejit_runtime_create(nullptr, &rt);
  EXPECT_EQ(s, nullptr) << gatejit_status_message(s);
  gatejit_status_free(s);
  gatejit_runtime_destroy(rt);
  unsetenv("GATEJIT_DISABLE_JIT");
  unsetenv("GATEJIT_JIT_LIBRARY");
}

// GATEJIT_NATIVE_CODE (cubins in the disk cache, native_code_cache.h) is off
// unless set, parsed once with the runtime's options, and a malformed value
// fails runtime creation naming it.
TEST(EnvFlag, NativeCodeIsOptInAndParsedWithTheRuntimeOptions) {
  unsetenv("GATEJIT_NATIVE_CODE");
  EXPECT_FALSE(runtime_options_from(nullptr).native_code);
  setenv("GATEJIT_NATIVE_CODE", "yes", 1);
  EXPECT_TRUE(runtime_options_from(nullptr).native_code);
  setenv("GATEJIT_NATIVE_CODE", "0", 1);
  EXPECT_FALSE(runtime_options_from(nullptr).native_code);
  unsetenv("GATEJIT_NATIVE_CODE");
  gatejit_runtime_options_t options = GATEJIT_RUNTIME_OPTIONS_INIT;
  options.disable_jit = 1;
  expect_malformed_flag_fails_creation("GATEJIT_NATIVE_CODE", &options);
}

}  // namespace
}  // namespace gatejit
