// Issue 19 through the real gatejit binary: every entry point of the command
// line meets hostile input with one bounded, escaped error line and exit
// status 1 (never a crash, a hang or a clobbered file), and the compile
// summary says what really happened to the cache.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "bundle.h"
#include "compiler/cli_run.h"

namespace gatejit {
namespace {

using namespace testing_support;
using testing::HasSubstr;
using testing::Not;

constexpr const char *kSmall = "compile --m 1 --n 256 --k 512 --target gfx950";

void write_text(const fs::path &p, const std::string &text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
}

// The error a hostile input should give: exit 1, one line on stderr that
// starts "gatejit: error: ", holds `needle`, and carries no control byte.
void expect_one_error_line(const CliResult &r, const std::string &needle) {
  EXPECT_EQ(r.rc, 1) << "stderr: " << r.err.substr(0, 500);
  EXPECT_EQ(r.err.rfind("gatejit: error: ", 0), 0u) << r.err.substr(0, 500);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err.substr(0, 500);
  for (unsigned char c : r.err) ASSERT_TRUE(c == '\n' || (c >= 0x20 && c < 0x7f)) << "byte " << int(c);
  EXPECT_LT(r.err.size(), 4500u);
  EXPECT_THAT(r.err, HasSubstr(needle));
}

// ---- point 1: -o writes only over a regular file or nothing

TEST(CliHardening, OutputRefusesAFifoADirectoryAndASymlink) {
  TempDir dir;
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0644), 0);
  fs::create_directory(dir / "dir");
  write_text(dir / "target", "keep");
  fs::create_symlink(dir / "target", dir / "link");
  for (const auto &[name, why] : {std::pair{"fifo", "is a FIFO"}, {"dir", "is a directory"},
                                  {"link", "is a symbolic link"}}) {
    SCOPED_TRACE(name);
    const CliResult r = gatejit_run(dir, "", std::string(kSmall) + " -o " + (dir / name).string(), 120);
    expect_one_error_line(r, why);
  }
  EXPECT_TRUE(fs::is_fifo(dir / "fifo"));
  EXPECT_TRUE(fs::is_symlink(dir / "link"));
  EXPECT_EQ(slurp(dir / "target"), "keep");
  // A regular file is replaced and keeps its mode.
  write_text(dir / "out.hsaco", "old");
  fs::permissions(dir / "out.hsaco", fs::perms(0640));
  const CliResult ok = gatejit_run(dir, "", std::string(kSmall) + " -o " + (dir / "out.hsaco").string(), 120);
  ASSERT_EQ(ok.rc, 0) << ok.err;
  EXPECT_EQ(fs::status(dir / "out.hsaco").permissions(), fs::perms(0640));
  EXPECT_NE(slurp(dir / "out.hsaco"), "old");
}

// ---- point 2: nesting

TEST(CliHardening, DeeplyNestedContractAndSpecAreErrorsNotCrashes) {
  TempDir dir;
  write_text(dir / "deep.json", "{\"m\": " + std::string(100000, '[') + std::string(100000, ']') + "}");
  expect_one_error_line(gatejit_run(dir, "", "compile --contract " + (dir / "deep.json").string()),
                        "nested deeper than 64 levels");
  write_text(dir / "deep-spec.json", std::string(100000, '['));
  expect_one_error_line(gatejit_run(dir, "", "precompile " + (dir / "deep-spec.json").string() + " -o " +
                                                 (dir / "b.gjb").string()),
                        "nested deeper than 64 levels");
  EXPECT_FALSE(fs::exists(dir / "b.gjb"));
}

// ---- point 4: unbounded reads

TEST(CliHardening, EndlessInputsAreRefusedByTypeAndSize) {
  TempDir dir;
  const CliResult c = gatejit_run(dir, "", "compile --contract /dev/zero", 30);
  expect_one_error_line(c, "/dev/zero: is a character device, not a regular file");
  const CliResult s = gatejit_run(dir, "", "precompile /dev/zero -o " + (dir / "b.gjb").string(), 30);
  expect_one_error_line(s, "/dev/zero: is a character device, not a regular file");
  write_text(dir / "big.json", "{\"n\": \"" + std::string(2 << 20, 'x') + "\"}");
  expect_one_error_line(gatejit_run(dir, "", "compile --contract " + (dir / "big.json").string(), 30),
                        "is larger than the limit of 1048576 bytes");
}

// ---- point 5: FIFOs where a file is expected

TEST(CliHardening, FifoInputsFailAtOnce) {
  TempDir dir;
  const std::string fifo = (dir / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  const std::string flags = "--m 1 --n 256 --k 512 --target gfx950";
  expect_one_error_line(gatejit_run(dir, "", "inspect " + fifo, 20), "is a FIFO");
  expect_one_error_line(gatejit_run(dir, "", "compile --contract " + fifo, 20), "is a FIFO");
  expect_one_error_line(gatejit_run(dir, "", "precompile " + fifo + " -o " + (dir / "b.gjb").string(), 20),
                        "is a FIFO");
  expect_one_error_line(gatejit_run(dir, "", "explain " + flags + " --bundle " + fifo, 20), "is a FIFO");
  expect_one_error_line(gatejit_run(dir, "GATEJIT_BUNDLE_PATH=" + fifo, "explain " + flags, 20), "is a FIFO");
}

// ---- point 6: the summary tells the truth

TEST(CliHardening, CompileSummarySaysWhenTheKernelWasNotStored) {
  TempDir dir;
  const CliResult r = gatejit_run(dir, "GATEJIT_CACHE_MAX_BYTES=100", kSmall, 120);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("cache: miss, compiled, NOT stored ("));
  EXPECT_THAT(r.out, HasSubstr("more than the cache limit of 100 bytes"));
  EXPECT_THAT(r.out, Not(HasSubstr("compiled and stored")));
  // With room, the same compile is stored, then served.
  const CliResult stored = gatejit_run(dir, "", kSmall, 120);
  ASSERT_EQ(stored.rc, 0) << stored.err;
  EXPECT_THAT(stored.out, HasSubstr("cache: miss, compiled and stored"));
  const CliResult hit = gatejit_run(dir, "", kSmall, 120);
  EXPECT_THAT(hit.out, HasSubstr("cache: hit"));
}

// ---- point 7: verify's exit status

// 0 clean (cleaning a killed writer's temporary file is routine), 1 bad
// entries found and removed; the temporary file of a live writer stays.
TEST(CliHardening, VerifyExitStatusSaysCleanOrRepaired) {
  TempDir dir;
  ASSERT_EQ(gatejit_run(dir, "", kSmall, 120).rc, 0);
  const CliResult clean = gatejit_run(dir, "", "cache verify");
  EXPECT_EQ(clean.rc, 0) << clean.out;
  // What a writer killed two hours ago left behind.
  fs::path entry;
  for (const auto &e : fs::recursive_directory_iterator(dir / "cache" / "v1"))
    if (e.path().extension() == ".gjk") entry = e.path();
  ASSERT_FALSE(entry.empty());
  const fs::path dead = entry.string() + ".tmp.999999.0.abc";
  write_text(dead, "partial");
  fs::last_write_time(dead, fs::file_time_type::clock::now() - std::chrono::hours(2));
  const CliResult cleaned = gatejit_run(dir, "", "cache verify");
  EXPECT_EQ(cleaned.rc, 0) << cleaned.out;
  EXPECT_THAT(cleaned.out, HasSubstr("temporary files of killed writers removed 1"));
  EXPECT_FALSE(fs::exists(dead));
  // A damaged entry is removed: repaired.
  fs::resize_file(entry, 10);
  const CliResult repaired = gatejit_run(dir, "", "cache verify");
  EXPECT_EQ(repaired.rc, 1) << repaired.out;
  EXPECT_THAT(repaired.out, HasSubstr("(removed)"));
  EXPECT_EQ(gatejit_run(dir, "", "cache verify").rc, 0);
}

// ---- point 9: bounded, escaped echo

TEST(CliHardening, ErrorLinesEchoInputEscapedAndBounded) {
  TempDir dir;
  write_text(dir / "escape.json", "{\"\\u001b[31mred\\nnext\\u0000tail\": 1}");
  const CliResult e = gatejit_run(dir, "", "compile --contract " + (dir / "escape.json").string());
  expect_one_error_line(e, "contract key '\\x1b[31mred\\nnext\\0tail' is unknown");
  write_text(dir / "long.json", "{\"" + std::string(900000, 'k') + "\": 1}");
  const CliResult l = gatejit_run(dir, "", "compile --contract " + (dir / "long.json").string());
  expect_one_error_line(l, "(900000 bytes) is unknown");
  EXPECT_LT(l.err.size(), 1000u);
  const CliResult v = gatejit_run(dir, "", "compile --n 1 --k 1 --dtype \"$(printf 'bf\\033[2J16')\"");
  expect_one_error_line(v, "dtype = 'bf\\x1b[2J16': allowed dtypes are bf16, f16, f32");
}

// ---- point 10

TEST(CliHardening, CacheStatsOnAMissingDirectoryCreatesNothing) {
  TempDir dir;
  const fs::path missing = dir / "nonexistent" / "x";
  for (const char *action : {"stats", "list", "verify", "clear"}) {
    SCOPED_TRACE(action);
    const CliResult r = gatejit_run(dir, "", std::string("cache ") + action + " --dir " + missing.string());
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("no kernel cache there (the directory does not exist)"));
    EXPECT_FALSE(fs::exists(dir / "nonexistent"));
  }
}

TEST(CliHardening, IntegerFlagsTakeDigitsOnly) {
  TempDir dir;
  for (const char *m : {"' 1'", "+5", "'1 '", "0x10", "1e3", "''"}) {
    SCOPED_TRACE(m);
    const CliResult r = gatejit_run(dir, "", std::string("explain --n 256 --k 512 --m ") + m);
    EXPECT_NE(r.rc, 0);
    EXPECT_THAT(r.err, HasSubstr("is not an integer"));
  }
  const CliResult ok = gatejit_run(dir, "", "explain --n 256 --k 512 --m 1 --target gfx950");
  EXPECT_EQ(ok.rc, 0) << ok.err;
}

TEST(CliHardening, DuplicateContractKeysAreRefusedByName) {
  TempDir dir;
  write_text(dir / "dup.json", R"({"m": 1, "n": 256, "k": 512, "n": 4096})");
  expect_one_error_line(gatejit_run(dir, "", "compile --contract " + (dir / "dup.json").string()),
                        "key 'n' appears twice in one object");
  write_text(dir / "dup-spec.json", R"([{"n": 256, "k": 512, "act": "silu", "act": "sigmoid"}])");
  expect_one_error_line(
      gatejit_run(dir, "", "precompile " + (dir / "dup-spec.json").string() + " -o " + (dir / "b.gjb").string()),
      "key 'act' appears twice in one object");
}

TEST(CliHardening, AnEmptySpecIsAnError) {
  TempDir dir;
  write_text(dir / "empty.json", "[]");
  const CliResult r =
      gatejit_run(dir, "", "precompile " + (dir / "empty.json").string() + " -o " + (dir / "b.gjb").string());
  expect_one_error_line(r, "the list is empty; give at least one contract");
  EXPECT_FALSE(fs::exists(dir / "b.gjb"));
}

// ---- issue 45: bundle extract names files only from validated fields

// A kernel of a hand-made bundle: every field a forger controls, behind
// valid checksums (the writer seals whatever it is given).
KernelBinary forged_kernel(const std::string &key, const std::string &contract_text, const std::string &symbol) {
  KernelBinary kb;
  kb.key = key;
  kb.contract_text = contract_text;
  kb.target = Target::kGfx950;
  kb.format = BinaryFormat::kHsaco;
  kb.symbol = symbol;
  kb.geometry = {256, 64, false};
  kb.toolchain = "forged";
  kb.report_json = "{}";
  kb.code = {0x7f, 'E', 'L', 'F', 1, 2, 3, 4};
  return kb;
}

void write_bundle(const fs::path &path, const std::vector<KernelBinary> &kernels) {
  BundleWriter w;
  for (const KernelBinary &kb : kernels) ASSERT_TRUE(w.add(kb).ok());
  ASSERT_TRUE(w.write(path.string(), false).ok());
}

// Every file under `root`, as paths relative to it.
std::vector<std::string> tree_of(const fs::path &root) {
  std::vector<std::string> out;
  for (const auto &e : fs::recursive_directory_iterator(root)) out.push_back(fs::relative(e.path(), root).string());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(CliHardening, BundleExtractRefusesNamesAndIndexLinesFromForgedFields) {
  const std::string key = "0123456789abcdef0123456789abcdef";
  const std::string good = "gatejit-contract/1 target=gfx950 template=gemv dtype=bf16";
  const struct {
    const char *name;
    std::string contract, symbol, needle;
  } cases[] = {
      {"template climbs out of -o", "gatejit-contract/1 target=gfx950 template=x/../../sentinel/ESC2 dtype=bf16",
       "gatejit_k", "template 'x/../../sentinel/ESC2'"},
      {"template with a NUL", std::string("gatejit-contract/1 target=gfx950 template=ab\0cd dtype=bf16", 58),
       "gatejit_k", "template 'ab\\0cd'"},
      {"contract with a newline", good + "\nforged.hsaco\tsym\tcontract", "gatejit_k", "contract text"},
      {"contract with a tab", good + "\textra", "gatejit_k", "contract text"},
      {"symbol with a newline", good, "gatejit_k\nforged.hsaco", "symbol 'gatejit_k\\nforged.hsaco'"},
      {"symbol with a slash", good, "../gatejit_k", "symbol '../gatejit_k'"},
  };
  for (const auto &c : cases) {
    SCOPED_TRACE(c.name);
    TempDir dir;
    fs::create_directories(dir / "out" / "gfx950-x");  // what the climb needs to resolve
    fs::create_directories(dir / "sentinel");
    write_bundle(dir / "b.gjb", {forged_kernel(key, c.contract, c.symbol)});
    const CliResult r = gatejit_run(dir, "", "bundle extract " + (dir / "b.gjb").string() + " -o " +
                                                 (dir / "out").string());
    expect_one_error_line(r, "entry " + key);
    EXPECT_THAT(r.err, HasSubstr(c.needle));
    EXPECT_TRUE(fs::is_empty(dir / "sentinel")) << "wrote outside -o";
    EXPECT_EQ(tree_of(dir / "out"), std::vector<std::string>{"gfx950-x"}) << "wrote something";
  }
}

TEST(CliHardening, BundleExtractWritesNothingWhenAnyEntryIsRefused) {
  TempDir dir;
  const std::string good = "gatejit-contract/1 target=gfx950 template=gemv dtype=bf16";
  // Two entries whose 12-digit key prefixes collide would overwrite each
  // other's file; a symlink in -o where a file goes is never followed.
  write_bundle(dir / "dup.gjb", {forged_kernel("0123456789ab00000000000000000000", good, "gatejit_a"),
                                 forged_kernel("0123456789ab11111111111111111111", good, "gatejit_b")});
  fs::create_directories(dir / "out");
  const CliResult dup =
      gatejit_run(dir, "", "bundle extract " + (dir / "dup.gjb").string() + " -o " + (dir / "out").string());
  expect_one_error_line(dup, "both write gfx950-gemv-0123456789ab.hsaco");
  EXPECT_TRUE(fs::is_empty(dir / "out"));

  write_bundle(dir / "ok.gjb", {forged_kernel("0123456789abcdef0123456789abcdef", good, "gatejit_a"),
                                forged_kernel("fedcba98765432100123456789abcdef", good, "gatejit_b")});
  fs::create_directories(dir / "elsewhere");
  fs::create_symlink(dir / "elsewhere" / "victim", dir / "out" / "gfx950-gemv-fedcba987654.hsaco");
  const CliResult link =
      gatejit_run(dir, "", "bundle extract " + (dir / "ok.gjb").string() + " -o " + (dir / "out").string());
  expect_one_error_line(link, "is a symbolic link");
  EXPECT_TRUE(fs::is_empty(dir / "elsewhere"));
  EXPECT_EQ(tree_of(dir / "out"), std::vector<std::string>{"gfx950-gemv-fedcba987654.hsaco"});

  // Without the link: both files and an index of exactly three lines.
  fs::remove(dir / "out" / "gfx950-gemv-fedcba987654.hsaco");
  const CliResult ok =
      gatejit_run(dir, "", "bundle extract " + (dir / "ok.gjb").string() + " -o " + (dir / "out").string());
  ASSERT_EQ(ok.rc, 0) << ok.err;
  EXPECT_EQ(tree_of(dir / "out"), (std::vector<std::string>{"gfx950-gemv-0123456789ab.hsaco",
                                                            "gfx950-gemv-fedcba987654.hsaco", "index.tsv"}));
  EXPECT_EQ(slurp(dir / "out" / "index.tsv"),
            "file\tsymbol\tcontract\n"
            "gfx950-gemv-0123456789ab.hsaco\tgatejit_a\t" + good + "\n"
            "gfx950-gemv-fedcba987654.hsaco\tgatejit_b\t" + good + "\n");
}

// ---- issue 45: the cache's own files, shards and reports through the tool

// The one entry file of a cache.
fs::path only_entry(const fs::path &cache) {
  fs::path entry;
  for (const auto &e : fs::recursive_directory_iterator(cache / "v1"))
    if (e.path().extension() == ".gjk") entry = e.path();
  return entry;
}

TEST(CliHardening, AFifoToolchainRecordBlocksNoCompileAndVerifyAndClearDealWithIt) {
  TempDir dir;
  ASSERT_EQ(gatejit_run(dir, "", kSmall, 120).rc, 0);
  const fs::path record = dir / "cache" / "v1" / "toolchain";
  fs::remove(record);
  ASSERT_EQ(::mkfifo(record.c_str(), 0600), 0);
  // A hit, then a miss: neither blocks on the FIFO.
  const CliResult hit = gatejit_run(dir, "", kSmall, 60);
  EXPECT_EQ(hit.rc, 0) << (hit.rc == kToolTimedOut ? "hung" : hit.err);
  const CliResult miss = gatejit_run(dir, "", "compile --m 2 --n 256 --k 512 --target gfx950", 120);
  EXPECT_EQ(miss.rc, 0) << (miss.rc == kToolTimedOut ? "hung" : miss.err);
  fs::remove(record);
  ASSERT_EQ(::mkfifo(record.c_str(), 0600), 0);
  const CliResult verify = gatejit_run(dir, "", "cache verify", 30);
  EXPECT_EQ(verify.rc, 1) << verify.out << verify.err;
  EXPECT_THAT(verify.out, HasSubstr(record.string() + ": is a FIFO"));
  EXPECT_FALSE(fs::exists(fs::symlink_status(record)));
  ASSERT_EQ(::mkfifo(record.c_str(), 0600), 0);
  const CliResult clear = gatejit_run(dir, "", "cache clear", 30);
  EXPECT_EQ(clear.rc, 0) << clear.err;
  EXPECT_FALSE(fs::exists(fs::symlink_status(record))) << "clear left the FIFO";
}

TEST(CliHardening, AnEntryWhoseReportIsNotJsonIsRebuiltAndVerifyCallsItBad) {
  TempDir dir;
  ASSERT_EQ(gatejit_run(dir, "", kSmall, 120).rc, 0);
  const fs::path entry = only_entry(dir / "cache");
  ASSERT_FALSE(entry.empty());
  const std::string bytes = slurp(entry);
  auto kb = decode_kernel_binary({reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size()});
  ASSERT_TRUE(kb.ok()) << kb.status().to_string();
  kb->report_json = "this is not JSON";
  const auto plant = [&] {
    const std::vector<uint8_t> bad = encode_kernel_binary(*kb);
    std::ofstream(entry, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char *>(bad.data()),
                                                                    std::streamsize(bad.size()));
  };
  plant();
  const CliResult verify = gatejit_run(dir, "", "cache verify", 30);
  EXPECT_EQ(verify.rc, 1) << verify.out;
  EXPECT_THAT(verify.out, HasSubstr(entry.string() + ": the report is not a JSON object"));
  plant();
  const CliResult rebuilt = gatejit_run(dir, "", kSmall, 120);
  EXPECT_EQ(rebuilt.rc, 0) << rebuilt.err;
  EXPECT_THAT(rebuilt.out, HasSubstr("cache: miss, compiled and stored"));
  const CliResult hit = gatejit_run(dir, "", kSmall, 120);
  EXPECT_EQ(hit.rc, 0) << hit.err;
  EXPECT_THAT(hit.out, HasSubstr("cache: hit"));
}

TEST(CliHardening, VerifySaysWhichShardItRefusedToFollow) {
  TempDir dir;
  ASSERT_EQ(gatejit_run(dir, "", kSmall, 120).rc, 0);
  const fs::path shard = only_entry(dir / "cache").parent_path();
  fs::rename(shard, dir / "elsewhere");
  fs::create_directory_symlink(dir / "elsewhere", shard);
  const CliResult verify = gatejit_run(dir, "", "cache verify", 30);
  EXPECT_EQ(verify.rc, 1) << verify.out;
  EXPECT_THAT(verify.out, HasSubstr(shard.string() + ": is a symbolic link"));
  EXPECT_THAT(verify.out, Not(HasSubstr("checked 0, ok 0, removed 0, not repaired 0")));
}

// ---- issue 45: numbers echoed as given; precompile's cap; an empty cache dir

TEST(CliHardening, NumbersPastInt64AreEchoedAsGiven) {
  TempDir dir;
  write_text(dir / "huge.json", R"({"m": 18446744073709551615, "n": 256, "k": 512})");
  const CliResult c = gatejit_run(dir, "", "compile --contract " + (dir / "huge.json").string());
  expect_one_error_line(c, "m = 18446744073709551615");
  EXPECT_THAT(c.err, Not(HasSubstr("-1")));
  write_text(dir / "spec.json", R"([{"m": {"min": 1, "max": 18446744073709551615}, "n": 256, "k": 512}])");
  const CliResult p =
      gatejit_run(dir, "", "precompile " + (dir / "spec.json").string() + " -o " + (dir / "b.gjb").string());
  expect_one_error_line(p, "18446744073709551615");
  EXPECT_THAT(p.err, Not(HasSubstr("-1")));
}

// 200,000 contracts fit under the spec's 16 MiB and would compile for hours:
// refused at once, naming the cap, with no bundle written.
TEST(CliHardening, PrecompileRefusesMoreContractsThanItsCap) {
  TempDir dir;
  std::string spec = "[";
  for (int i = 0; i < 200000; ++i) spec += std::string(i ? "," : "") + R"({"m":1,"n":256,"k":)" + std::to_string(512 + 8 * i) + "}";
  write_text(dir / "big.json", spec + "]");
  // Killed after 60 s (exit 137) were it to compile; refused, it is done in
  // seconds (most of them parsing the 5 MB spec).
  const CliResult r =
      gatejit_run(dir, "", "precompile " + (dir / "big.json").string() + " -o " + (dir / "b.gjb").string(), 60);
  expect_one_error_line(r, "more than 16384 contracts");
  EXPECT_FALSE(fs::exists(dir / "b.gjb"));
  // A range counts each M, on each target.
  write_text(dir / "range.json", R"([{"m": {"min": 1, "max": 4096}, "n": 256, "k": 512},
                                       {"m": {"min": 1, "max": 4096}, "n": 512, "k": 512}])");
  const CliResult range = gatejit_run(dir, "", "precompile " + (dir / "range.json").string() +
                                                   " --targets gfx950,gfx942,sm_90 -o " + (dir / "b.gjb").string(), 60);
  expect_one_error_line(range, "more than 16384 contracts");
}

// An empty GATEJIT_CACHE_DIR means unset (docs/cache.md), as an empty
// XDG_CACHE_HOME does; an empty --dir names no folder and is a usage error.
TEST(CliHardening, AnEmptyCacheDirIsUnsetAndAnEmptyDirFlagIsAnError) {
  TempDir dir;
  fs::create_directories(dir / "home");
  const std::string env = "HOME=" + (dir / "home").string() + " XDG_CACHE_HOME= GATEJIT_CACHE_DIR=";
  const CliResult stats = gatejit_run(dir, env, "cache stats");
  EXPECT_EQ(stats.rc, 0) << stats.err;
  EXPECT_THAT(stats.out, HasSubstr((dir / "home" / ".cache" / "gatejit").string()));
  const CliResult flag = gatejit_run(dir, "", "cache stats --dir ''");
  EXPECT_EQ(flag.rc, 2) << flag.out << flag.err;
  EXPECT_THAT(flag.err, HasSubstr("--dir"));
  EXPECT_THAT(flag.err, HasSubstr("empty"));
}

}  // namespace
}  // namespace gatejit
