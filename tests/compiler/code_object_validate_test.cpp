// Issue 19, point 3: a malformed code object is an error, never a crash.
// Every one-byte change of a real hsaco the compiler built goes through the
// report reader in process (a SIGILL, an abort or an `LLVM ERROR` exit would
// take this test down with it), then a few crafted files go through
// `gatejit inspect`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "code_object_report.h"
#include "code_object_validate.h"
#include "compiler/cli_run.h"
#include "gatejit/compiler/compiler.h"

namespace gatejit {
namespace {

using namespace testing_support;
using testing::HasSubstr;

const std::vector<uint8_t> &seed_hsaco() {
  static const std::vector<uint8_t> code = [] {
    auto compiled = compiler::compile(seed(Target::kGfx950));
    EXPECT_TRUE(compiled.ok()) << compiled.status().to_string();
    return compiled.ok() ? compiled->binary.code : std::vector<uint8_t>{};
  }();
  return code;
}

// [offset, offset + size) of the first PT_NOTE segment (the metadata).
std::pair<size_t, size_t> note_segment(const std::vector<uint8_t> &b) {
  auto le = [&](size_t off, int width) {
    uint64_t v = 0;
    for (int i = 0; i < width; ++i) v |= uint64_t(b[off + i]) << (8 * i);
    return v;
  };
  const uint64_t phoff = le(32, 8), phnum = le(56, 2);
  for (uint64_t i = 0; i < phnum; ++i) {
    const size_t ph = size_t(phoff + i * 56);
    if (le(ph, 4) == 4 /* PT_NOTE */) return {size_t(le(ph + 8, 8)), size_t(le(ph + 32, 8))};
  }
  return {0, 0};
}

size_t find_bytes(const std::vector<uint8_t> &b, const std::string &text) {
  const std::vector<uint8_t> needle(text.begin(), text.end());  // bytes, not (signed) chars
  auto it = std::search(b.begin(), b.end(), needle.begin(), needle.end());
  return it == b.end() ? std::string::npos : size_t(it - b.begin());
}

TEST(CodeObjectValidate, TheCompilersOwnCodeObjectsAreValid) {
  ASSERT_FALSE(seed_hsaco().empty());
  Status s = compiler::validate_code_object(seed_hsaco());
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(compiler::read_code_object_report(seed_hsaco()).ok());
  auto ptx = compiler::compile(seed(Target::kSm90));
  ASSERT_TRUE(ptx.ok()) << ptx.status().to_string();
  s = compiler::validate_ptx_text(ptx->binary.code);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(compiler::read_code_object_report(ptx->binary.code).ok());
}

// What a non-ELF file gets: the PTX scanner. Each of these crashed it (an
// uncaught std::out_of_range, a regular expression recursing once per
// character of a 3 MB line until the stack ran out).
TEST(CodeObjectValidate, MalformedPtxIsAnErrorNotACrash) {
  TempDir dir;
  const std::string head = ".version 8.0\n.target sm_90\n.visible .entry k(\n)\n{\n";
  const std::pair<std::string, std::string> cases[] = {
      {head + ".reg .b32 %r<99999999999999>;\nret;\n}\n", "a field has an unexpected type or size"},
      {head + ".shared " + std::string(3000000, 'a') + "[4];\nret;\n}\n", "longer than 16384 bytes"},
      {head + "ret;\n}\n.target\n", "a field has an unexpected type or size"},
      {head + "ret;\x1b[2J\n}\n", "not PTX text: byte"},
  };
  int i = 0;
  for (const auto &[text, why] : cases) {
    SCOPED_TRACE(why);
    const fs::path file = dir / ("bad-" + std::to_string(i++) + ".ptx");
    std::ofstream(file, std::ios::binary) << text;
    const CliResult r = gatejit_run(dir, "", "inspect " + file.string(), 60);
    EXPECT_EQ(r.rc, 1) << r.err.substr(0, 300);
    EXPECT_THAT(r.err, HasSubstr("gatejit: error: " + file.string() + ": "));
    EXPECT_THAT(r.err, HasSubstr(why));
  }
}

TEST(CodeObjectValidate, EveryOneByteChangeIsReadOrRefusedNeverACrash) {
  const std::vector<uint8_t> &good = seed_hsaco();
  ASSERT_FALSE(good.empty());
  const auto [note_off, note_size] = note_segment(good);
  ASSERT_GT(note_size, 0u);
  // Headers and the metadata note get four kinds of change, the rest one.
  const size_t header_end = 64 + 56 * 8;
  size_t refused = 0, read = 0;
  std::vector<uint8_t> b = good;
  for (size_t i = 0; i < b.size(); ++i) {
    const bool hot = i < header_end || (i >= note_off && i < note_off + note_size);
    std::vector<uint8_t> values = {uint8_t(good[i] ^ 0xff)};
    if (hot) values.insert(values.end(), {uint8_t(good[i] ^ 0x01), uint8_t(good[i] ^ 0x80), 0xc1});
    for (uint8_t v : values) {
      if (v == good[i]) continue;
      b[i] = v;
      auto r = compiler::read_code_object_report(b);
      ++(r.ok() ? read : refused);
      if (!r.ok()) ASSERT_EQ(r.status().code(), StatusCode::kCorrupt) << "byte " << i << ": " << r.status().message();
    }
    b[i] = good[i];
  }
  EXPECT_GT(refused, 0u);
  RecordProperty("refused", int(refused));
  RecordProperty("read", int(read));
}

class CraftedCodeObject : public ::testing::Test {
 protected:
  // Writes a changed copy of the seed hsaco and runs `gatejit inspect` on it.
  CliResult inspect_changed(const std::string &from, const std::string &to) {
    std::vector<uint8_t> b = seed_hsaco();
    const size_t at = find_bytes(b, from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at == std::string::npos) return {};
    std::copy(to.begin(), to.end(), b.begin() + at);
    const fs::path file = dir_ / "changed.hsaco";
    std::ofstream(file, std::ios::binary).write(reinterpret_cast<const char *>(b.data()), std::streamsize(b.size()));
    return gatejit_run(dir_, "", "inspect " + file.string(), 60);
  }
  TempDir dir_;
};

TEST_F(CraftedCodeObject, AProcessorTheDisassemblerCannotReadIsAnError) {
  // gfx600 predates the encoding LLVM's AMDGPU disassembler reads; LLVM
  // answers it with report_fatal_error.
  const CliResult r = inspect_changed("amdgcn-amd-amdhsa--gfx950", "amdgcn-amd-amdhsa--gfx600");
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("gatejit: error: "));
  EXPECT_THAT(r.err, HasSubstr("does not name an AMDGPU processor of gfx8 or later"));
}

TEST_F(CraftedCodeObject, AMapKeyThatIsNotAStringIsAnError) {
  // The key string "amdhsa.target" (fixstr of 13) becomes an array of one:
  // LLVM's msgpack document cannot order such a key and traps.
  const CliResult r = inspect_changed("\xad" "amdhsa.target", "\x91");
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("gatejit: error: "));
  EXPECT_THAT(r.err, HasSubstr("AMDGPU metadata: map key is not a string"));
}

TEST_F(CraftedCodeObject, AFieldOfTheWrongTypeIsAnError) {
  // The value of ".sgpr_count" (a small positive integer, one byte) becomes
  // "" (a one-byte empty string): well-formed msgpack, but not the number the
  // report reads.
  const std::string key = "\xab.sgpr_count";
  const size_t at = find_bytes(seed_hsaco(), key);
  ASSERT_NE(at, std::string::npos);
  ASSERT_LE(seed_hsaco()[at + key.size()], 0x7f);
  const CliResult r = inspect_changed(key + char(seed_hsaco()[at + key.size()]), key + "\xa0");
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("gatejit: error: "));
  EXPECT_THAT(r.err, HasSubstr("a field has an unexpected type"));
}

}  // namespace
}  // namespace gatejit
