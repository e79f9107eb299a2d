// Issue 19: every C entry point called with hostile input returns a status
// (nothing throws across the API, nothing crashes or hangs the host), and
// every status message is bounded and printable. scripts/test.sh also runs
// this suite under ASan/UBSan.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "gatejit/gatejit.h"
#include "support/child_process.h"

namespace gatejit {
namespace {

namespace fs = std::filesystem;
using testing_support::exit_code_within;

// A status, if any, is one bounded message of printable text (lines may
// break: the resolver lists what it tried); freed here.
void check_and_free(gatejit_status_t s) {
  if (!s) return;
  const std::string m = gatejit_status_message(s);
  EXPECT_FALSE(m.empty());
  EXPECT_LT(m.size(), 20000u);
  for (unsigned char c : m) EXPECT_TRUE(c == '\n' || (c >= 0x20 && c < 0x7f)) << "byte " << int(c) << " in " << m;
  EXPECT_NE(gatejit_status_code(s), GATEJIT_OK);
  gatejit_status_free(s);
}

// Stores `value` in an enum field as a C caller can (C++ may not even form
// an enum value outside the enumeration's range).
template <typename Enum>
void set_raw(Enum &field, int value) {
  std::underlying_type_t<Enum> raw = static_cast<std::underlying_type_t<Enum>>(value);
  std::memcpy(&field, &raw, sizeof raw);
}

class CApiHostile : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gatejit-capi-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    fifo_ = dir_ + "/fifo.gjb";
    ASSERT_EQ(::mkfifo(fifo_.c_str(), 0600), 0);
    garbage_ = dir_ + "/garbage.gjb";
    std::ofstream(garbage_) << "GJBUNDLE" << std::string(100, '\xff');
    cache_dir_ = dir_ + "/cache";
    options_.cache_dir = cache_dir_.c_str();
    ASSERT_EQ(gatejit_runtime_create(&options_, &rt_), nullptr);
  }
  void TearDown() override {
    gatejit_runtime_destroy(rt_);
    fs::remove_all(dir_);
  }
  std::vector<std::string> hostile_paths() const {
    return {fifo_, garbage_, dir_, "/dev/zero", "", std::string(10000, 'p'), "a\nb\x1b[31m\x01", dir_ + "/missing"};
  }
  static std::vector<std::string> hostile_json() {
    std::vector<std::string> v = {"", "{", "null", "[]", "{\"n\": 1, \"n\": 2}", "{\"m\": -1, \"n\": 1, \"k\": 1}",
                                  "{\"n\": 1e400, \"k\": 1}", "{\"n\": 99999999999999999999999, \"k\": 1}",
                                  "{\"dtype\": \"\\u0000\\u001b[2J\", \"n\": 1, \"k\": 1}", "\xff\xfe{}",
                                  "{\"target\": 7, \"n\": 1, \"k\": 1}", "{\"m\": {\"min\": 1}, \"n\": 1, \"k\": 1}",
                                  "{\"m\": 18446744073709551615, \"n\": 1, \"k\": 1}", "{\"n\": 1, \"k\": -9223372036854775808}"};
    v.push_back(std::string(100000, '[') + std::string(100000, ']'));
    v.push_back(std::string(100000, '{'));
    v.push_back("{\"" + std::string(2 << 20, 'k') + "\": 1}");
    return v;
  }
  static std::vector<gatejit_gate_args_t> hostile_args() {
    std::vector<gatejit_gate_args_t> v;
    gatejit_gate_args_t zero{};  // struct_size 0 too
    v.push_back(zero);
    gatejit_gate_args_t huge = GATEJIT_GATE_ARGS_INIT;
    for (gatejit_tensor_t *t : {&huge.hidden, &huge.weight, &huge.attn, &huge.out}) {
      t->rows = INT64_MAX;
      t->cols = INT64_MAX;
      t->ld = INT64_MIN;
      set_raw(t->dtype, 77);
      t->data = reinterpret_cast<void *>(uintptr_t(1));
    }
    set_raw(huge.act, -5);
    set_raw(huge.rounding, 99);
    set_raw(huge.device_kind, 1234);
    huge.device_ordinal = -7;
    v.push_back(huge);
    std::mt19937_64 rng(19);
    for (int i = 0; i < 64; ++i) {
      gatejit_gate_args_t r;
      auto *bytes = reinterpret_cast<unsigned char *>(&r);
      for (size_t b = 0; b < sizeof r; ++b) bytes[b] = static_cast<unsigned char>(rng());
      if (i % 4 != 0) r.struct_size = sizeof r;  // most get past the size check to the fields
      v.push_back(r);
    }
    return v;
  }

  std::string dir_, fifo_, garbage_, cache_dir_;
  gatejit_runtime_options_t options_ = GATEJIT_RUNTIME_OPTIONS_INIT;
  gatejit_runtime_t rt_ = nullptr;
};

TEST_F(CApiHostile, StatusAndStringFunctionsTakeNull) {
  EXPECT_EQ(gatejit_status_code(nullptr), GATEJIT_OK);
  EXPECT_STREQ(gatejit_status_message(nullptr), "");
  gatejit_status_free(nullptr);
  gatejit_string_free(nullptr);
  gatejit_runtime_destroy(nullptr);
}

TEST_F(CApiHostile, EveryEntryPointRefusesNullArguments) {
  gatejit_gate_args_t args = GATEJIT_GATE_ARGS_INIT;
  char *text = nullptr;
  check_and_free(gatejit_runtime_create(&options_, nullptr));
  check_and_free(gatejit_runtime_load_bundle(nullptr, garbage_.c_str()));
  check_and_free(gatejit_runtime_load_bundle(rt_, nullptr));
  check_and_free(gatejit_gate_epilogue(nullptr, &args));
  check_and_free(gatejit_gate_epilogue(rt_, nullptr));
  check_and_free(gatejit_prepare(nullptr, &args));
  check_and_free(gatejit_prepare(rt_, nullptr));
  check_and_free(gatejit_explain(nullptr, &args, &text));
  check_and_free(gatejit_explain(rt_, nullptr, &text));
  check_and_free(gatejit_explain(rt_, &args, nullptr));
  check_and_free(gatejit_explain_contract_json(nullptr, "{}", &text));
  check_and_free(gatejit_explain_contract_json(rt_, nullptr, &text));
  check_and_free(gatejit_explain_contract_json(rt_, "{}", nullptr));
  check_and_free(gatejit_resolve_contract_json(nullptr, "{}", &text));
  check_and_free(gatejit_resolve_contract_json(rt_, nullptr, &text));
  EXPECT_EQ(text, nullptr);
}

TEST_F(CApiHostile, CreateWithHostileBundlePathsAndCacheDirsNeverHangs) {
  std::vector<std::string> bundle_lists = hostile_paths();
  bundle_lists.push_back(std::string(10000, ':'));
  bundle_lists.push_back(garbage_ + ":" + fifo_);
  for (const std::string &list : bundle_lists) {
    SCOPED_TRACE(list.substr(0, 80));
    const int rc = exit_code_within(10, [&] {
      gatejit_runtime_options_t o = options_;
      o.bundle_path = list.c_str();
      gatejit_runtime_t rt = nullptr;
      gatejit_status_t s = gatejit_runtime_create(&o, &rt);
      check_and_free(s);
      gatejit_runtime_destroy(rt);
      return ::testing::Test::HasFailure() ? 1 : 0;
    });
    EXPECT_EQ(rc, 0) << (rc == testing_support::kChildTimedOut ? "hung" : "failed or crashed");
  }
  for (const std::string &cache_dir : hostile_paths()) {
    gatejit_runtime_options_t o = options_;
    o.cache_dir = cache_dir.c_str();
    gatejit_runtime_t rt = nullptr;
    check_and_free(gatejit_runtime_create(&o, &rt));
    char *text = nullptr;
    if (rt) check_and_free(gatejit_explain_contract_json(rt, "{\"n\": 1536, \"k\": 7168}", &text));
    gatejit_string_free(text);
    gatejit_runtime_destroy(rt);
  }
}

TEST_F(CApiHostile, LoadBundleRefusesHostileFilesWithoutHanging) {
  for (const std::string &path : hostile_paths()) {
    SCOPED_TRACE(path.substr(0, 80));
    const int rc = exit_code_within(10, [&] {
      gatejit_status_t s = gatejit_runtime_load_bundle(rt_, path.c_str());
      const bool refused = s != nullptr;
      check_and_free(s);
      return refused && !::testing::Test::HasFailure() ? 0 : 1;
    });
    EXPECT_EQ(rc, 0) << (rc == testing_support::kChildTimedOut ? "hung" : "accepted, failed or crashed");
  }
}

TEST_F(CApiHostile, ContractJsonEntryPointsRefuseHostileText) {
  for (const std::string &json : hostile_json()) {
    SCOPED_TRACE(json.substr(0, 80));
    char *text = nullptr;
    check_and_free(gatejit_explain_contract_json(rt_, json.c_str(), &text));
    gatejit_string_free(text);
    text = nullptr;
    check_and_free(gatejit_resolve_contract_json(rt_, json.c_str(), &text));
    gatejit_string_free(text);
    check_and_free(gatejit_resolve_contract_json(rt_, json.c_str(), nullptr));
  }
}

TEST_F(CApiHostile, LaunchPrepareAndExplainRefuseHostileArguments) {
  for (const gatejit_gate_args_t &args : hostile_args()) {
    char *text = nullptr;
    check_and_free(gatejit_explain(rt_, &args, &text));
    gatejit_string_free(text);
    check_and_free(gatejit_prepare(rt_, &args));
    check_and_free(gatejit_gate_epilogue(rt_, &args));
  }
}

// Out-of-range enum fields are named with the allowed values, whatever else
// the arguments hold.
TEST_F(CApiHostile, EnumFieldsOutOfRangeAreNamed) {
  const struct {
    void (*mutate)(gatejit_gate_args_t &);
    const char *message;
  } cases[] = {
      {[](gatejit_gate_args_t &a) { set_raw(a.act, 7); }, "act = 7: allowed values are GATEJIT_SIGMOID (0), GATEJIT_SILU (1)"},
      {[](gatejit_gate_args_t &a) { set_raw(a.hidden.dtype, 9); }, "hidden.dtype = 9: allowed values are GATEJIT_BF16 (0)"},
      {[](gatejit_gate_args_t &a) { set_raw(a.out.dtype, -1); }, "out.dtype = -1"},
      {[](gatejit_gate_args_t &a) { set_raw(a.rounding, 2); }, "rounding = 2"},
      {[](gatejit_gate_args_t &a) { set_raw(a.device_kind, 0); }, "device_kind = 0"},
      {[](gatejit_gate_args_t &a) { a.struct_size = 0; },
       "args.struct_size = 0: set it to sizeof(gatejit_gate_args_t)"},
      {[](gatejit_gate_args_t &a) { a.struct_size = sizeof(gatejit_gate_args_t) + 8; },
       "than this library's gatejit_gate_args_t"},
  };
  for (const auto &c : cases) {
    gatejit_gate_args_t a = GATEJIT_GATE_ARGS_INIT;
    a.device_kind = GATEJIT_DEVICE_CUDA;
    c.mutate(a);
    for (int entry = 0; entry < 3; ++entry) {
      char *text = nullptr;
      gatejit_status_t s = entry == 0   ? gatejit_explain(rt_, &a, &text)
                           : entry == 1 ? gatejit_prepare(rt_, &a)
                                        : gatejit_gate_epilogue(rt_, &a);
      ASSERT_NE(s, nullptr) << c.message;
      EXPECT_EQ(gatejit_status_code(s), GATEJIT_INVALID_ARGUMENT);
      EXPECT_NE(std::string(gatejit_status_message(s)).find(c.message), std::string::npos) << gatejit_status_message(s);
      gatejit_status_free(s);
      EXPECT_EQ(text, nullptr);
    }
  }
}

// Issue 45: a FIFO where the cache's toolchain record goes blocks no
// runtime: one without a compiler reads the record on every cache lookup.
TEST_F(CApiHostile, AFifoToolchainRecordInTheCacheBlocksNoResolve) {
  const std::string cache = dir_ + "/fifo-cache";
  ASSERT_EQ(::mkdir(cache.c_str(), 0700), 0);
  ASSERT_EQ(::mkdir((cache + "/v1").c_str(), 0700), 0);
  ASSERT_EQ(::mkfifo((cache + "/v1/toolchain").c_str(), 0600), 0);
  const int rc = exit_code_within(10, [&] {
    gatejit_runtime_options_t o = options_;
    o.cache_dir = cache.c_str();
    o.disable_jit = 1;
    gatejit_runtime_t rt = nullptr;
    check_and_free(gatejit_runtime_create(&o, &rt));
    if (!rt) return 1;
    for (int i = 0; i < 2; ++i) {
      char *text = nullptr;
      gatejit_status_t s = i ? gatejit_resolve_contract_json(rt, "{\"n\": 1536, \"k\": 7168}", &text)
                             : gatejit_explain_contract_json(rt, "{\"n\": 1536, \"k\": 7168}", &text);
      const std::string m = s ? gatejit_status_message(s) : "";
      check_and_free(s);
      gatejit_string_free(text);
      if (m.find("is a FIFO") == std::string::npos) return 2;  // the miss says why the cache went unread
    }
    gatejit_runtime_destroy(rt);
    return ::testing::Test::HasFailure() ? 3 : 0;
  });
  EXPECT_EQ(rc, 0) << (rc == testing_support::kChildTimedOut ? "hung" : "failed or crashed");
}

// Issue 45: a number past int64 is echoed as given through the C API too.
TEST_F(CApiHostile, IntegersPastInt64AreEchoedAsGiven) {
  char *text = nullptr;
  gatejit_status_t s =
      gatejit_explain_contract_json(rt_, "{\"m\": 18446744073709551615, \"n\": 1536, \"k\": 7168}", &text);
  ASSERT_NE(s, nullptr);
  const std::string m = gatejit_status_message(s);
  EXPECT_NE(m.find("m = 18446744073709551615"), std::string::npos) << m;
  EXPECT_EQ(m.find("-1"), std::string::npos) << m;
  check_and_free(s);
  EXPECT_EQ(text, nullptr);
}

}  // namespace
}  // namespace gatejit
