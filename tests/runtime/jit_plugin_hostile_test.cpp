// Issue 45: a JIT library the runtime attaches (GATEJIT_JIT_LIBRARY, or one
// found beside it) is outside code. A path that is no regular file is refused
// before dlopen (a FIFO would block it forever), and a plugin that answers
// with NULLs or sizes it cannot have is refused with a message, never
// followed into a crash. The misbehaving plugin is tests/support/
// fake_jit_plugin.cpp; every case runs in a child, so a crash or a hang is a
// result, not the end of the suite.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "gatejit/gatejit.h"
#include "jit_library.h"
#include "support/child_process.h"

namespace gatejit {
namespace {

namespace fs = std::filesystem;
using testing_support::exit_code_within;
using testing_support::kChildTimedOut;

constexpr const char *kContract = R"({"m": 1, "n": 256, "k": 512, "dtype": "bf16", "target": "gfx950"})";

bool has(const std::string &text, const std::string &needle) { return text.find(needle) != std::string::npos; }

bool printable(const std::string &m) {
  for (unsigned char c : m)
    if (c != '\n' && (c < 0x20 || c >= 0x7f)) return false;
  return !m.empty();
}

std::string why(int rc) {
  if (rc == kChildTimedOut) return "hung";
  if (rc >= 128) return "died of signal " + std::to_string(rc - 128);
  return "failed check " + std::to_string(rc);
}

// gatejit_runtime_create with GATEJIT_JIT_LIBRARY = library: its error
// message, "" when it succeeded.
std::string create_error(const std::string &library, gatejit_runtime_t *out = nullptr) {
  ::setenv("GATEJIT_JIT_LIBRARY", library.c_str(), 1);
  gatejit_runtime_options_t o = GATEJIT_RUNTIME_OPTIONS_INIT;
  o.disable_cache = 1;
  gatejit_runtime_t rt = nullptr;
  gatejit_status_t s = gatejit_runtime_create(&o, &rt);
  const std::string m = s ? gatejit_status_message(s) : "";
  gatejit_status_free(s);
  if (out) *out = rt;
  else gatejit_runtime_destroy(rt);
  return m;
}

class JitPluginHostile : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "gatejit-plugin-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    ::unsetenv("GATEJIT_JIT_LIBRARY");
    ::unsetenv("GATEJIT_FAKE_PLUGIN_MODE");
    fs::remove_all(dir_);
  }
  std::string dir_;
};

TEST_F(JitPluginHostile, AJitLibraryThatIsNoRegularFileIsRefusedBeforeDlopen) {
  const std::string fifo = dir_ + "/libfifo.so", link = dir_ + "/liblink.so", folder = dir_ + "/libdir.so";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  ASSERT_EQ(::symlink(fifo.c_str(), link.c_str()), 0);
  ASSERT_EQ(::mkdir(folder.c_str(), 0700), 0);
  const struct {
    std::string path, type;
  } cases[] = {{fifo, "is a FIFO"}, {link, "is a FIFO"}, {folder, "is a directory"}, {"/dev/zero", "is a character device"}};
  for (const auto &c : cases) {
    SCOPED_TRACE(c.path);
    const int direct = exit_code_within(10, [&] {
      auto hook = load_jit_library(c.path);
      return !hook.ok() && has(hook.status().message(), c.type) ? 0 : 1;
    });
    EXPECT_EQ(direct, 0) << "load_jit_library " << why(direct);
    const int created = exit_code_within(10, [&] {
      const std::string m = create_error(c.path);
      return has(m, "GATEJIT_JIT_LIBRARY") && has(m, c.type) && printable(m) ? 0 : 1;
    });
    EXPECT_EQ(created, 0) << "gatejit_runtime_create " << why(created);
  }
}

TEST_F(JitPluginHostile, APluginWhoseFingerprintIsNotOneLineOfTextIsRefused) {
  for (const char *mode : {"null_fingerprint", "long_fingerprint", "forged_fingerprint"}) {
    SCOPED_TRACE(mode);
    ::setenv("GATEJIT_FAKE_PLUGIN_MODE", mode, 1);
    const int direct = exit_code_within(10, [&] {
      auto hook = load_jit_library(GATEJIT_FAKE_JIT_PLUGIN);
      return !hook.ok() && has(hook.status().message(), "gatejit_jit_fingerprint") ? 0 : 1;
    });
    EXPECT_EQ(direct, 0) << "load_jit_library " << why(direct);
    const int created = exit_code_within(10, [&] {
      const std::string m = create_error(GATEJIT_FAKE_JIT_PLUGIN);
      return has(m, "gatejit_jit_fingerprint") && printable(m) && m.size() < 4200 ? 0 : 1;
    });
    EXPECT_EQ(created, 0) << "gatejit_runtime_create " << why(created);
  }
}

TEST_F(JitPluginHostile, AKernelThePluginCannotHaveReturnedIsRefused) {
  const struct {
    const char *mode, *needle;
  } cases[] = {{"null_blob_huge_size", "no kernel"},
               {"huge_size", "bytes"},
               {"garbage_blob", "does not decode"},
               {"null_message", "no message"},
               {"", "the fake plugin compiles nothing"}};
  for (const auto &c : cases) {
    SCOPED_TRACE(c.mode);
    ::setenv("GATEJIT_FAKE_PLUGIN_MODE", c.mode, 1);
    const int resolved = exit_code_within(10, [&] {
      gatejit_runtime_t rt = nullptr;
      if (!create_error(GATEJIT_FAKE_JIT_PLUGIN, &rt).empty() || !rt) return 1;
      char *text = nullptr;
      gatejit_status_t s = gatejit_resolve_contract_json(rt, kContract, &text);
      const std::string m = s ? gatejit_status_message(s) : "";
      gatejit_status_free(s);
      gatejit_string_free(text);
      gatejit_runtime_destroy(rt);
      return has(m, c.needle) && printable(m) ? 0 : 2;
    });
    EXPECT_EQ(resolved, 0) << why(resolved);
  }
}

}  // namespace
}  // namespace gatejit
