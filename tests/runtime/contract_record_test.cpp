// Recorded contracts (contract_record.h): the recorder writes each distinct
// contract once a process, lines that read back as the same contracts; many
// processes appending to one file leave whole lines; a file that cannot be
// written is a warning, never a crash or a hang; the reader names the line
// of a bad one. And a runtime records through GATEJIT_RECORD and the C API
// option, on resolve only (not on explain).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include "contract_record.h"
#include "gatejit/contract_json.h"
#include "gatejit/gatejit.h"
#include "support/child_process.h"
#include "support/random_contract.h"

namespace gatejit {
namespace {

namespace fs = std::filesystem;

class ContractRecordTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gatejit-record-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    unsetenv("GATEJIT_RECORD");
    fs::remove_all(dir_);
  }
  std::vector<std::string> lines_of(const std::string &path) {
    std::ifstream in(path);
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }
  void write(const std::string &path, const std::string &text) { std::ofstream(path) << text; }

  std::string dir_;
};

std::vector<Contract> valid_contracts(int count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Contract> out;
  while (int(out.size()) < count) {
    auto c = normalize(testing_support::random_contract(rng));
    if (c.ok()) out.push_back(*c);
  }
  return out;
}

TEST_F(ContractRecordTest, WritesEachContractOnceAndReadsItBack) {
  const std::string path = dir_ + "/r.jsonl";
  const auto contracts = valid_contracts(50, 1);
  {
    ContractRecorder recorder(path);
    for (int pass = 0; pass < 3; ++pass)
      for (const Contract &c : contracts) recorder.record(c);
  }
  EXPECT_EQ(lines_of(path).size(), contracts.size());
  for (const std::string &line : lines_of(path)) EXPECT_LT(line.size(), 1024u) << line;
  auto read = read_contract_record(path);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(*read, contracts);  // the same contracts, in order
}

// 8 processes record 300 contracts each, 200 of them shared, at once: every
// line is whole (it parses), none is lost, and the reader keeps each once.
TEST_F(ContractRecordTest, ManyProcessesAppendWholeLines) {
  const std::string path = dir_ + "/r.jsonl";
  const auto shared = valid_contracts(200, 2);
  constexpr int kProcesses = 8;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ContractRecorder recorder(path);
      const auto own = valid_contracts(100, 100 + p);
      for (size_t i = 0; i < shared.size(); ++i) {
        recorder.record(shared[(i + 25 * p) % shared.size()]);
        if (i < own.size()) recorder.record(own[i]);
      }
      _exit(0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  const auto lines = lines_of(path);
  EXPECT_EQ(lines.size(), size_t(kProcesses) * 300);
  for (const std::string &line : lines) ASSERT_TRUE(contract_from_json_text(line).ok()) << line;
  auto read = read_contract_record(path);
  ASSERT_TRUE(read.ok()) << read.status().message();
  std::set<std::string> distinct;
  for (const Contract &c : *read) distinct.insert(canonical_text(c));
  EXPECT_EQ(read->size(), distinct.size());
  EXPECT_EQ(read->size(), 200u + kProcesses * 100);
}

// A directory, a missing folder, a FIFO nobody reads, a file without write
// permission: one warning each, recording stops, the caller goes on.
TEST_F(ContractRecordTest, AnUnwritableFileIsAWarningNeverACrashOrAHang) {
  ASSERT_EQ(mkfifo((dir_ + "/fifo").c_str(), 0600), 0);
  write(dir_ + "/readonly", "");
  chmod((dir_ + "/readonly").c_str(), 0400);
  const bool root = geteuid() == 0;  // root writes a 0400 file anyway
  const Contract c = valid_contracts(1, 3).front();
  for (const std::string name : {"", "/missing/r.jsonl", "/fifo", "/readonly"}) {
    if (name == "/readonly" && root) continue;
    const std::string path = dir_ + name;
    const int rc = testing_support::exit_code_within(10, [&] {
      ContractRecorder recorder(path);
      recorder.record(c);
      recorder.record(c);
      return 0;
    });
    EXPECT_EQ(rc, 0) << path;
    testing::internal::CaptureStderr();
    {
      ContractRecorder recorder(path);
      recorder.record(c);
      recorder.record(valid_contracts(2, 3).back());
    }
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("GATEJIT_RECORD: cannot append to " + path), std::string::npos) << err;
    EXPECT_EQ(err.find("cannot append", err.find("cannot append") + 1), std::string::npos) << "warned twice: " << err;
  }
  EXPECT_TRUE(fs::is_fifo(dir_ + "/fifo"));
}

TEST_F(ContractRecordTest, TheReaderNamesTheLineOfABadContract) {
  const std::string path = dir_ + "/r.jsonl";
  const std::string good = contract_to_json(valid_contracts(1, 4).front()).dump();
  write(path, good + "\n\n" + good + "\n{\"m\": 1, \"n\": 0, \"k\": 8}\n");
  auto read = read_contract_record(path);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("r.jsonl line 4: n = 0: must be in [1,"), std::string::npos)
      << read.status().message();
  write(path, good + "\n{\"m\": 1,\n");
  read = read_contract_record(path);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("line 2: "), std::string::npos) << read.status().message();
  // Blank lines and repeats are skipped; a file of none is an error.
  write(path, "\n" + good + "\n  \n" + good + "\n");
  read = read_contract_record(path);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(read->size(), 1u);
  write(path, "\n\n");
  EXPECT_FALSE(read_contract_record(path).ok());
}

// Through the C API: the option and the variable (the option wins), on
// resolve whatever its outcome (no kernel serves these here), not on explain.
TEST_F(ContractRecordTest, ARuntimeRecordsWhatItResolves) {
  const char *kA = R"({"m": 1, "n": 1536, "k": 7168, "target": "sm_90"})";
  const char *kB = R"({"m": 64, "n": 1536, "k": 7168, "target": "gfx950", "act": "silu"})";
  setenv("GATEJIT_RECORD", (dir_ + "/env.jsonl").c_str(), 1);
  for (const bool by_option : {false, true}) {
    gatejit_runtime_options_t o = GATEJIT_RUNTIME_OPTIONS_INIT;
    o.disable_cache = 1;
    o.disable_jit = 1;
    o.disable_shipped_bundle = 1;
    const std::string option_path = dir_ + "/option.jsonl";
    if (by_option) o.record_path = option_path.c_str();
    gatejit_runtime_t rt = nullptr;
    gatejit_status_t s = gatejit_runtime_create(&o, &rt);
    ASSERT_EQ(s, nullptr) << gatejit_status_message(s);
    char *text = nullptr;
    gatejit_status_free(gatejit_explain_contract_json(rt, kB, &text));
    gatejit_string_free(text);
    for (const char *c : {kA, kA, kB, kA}) gatejit_status_free(gatejit_resolve_contract_json(rt, c, nullptr));
    gatejit_runtime_destroy(rt);
    const auto lines = lines_of(dir_ + (by_option ? "/option.jsonl" : "/env.jsonl"));
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_EQ(canonical_text(*normalize(*contract_from_json_text(lines[0]))),
              canonical_text(*normalize(*contract_from_json_text(kA))));
  }
  EXPECT_EQ(lines_of(dir_ + "/env.jsonl").size(), 2u) << "the option's runtime wrote to the variable's file";
}

}  // namespace
}  // namespace gatejit
