// The disk cache against the real file system: a fresh mkdtemp directory per
// test, real processes (fork) for the concurrency and privilege cases.
#include "disk_cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "cache_toolchain.h"
#include "support/scoped_env.h"
#include "file_io.h"
#include "gatejit/kernel_binary.h"
#include "support/child_process.h"

namespace gatejit {
namespace {

constexpr uid_t kNobody = 65534;

std::string contract_key_for(int i) {
  char buf[33];
  std::snprintf(buf, sizeof buf, "%032x", i);
  return buf;
}

KernelBinary make_binary(const std::string &contract_key, const std::string &toolchain, size_t code_bytes = 512,
                         uint32_t seed = 1) {
  KernelBinary kb;
  kb.key = contract_key;
  kb.contract_text = "gatejit-contract/1 target=gfx950 test=" + contract_key;
  kb.target = Target::kGfx950;
  kb.format = BinaryFormat::kHsaco;
  kb.symbol = "gatejit_gate_epilogue";
  kb.geometry.block_x = 256;
  kb.geometry.n_per_block = 64;
  kb.toolchain = toolchain;
  kb.report_json = R"({"vgprs": 32})";
  std::mt19937 rng(seed);
  kb.code.resize(code_bytes);
  for (auto &b : kb.code) b = uint8_t(rng());
  return kb;
}

// ---- small file-system helpers ----------------------------------------------

bool exists(const std::string &p) {
  struct stat st;
  return ::lstat(p.c_str(), &st) == 0;
}

// Calls fn(path, stat) for `root` and everything below it, parents first.
void walk(const std::string &root, const std::function<void(const std::string &, const struct stat &)> &fn) {
  struct stat st;
  if (::lstat(root.c_str(), &st) != 0) return;
  fn(root, st);
  if (!S_ISDIR(st.st_mode)) return;
  std::vector<std::string> names;
  if (DIR *d = ::opendir(root.c_str())) {
    while (dirent *e = ::readdir(d))
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) names.emplace_back(e->d_name);
    ::closedir(d);
  }
  for (const auto &n : names) walk(root + "/" + n, fn);
}

void remove_tree(const std::string &root) {
  struct stat st;
  if (::lstat(root.c_str(), &st) != 0) return;
  if (S_ISDIR(st.st_mode)) {
    ::chmod(root.c_str(), 0700);  // tests make directories unwritable
    std::vector<std::string> names;
    if (DIR *d = ::opendir(root.c_str())) {
      while (dirent *e = ::readdir(d))
        if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) names.emplace_back(e->d_name);
      ::closedir(d);
    }
    for (const auto &n : names) remove_tree(root + "/" + n);
    ::rmdir(root.c_str());
  } else {
    ::unlink(root.c_str());
  }
}

// Everything observable about a tree: name, type, mode, owner, size, mtime.
std::map<std::string, std::string> snapshot(const std::string &root) {
  std::map<std::string, std::string> out;
  walk(root, [&](const std::string &p, const struct stat &st) {
    out[p] = std::to_string(st.st_mode) + " " + std::to_string(st.st_uid) + " " + std::to_string(st.st_size) + " " +
             std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
  });
  return out;
}

std::vector<std::string> entry_files(const std::string &dir) {
  std::vector<std::string> out;
  walk(dir, [&](const std::string &p, const struct stat &st) {
    if (S_ISREG(st.st_mode) && p.ends_with(".gjk")) out.push_back(p);
  });
  return out;
}

std::vector<std::string> temp_files(const std::string &dir) {
  std::vector<std::string> out;
  walk(dir, [&](const std::string &p, const struct stat &) {
    if (p.find(".tmp.") != std::string::npos) out.push_back(p);
  });
  return out;
}

std::vector<uint8_t> read_all(const std::string &p) {
  std::vector<uint8_t> out;
  if (FILE *f = std::fopen(p.c_str(), "rb")) {
    int c;
    while ((c = std::fgetc(f)) != EOF) out.push_back(uint8_t(c));
    std::fclose(f);
  }
  return out;
}

void write_all(const std::string &p, const std::vector<uint8_t> &bytes, mode_t mode = 0600) {
  int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC, mode);
  ASSERT_GE(fd, 0) << p << ": " << std::strerror(errno);
  ASSERT_EQ(::write(fd, bytes.data(), bytes.size()), ssize_t(bytes.size()));
  ::close(fd);
  ::chmod(p.c_str(), mode);
}

void set_mtime(const std::string &p, time_t sec) {
  struct timespec ts[2] = {{sec, 0}, {sec, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, p.c_str(), ts, AT_SYMLINK_NOFOLLOW), 0) << p;
}

size_t count_lines(const std::string &p) {
  size_t n = 0;
  for (uint8_t c : read_all(p)) n += c == '\n';
  return n;
}

void append_line(const std::string &p) {
  int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0666);
  if (fd >= 0) {
    (void)!::write(fd, "x\n", 2);
    ::close(fd);
  }
}

// Runs fn in a forked child and returns its exit code (or 128+signal).
int run_in_child(const std::function<int()> &fn) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(fn());
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

bool drop_to_nobody() {
  return ::setgroups(0, nullptr) == 0 && ::setgid(kNobody) == 0 && ::setuid(kNobody) == 0;
}

// ---- fixture -----------------------------------------------------------------

class DiskCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gatejit-disk-cache-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr) << std::strerror(errno);
    root_ = tmpl;
    dir_ = root_ + "/cache";
  }
  void TearDown() override { remove_tree(root_); }

  DiskCacheOptions options(bool read_only = false, uint64_t max_bytes = uint64_t(1) << 30) const {
    DiskCacheOptions o;
    o.dir = dir_;
    o.read_only = read_only;
    o.max_bytes = max_bytes;
    return o;
  }
  std::unique_ptr<DiskCache> open_cache(bool read_only = false, uint64_t max_bytes = uint64_t(1) << 30) {
    auto c = DiskCache::open(options(read_only, max_bytes));
    EXPECT_TRUE(c.ok()) << c.status().to_string();
    return c.ok() ? std::move(*c) : nullptr;
  }
  // Puts the binary for contract i / toolchain and returns its cache key.
  std::string put(DiskCache &cache, int i, const std::string &toolchain = "tc-1", size_t code_bytes = 512) {
    const KernelBinary kb = make_binary(contract_key_for(i), toolchain, code_bytes, uint32_t(i));
    const std::string key = cache_key(kb.key, kb.toolchain);
    Status s = cache.put(key, kb);
    EXPECT_TRUE(s.ok()) << s.to_string();
    return key;
  }

  std::string root_;
  std::string dir_;
};

// ---- key ------------------------------------------------------------------------

TEST(DiskCacheKey, StableHexAndSensitiveToBothParts) {
  const std::string k = cache_key("00112233445566778899aabbccddeeff", "llvm-20 gen-1");
  EXPECT_EQ(k.size(), 32u);
  EXPECT_EQ(k.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(k, cache_key("00112233445566778899aabbccddeeff", "llvm-20 gen-1"));
  EXPECT_NE(k, cache_key("00112233445566778899aabbccddeeff", "llvm-20 gen-2"));
  EXPECT_NE(k, cache_key("00112233445566778899aabbccddeefe", "llvm-20 gen-1"));
  // The separator keeps the boundary: moving a character across it changes the key.
  EXPECT_NE(cache_key("ab", "c"), cache_key("a", "bc"));
}

// ---- basic use --------------------------------------------------------------------

TEST_F(DiskCacheTest, RoundTripPutGet) {
  auto cache = open_cache();
  ASSERT_TRUE(cache);
  const KernelBinary kb = make_binary(contract_key_for(7), "tc-1", 4096, 7);
  const std::string key = cache_key(kb.key, kb.toolchain);
  ASSERT_TRUE(cache->put(key, kb).ok());

  const std::string path = cache->entry_path(key);
  EXPECT_EQ(path, dir_ + "/v1/" + key.substr(0, 2) + "/" + key + ".gjk");
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(read_all(path), encode_kernel_binary(kb));  // an entry is exactly the encoded blob
  for (const std::string d : {dir_, dir_ + "/v1", dir_ + "/v1/" + key.substr(0, 2), dir_ + "/v1/locks"}) {
    ASSERT_EQ(::stat(d.c_str(), &st), 0) << d;
    EXPECT_EQ(st.st_mode & 0777, 0700u) << d;
  }

  auto got = cache->get(key, kb.key, kb.toolchain);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  EXPECT_EQ(got->code, kb.code);
  EXPECT_EQ(got->key, kb.key);
  EXPECT_EQ(got->contract_text, kb.contract_text);
  EXPECT_EQ(got->symbol, kb.symbol);
  EXPECT_EQ(got->toolchain, kb.toolchain);
  EXPECT_EQ(got->report_json, kb.report_json);
  EXPECT_EQ(got->geometry.block_x, 256u);

  // Another instance (another process would be the same) sees it too.
  auto again = open_cache();
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->get(key, kb.key, kb.toolchain).ok());
}

TEST_F(DiskCacheTest, MissIsNotFound) {
  auto cache = open_cache();
  ASSERT_TRUE(cache);
  const std::string key = cache_key(contract_key_for(1), "tc-1");
  auto got = cache->get(key, contract_key_for(1), "tc-1");
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kNotFound);
  EXPECT_NE(got.status().message().find(key), std::string::npos) << got.status().message();
  EXPECT_EQ(cache->stats().misses, 1u);
  EXPECT_EQ(cache->stats().hits, 0u);
}

TEST_F(DiskCacheTest, RejectsMalformedKeysAndMismatchedPuts) {
  auto cache = open_cache();
  ASSERT_TRUE(cache);
  auto got = cache->get("../../../../etc/passwd0000000000", "x", "y");
  EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
  const KernelBinary kb = make_binary(contract_key_for(1), "tc-1");
  // A key that does not hash from the binary's own key+toolchain could never be found.
  Status s = cache->put(cache_key(kb.key, "tc-2"), kb);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.to_string();
  EXPECT_TRUE(entry_files(dir_).empty());
}

// ---- concurrency ----------------------------------------------------------------------

TEST_F(DiskCacheTest, EightProcessesMissTogetherOneCompiles) {
  { ASSERT_TRUE(open_cache()); }  // only creates the directory
  const std::string counter = root_ + "/compiles.txt";
  const std::string ckey = contract_key_for(42);
  const std::string key = cache_key(ckey, "tc-1");
  const KernelBinary expected = make_binary(ckey, "tc-1", 8192, 42);

  int gate[2];
  ASSERT_EQ(::pipe(gate), 0);
  std::vector<pid_t> pids;
  std::fflush(nullptr);
  for (int i = 0; i < 8; ++i) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(gate[1]);
      char c;
      while (::read(gate[0], &c, 1) > 0) {}  // released together when the parent closes the pipe
      auto cache = DiskCache::open(options());
      if (!cache.ok()) ::_exit(10);
      bool hit = false;
      auto kb = (*cache)->get_or_compile(
          key, ckey, "tc-1",
          [&]() -> StatusOr<KernelBinary> {
            append_line(counter);
            ::usleep(300 * 1000);  // a slow compile: the others pile up on the lock
            return expected;
          },
          &hit);
      if (!kb.ok()) ::_exit(11);
      if (kb->code != expected.code) ::_exit(12);
      ::_exit(0);
    }
    pids.push_back(pid);
  }
  ::close(gate[0]);
  ::close(gate[1]);
  for (pid_t pid : pids) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  }
  EXPECT_EQ(count_lines(counter), 1u) << "the compile callback ran more than once";
  const auto files = entry_files(dir_);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_TRUE(temp_files(dir_).empty());
  auto decoded = decode_kernel_binary(read_all(files[0]));
  ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
  EXPECT_EQ(decoded->code, expected.code);

  // The counters were shared by all eight processes.
  auto cache = open_cache();
  ASSERT_TRUE(cache);
  const CacheStats s = cache->stats();
  EXPECT_EQ(s.compiles, 1u);
  EXPECT_EQ(s.writes, 1u);
  EXPECT_EQ(s.misses, 1u);
  EXPECT_EQ(s.hits, 7u);
  EXPECT_EQ(s.entries, 1u);
}

TEST_F(DiskCacheTest, LockIsReleasedWhenTheCompilingProcessDies) {
  { ASSERT_TRUE(open_cache()); }
  const std::string ckey = contract_key_for(5);
  const std::string key = cache_key(ckey, "tc-1");
  // The child dies inside the compile callback, while holding the key's lock.
  const int code = run_in_child([&] {
    auto cache = DiskCache::open(options());
    if (!cache.ok()) return 10;
    (void)(*cache)->get_or_compile(key, ckey, "tc-1", []() -> StatusOr<KernelBinary> { ::_exit(3); });
    return 11;
  });
  ASSERT_EQ(code, 3);
  auto cache = open_cache();
  ASSERT_TRUE(cache);
  int compiles = 0;
  auto kb = cache->get_or_compile(key, ckey, "tc-1", [&]() -> StatusOr<KernelBinary> {
    ++compiles;
    return make_binary(ckey, "tc-1");
  });
  ASSERT_TRUE(kb.ok()) << kb.status().to_string();
  EXPECT_EQ(compiles, 1);
  EXPECT_EQ(entry_files(dir_).size(), 1u);
}

// ---- damaged entries ------------------------------------------------------------------------

// Damages the entry with `damage`, then checks get() rejects and removes it
// and get_or_compile() rebuilds it.
void expect_detected_removed_rebuilt(const std::string &dir,
                                     const std::function<void(const std::string &path)> &damage) {
  DiskCacheOptions o;
  o.dir = dir;
  auto opened = DiskCache::open(o);
  ASSERT_TRUE(opened.ok());
  DiskCache &cache = **opened;
  const KernelBinary kb = make_binary(contract_key_for(3), "tc-1", 2048, 3);
  const std::string key = cache_key(kb.key, kb.toolchain);
  ASSERT_TRUE(cache.put(key, kb).ok());
  const std::string path = cache.entry_path(key);
  damage(path);

  auto got = cache.get(key, kb.key, kb.toolchain);
  ASSERT_FALSE(got.ok()) << "a damaged entry was loaded";
  EXPECT_EQ(got.status().code(), StatusCode::kNotFound);
  EXPECT_NE(got.status().message().find(path), std::string::npos) << got.status().message();
  EXPECT_FALSE(exists(path)) << "the damaged entry was not removed";
  EXPECT_EQ(cache.stats().corrupt_removed, 1u);

  // Damage again; this time get_or_compile meets it, drops it and rebuilds.
  ASSERT_TRUE(cache.put(key, kb).ok());
  damage(path);
  int compiles = 0;
  bool hit = true;
  auto rebuilt = cache.get_or_compile(
      key, kb.key, kb.toolchain,
      [&]() -> StatusOr<KernelBinary> {
        ++compiles;
        return kb;
      },
      &hit);
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.status().to_string();
  EXPECT_FALSE(hit);
  EXPECT_EQ(compiles, 1);
  EXPECT_EQ(rebuilt->code, kb.code);
  EXPECT_EQ(read_all(path), encode_kernel_binary(kb)) << "the entry was not rebuilt";
  EXPECT_EQ(cache.stats().corrupt_removed, 2u);
  auto after = cache.get(key, kb.key, kb.toolchain);
  EXPECT_TRUE(after.ok()) << after.status().to_string();
}

TEST_F(DiskCacheTest, TruncatedEntryIsDetectedRemovedAndRebuilt) {
  expect_detected_removed_rebuilt(dir_, [](const std::string &path) {
    struct stat st;
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    ASSERT_EQ(::truncate(path.c_str(), st.st_size / 2), 0);
  });
}

TEST_F(DiskCacheTest, BitFlippedEntryIsDetectedRemovedAndRebuilt) {
  expect_detected_removed_rebuilt(dir_, [](const std::string &path) {
    std::vector<uint8_t> bytes = read_all(path);
    ASSERT_GT(bytes.size(), 1000u);
    bytes[bytes.size() - 700] ^= 0x10;  // one bit in the code
    write_all(path, bytes);
  });
}

TEST_F(DiskCacheTest, StaleEntryIsRebuilt) {
  auto cache = open_cache();
  ASSERT_TRUE(cache);
  const std::string ckey = contract_key_for(9);
  const std::string key = cache_key(ckey, "tc-new");
  // A valid blob built by another toolchain sits where the new toolchain's entry belongs.
  const std::string path = cache->entry_path(key);
  ASSERT_EQ(::mkdir((dir_ + "/v1/" + key.substr(0, 2)).c_str(), 0700), 0);
  write_all(path, encode_kernel_binary(make_binary(ckey, "tc-old", 512, 1)));

  auto got = cache->get(key, ckey, "tc-new");
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("stale"), std::string::npos) << got.status().message();
  EXPECT_FALSE(exists(path));

  write_all(path, encode_kernel_binary(make_binary(ckey, "tc-old", 512, 1)));
  bool hit = true;
  auto kb = cache->get_or_compile(
      key, ckey, "tc-new", [&]() -> StatusOr<KernelBinary> { return make_binary(ckey, "tc-new", 512, 2); }, &hit);
  ASSERT_TRUE(kb.ok()) << kb.status().to_string();
  EXPECT_FALSE(hit);
  EXPECT_EQ(kb->toolchain, "tc-new");
  auto on_disk = decode_kernel_binary(read_all(path));
  ASSERT_TRUE(on_disk.ok());
  EXPECT_EQ(on_disk->toolchain, "tc-new");
}

// ---- read-only -------------------------------------------------------------------------------

TEST_F(DiskCacheTest, ReadOnlyNeverWrites) {
  std::string good, bad;
  {
    auto w = open_cache();
    ASSERT_TRUE(w);
    good = put(*w, 1);
    bad = put(*w, 2);
    // A corrupt entry: read-only must neither load nor remove it.
    std::vector<uint8_t> bytes = read_all(w->entry_path(bad));
    bytes[bytes.size() / 2] ^= 1;
    write_all(w->entry_path(bad), bytes);
    // Old mtimes, so a touch on hit would show.
    set_mtime(w->entry_path(good), 1000000000);
  }
  const auto before = snapshot(dir_);

  auto ro = open_cache(/*read_only=*/true);
  ASSERT_TRUE(ro);
  auto got = ro->get(good, contract_key_for(1), "tc-1");
  EXPECT_TRUE(got.ok()) << got.status().to_string();
  EXPECT_EQ(ro->get(bad, contract_key_for(2), "tc-1").status().code(), StatusCode::kNotFound);
  const std::string missing = cache_key(contract_key_for(3), "tc-1");
  EXPECT_EQ(ro->get(missing, contract_key_for(3), "tc-1").status().code(), StatusCode::kNotFound);

  Status s = ro->put(missing, make_binary(contract_key_for(3), "tc-1"));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(s.message().find("read-only"), std::string::npos) << s.message();

  int compiles = 0;
  auto kb = ro->get_or_compile(missing, contract_key_for(3), "tc-1", [&]() -> StatusOr<KernelBinary> {
    ++compiles;
    return make_binary(contract_key_for(3), "tc-1");
  });
  EXPECT_EQ(kb.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(compiles, 0) << "a read-only cache compiled";
  EXPECT_FALSE(ro->clear().ok());
  auto report = ro->verify();
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->checked, 2u);
  EXPECT_EQ(report->removed, 0u);
  const CacheStats st = ro->stats();
  EXPECT_EQ(st.hits, 1u);  // counted in memory only
  EXPECT_EQ(st.entries, 2u);

  EXPECT_EQ(snapshot(dir_), before) << "the read-only cache changed the directory";
}

TEST_F(DiskCacheTest, ReadOnlyDoesNotCreateTheDirectory) {
  auto c = DiskCache::open(options(/*read_only=*/true));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kNotFound);
  EXPECT_NE(c.status().message().find(dir_), std::string::npos);
  EXPECT_FALSE(exists(dir_));
}

// ---- unwritable directory and full disk ------------------------------------------------------------

// Checks run as a user who cannot write `dir` (which holds one entry, `key`)
// or `unwritable_parent`. Returns 0, or the number of the failed check.
int unwritable_checks(const DiskCacheOptions &o, const std::string &key, const std::string &unwritable_parent) {
  // A cache directory that cannot be created: open() fails cleanly.
  DiskCacheOptions sub = o;
  sub.dir = unwritable_parent + "/cache";
  auto no = DiskCache::open(sub);
  if (no.ok()) return 1;
  if (no.status().code() != StatusCode::kIoError) return 2;
  if (no.status().message().find(sub.dir) == std::string::npos) return 3;

  auto opened = DiskCache::open(o);
  if (!opened.ok()) return 4;
  DiskCache &cache = **opened;
  if (!cache.get(key, contract_key_for(1), "tc-1").ok()) return 5;  // reading still works

  const KernelBinary kb = make_binary(contract_key_for(2), "tc-1");
  const std::string key2 = cache_key(kb.key, kb.toolchain);
  Status s = cache.put(key2, kb);
  if (s.ok()) return 6;
  if (s.code() != StatusCode::kIoError) return 7;
  if (s.message().find(o.dir) == std::string::npos) return 8;

  int compiles = 0;
  bool hit = true;
  auto got = cache.get_or_compile(
      key2, kb.key, kb.toolchain,
      [&]() -> StatusOr<KernelBinary> {
        ++compiles;
        return kb;
      },
      &hit);
  if (!got.ok()) return 9;  // degrades: the compiled kernel is still returned
  if (compiles != 1 || hit) return 10;
  if (got->code != kb.code) return 11;
  return 0;
}

TEST_F(DiskCacheTest, UnwritableDirectoryDegrades) {
  std::string key;
  {
    auto w = open_cache();
    ASSERT_TRUE(w);
    key = put(*w, 1);
  }
  const std::string parent = root_ + "/locked";
  ASSERT_EQ(::mkdir(parent.c_str(), 0500), 0);
  std::vector<std::string> dirs;
  walk(dir_, [&](const std::string &p, const struct stat &st) {
    if (S_ISDIR(st.st_mode)) dirs.push_back(p);
  });
  if (::geteuid() == 0) {
    // Root writes through permission bits: run the checks as nobody, who owns
    // the cache (so it passes the ownership check) but cannot write it.
    ASSERT_EQ(::chmod(root_.c_str(), 0755), 0);
    walk(dir_, [](const std::string &p, const struct stat &) { ASSERT_EQ(::lchown(p.c_str(), kNobody, kNobody), 0); });
    for (const auto &d : dirs) ASSERT_EQ(::chmod(d.c_str(), 0500), 0);
    const int code = run_in_child([&] {
      if (!drop_to_nobody()) return 100;
      return unwritable_checks(options(), key, parent);
    });
    EXPECT_EQ(code, 0) << "failed check " << code << " (100 = could not switch to uid 65534)";
    EXPECT_TRUE(temp_files(dir_).empty());
    EXPECT_EQ(entry_files(dir_).size(), 1u);
  } else {
    for (const auto &d : dirs) ASSERT_EQ(::chmod(d.c_str(), 0500), 0);
    EXPECT_EQ(unwritable_checks(options(), key, parent), 0);
    EXPECT_EQ(entry_files(dir_).size(), 1u);
  }
}

TEST_F(DiskCacheTest, FullDiskDegrades) {
  { ASSERT_TRUE(open_cache()); }
  // RLIMIT_FSIZE makes write() fail with EFBIG past the limit, as a full disk
  // fails with ENOSPC: a real short write, in a child so the limit stays there.
  const int code = run_in_child([&] {
    ::signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim = {16 * 1024, 16 * 1024};
    if (::setrlimit(RLIMIT_FSIZE, &lim) != 0) return 100;
    auto opened = DiskCache::open(options());
    if (!opened.ok()) return 1;
    DiskCache &cache = **opened;
    const KernelBinary kb = make_binary(contract_key_for(1), "tc-1", 256 * 1024);
    const std::string key = cache_key(kb.key, kb.toolchain);
    Status s = cache.put(key, kb);
    if (s.ok()) return 2;
    if (s.code() != StatusCode::kIoError || s.message().find("write failed") == std::string::npos) return 3;
    bool hit = true;
    auto got = cache.get_or_compile(key, kb.key, kb.toolchain, [&]() -> StatusOr<KernelBinary> { return kb; }, &hit);
    if (!got.ok() || hit || got->code != kb.code) return 4;
    return 0;
  });
  EXPECT_EQ(code, 0) << "failed check " << code;
  EXPECT_TRUE(entry_files(dir_).empty());
  EXPECT_TRUE(temp_files(dir_).empty()) << "a failed write left its temporary file";
}

// ---- security -----------------------------------------------------------------------------------------

TEST_F(DiskCacheTest, RefusesGroupOrWorldWritableDirectory) {
  ASSERT_EQ(::mkdir(dir_.c_str(), 0700), 0);
  for (mode_t mode : {0777, 0770, 0702}) {
    ASSERT_EQ(::chmod(dir_.c_str(), mode), 0);
    for (bool ro : {false, true}) {
      auto c = DiskCache::open(options(ro));
      ASSERT_FALSE(c.ok()) << "mode " << std::oct << mode;
      EXPECT_EQ(c.status().code(), StatusCode::kPermissionDenied);
      EXPECT_NE(c.status().message().find(dir_), std::string::npos) << c.status().message();
      EXPECT_NE(c.status().message().find("writable"), std::string::npos) << c.status().message();
    }
  }
  EXPECT_FALSE(exists(dir_ + "/v1")) << "wrote into a refused directory";
  // The layout directory below is checked as well.
  ASSERT_EQ(::chmod(dir_.c_str(), 0700), 0);
  { ASSERT_TRUE(open_cache()); }
  ASSERT_EQ(::chmod((dir_ + "/v1").c_str(), 0777), 0);
  auto c = DiskCache::open(options());
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(c.status().message().find("0777"), std::string::npos) << c.status().message();
}

TEST_F(DiskCacheTest, RefusesDirectoryOwnedByAnotherUser) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to chown a directory to another user";
  ASSERT_EQ(::mkdir(dir_.c_str(), 0700), 0);
  ASSERT_EQ(::chown(dir_.c_str(), kNobody, kNobody), 0);
  auto c = DiskCache::open(options());
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(c.status().message().find("uid 65534"), std::string::npos) << c.status().message();
}

TEST_F(DiskCacheTest, RefusesEntryOwnedByAnotherUser) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to chown an entry to another user";
  auto cache = open_cache();
  ASSERT_TRUE(cache);
  const std::string key = put(*cache, 1);
  const std::string path = cache->entry_path(key);
  ASSERT_EQ(::chown(path.c_str(), kNobody, kNobody), 0);
  auto got = cache->get(key, contract_key_for(1), "tc-1");
  ASSERT_FALSE(got.ok()) << "loaded an entry owned by another user";
  EXPECT_EQ(got.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(got.status().message().find("uid 65534"), std::string::npos) << got.status().message();
  EXPECT_NE(got.status().message().find(path), std::string::npos);
  // get_or_compile does not load it either: it compiles and replaces it with our own.
  int compiles = 0;
  auto kb = cache->get_or_compile(key, contract_key_for(1), "tc-1", [&]() -> StatusOr<KernelBinary> {
    ++compiles;
    return make_binary(contract_key_for(1), "tc-1", 512, 1);
  });
  ASSERT_TRUE(kb.ok());
  EXPECT_EQ(compiles, 1);
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, ::geteuid());
}

TEST_F(DiskCacheTest, RefusesWritableOrSymlinkedEntry) {
  auto cache = open_cache();
  ASSERT_TRUE(cache);
  const std::string key = put(*cache, 1);
  const std::string path = cache->entry_path(key);
  ASSERT_EQ(::chmod(path.c_str(), 0622), 0);
  auto got = cache->get(key, contract_key_for(1), "tc-1");
  EXPECT_EQ(got.status().code(), StatusCode::kPermissionDenied) << got.status().to_string();
  EXPECT_NE(got.status().message().find("0622"), std::string::npos) << got.status().message();

  // A symlink in place of the entry, pointing at a perfectly valid blob.
  const std::string elsewhere = root_ + "/elsewhere.gjk";
  ASSERT_EQ(::rename(path.c_str(), elsewhere.c_str()), 0);
  ASSERT_EQ(::chmod(elsewhere.c_str(), 0600), 0);
  ASSERT_EQ(::symlink(elsewhere.c_str(), path.c_str()), 0);
  got = cache->get(key, contract_key_for(1), "tc-1");
  EXPECT_EQ(got.status().code(), StatusCode::kPermissionDenied) << got.status().to_string();
  EXPECT_NE(got.status().message().find("symbolic link"), std::string::npos) << got.status().message();
}

// ---- eviction ----------------------------------------------------------------------------------------

TEST_F(DiskCacheTest, LruEvictionKeepsRecentlyUsedEntries) {
  const uint64_t entry = encode_kernel_binary(make_binary(contract_key_for(0), "tc-1")).size();
  // Room for three entries, not four.
  auto cache = open_cache(false, 3 * entry + entry / 2);
  ASSERT_TRUE(cache);
  const std::string a = put(*cache, 1), b = put(*cache, 2), c = put(*cache, 3);
  ASSERT_EQ(entry_files(dir_).size(), 3u);
  const time_t now = ::time(nullptr);
  set_mtime(cache->entry_path(a), now - 300);  // oldest write...
  set_mtime(cache->entry_path(b), now - 200);
  set_mtime(cache->entry_path(c), now - 100);
  ASSERT_TRUE(cache->get(a, contract_key_for(1), "tc-1").ok());  // ...but just used

  const std::string d = put(*cache, 4);
  EXPECT_TRUE(exists(cache->entry_path(a))) << "a recently hit entry was evicted";
  EXPECT_FALSE(exists(cache->entry_path(b))) << "the least recently used entry survived";
  EXPECT_TRUE(exists(cache->entry_path(c)));
  EXPECT_TRUE(exists(cache->entry_path(d)));

  set_mtime(cache->entry_path(d), now - 50);
  const std::string e = put(*cache, 5);
  EXPECT_FALSE(exists(cache->entry_path(c)));
  EXPECT_TRUE(exists(cache->entry_path(a)));
  EXPECT_TRUE(exists(cache->entry_path(d)));
  EXPECT_TRUE(exists(cache->entry_path(e)));
  const CacheStats s = cache->stats();
  EXPECT_EQ(s.evictions, 2u);
  EXPECT_EQ(s.entries, 3u);
  EXPECT_LE(s.bytes, 3 * entry + entry / 2);
}

TEST_F(DiskCacheTest, EntryLargerThanTheCapIsRefused) {
  auto cache = open_cache(false, 1024);
  ASSERT_TRUE(cache);
  const KernelBinary kb = make_binary(contract_key_for(1), "tc-1", 4096);
  Status s = cache->put(cache_key(kb.key, kb.toolchain), kb);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("GATEJIT_CACHE_MAX_BYTES"), std::string::npos) << s.message();
  EXPECT_TRUE(entry_files(dir_).empty());
}

// ---- stats, list, verify, clear ---------------------------------------------------------------------

TEST_F(DiskCacheTest, StatsAreCountedAndPersist) {
  {
    auto cache = open_cache();
    ASSERT_TRUE(cache);
    const std::string key = cache_key(contract_key_for(1), "tc-1");
    EXPECT_FALSE(cache->get(key, contract_key_for(1), "tc-1").ok());  // miss
    put(*cache, 1);                                                   // write
    EXPECT_TRUE(cache->get(key, contract_key_for(1), "tc-1").ok());   // hit
    EXPECT_TRUE(cache->get(key, contract_key_for(1), "tc-1").ok());   // hit
    bool hit = false;
    auto kb = cache->get_or_compile(
        cache_key(contract_key_for(2), "tc-1"), contract_key_for(2), "tc-1",
        [] { return StatusOr<KernelBinary>(make_binary(contract_key_for(2), "tc-1")); }, &hit);
    ASSERT_TRUE(kb.ok());  // miss + compile + write
    EXPECT_FALSE(hit);
  }
  auto cache = open_cache();  // a new instance reads the same counters
  ASSERT_TRUE(cache);
  const CacheStats s = cache->stats();
  EXPECT_EQ(s.hits, 2u);
  EXPECT_EQ(s.misses, 2u);
  EXPECT_EQ(s.writes, 2u);
  EXPECT_EQ(s.compiles, 1u);
  EXPECT_EQ(s.evictions, 0u);
  EXPECT_EQ(s.corrupt_removed, 0u);
  EXPECT_EQ(s.entries, 2u);
  EXPECT_EQ(s.bytes, read_all(entry_files(dir_)[0]).size() + read_all(entry_files(dir_)[1]).size());
  EXPECT_EQ(s.dir, dir_);
  const std::string text = format_stats(s);
  EXPECT_NE(text.find("hits             2 (50.0% of lookups)"), std::string::npos) << text;
  EXPECT_NE(text.find(dir_), std::string::npos) << text;
}

TEST_F(DiskCacheTest, ListVerifyAndClear) {
  auto cache = open_cache();
  ASSERT_TRUE(cache);
  const std::string good = put(*cache, 1);
  const std::string bad = put(*cache, 2);
  const std::string bad_path = cache->entry_path(bad);
  ASSERT_EQ(::truncate(bad_path.c_str(), 10), 0);
  // A temporary file from a writer that died long ago.
  const std::string orphan = cache->entry_path(good) + ".tmp.1.2.3";
  write_all(orphan, {1, 2, 3});
  set_mtime(orphan, ::time(nullptr) - 7200);

  auto entries = cache->list();
  ASSERT_TRUE(entries.ok());
  ASSERT_EQ(entries->size(), 2u);
  for (const auto &e : *entries) {
    if (e.key == good) {
      EXPECT_TRUE(e.problem.empty()) << e.problem;
      EXPECT_EQ(e.contract_text, make_binary(contract_key_for(1), "tc-1").contract_text);
      EXPECT_EQ(e.target, "gfx950");
      EXPECT_EQ(e.toolchain, "tc-1");
      EXPECT_GT(e.size_bytes, 0u);
    } else {
      EXPECT_EQ(e.key, bad);
      EXPECT_FALSE(e.problem.empty());
    }
  }

  auto report = cache->verify();
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->checked, 2u);
  EXPECT_EQ(report->ok, 1u);
  EXPECT_EQ(report->removed, 1u);       // the bad entry
  EXPECT_EQ(report->temp_removed, 1u);  // the orphan: routine cleaning, not a problem
  EXPECT_EQ(report->exit_code(), 1);
  ASSERT_EQ(report->problems.size(), 1u);
  EXPECT_NE(report->problems[0].find(bad_path), std::string::npos) << report->problems[0];
  EXPECT_FALSE(exists(bad_path));
  EXPECT_FALSE(exists(orphan));
  EXPECT_TRUE(exists(cache->entry_path(good)));

  ASSERT_TRUE(cache->clear().ok());
  EXPECT_TRUE(entry_files(dir_).empty());
  EXPECT_EQ(cache->stats().entries, 0u);
  EXPECT_EQ(cache->stats().bytes, 0u);
}

// ---- configuration ----------------------------------------------------------------------------------

TEST(DiskCacheEnv, DefaultDirPrecedence) {
  ScopedEnv dir("GATEJIT_CACHE_DIR"), xdg("XDG_CACHE_HOME"), home("HOME");
  dir.set("/a/explicit");
  xdg.set("/b/xdg");
  home.set("/c/home");
  EXPECT_EQ(DiskCache::default_dir(), "/a/explicit");
  dir.set("");  // empty counts as unset
  EXPECT_EQ(DiskCache::default_dir(), "/b/xdg/gatejit");
  dir.unset();
  EXPECT_EQ(DiskCache::default_dir(), "/b/xdg/gatejit");
  xdg.set("relative/xdg");  // ignored, as the XDG spec says
  EXPECT_EQ(DiskCache::default_dir(), "/c/home/.cache/gatejit");
  xdg.unset();
  EXPECT_EQ(DiskCache::default_dir(), "/c/home/.cache/gatejit");
  home.unset();
  EXPECT_EQ(DiskCache::default_dir(), "");
  // With no directory at all, open() says so instead of guessing.
  auto c = DiskCache::open(DiskCacheOptions{});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("HOME"), std::string::npos) << c.status().message();
}

TEST(DiskCacheEnv, OptionsFromEnv) {
  ScopedEnv dir("GATEJIT_CACHE_DIR"), ro("GATEJIT_CACHE_READONLY"), max("GATEJIT_CACHE_MAX_BYTES");
  dir.set("/x/cache");
  ro.unset();
  max.unset();
  auto o = options_from_env();
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->dir, "/x/cache");
  EXPECT_FALSE(o->read_only);
  EXPECT_EQ(o->max_bytes, uint64_t(1) << 30);

  ro.set("1");
  max.set("512M");
  o = options_from_env();
  ASSERT_TRUE(o.ok());
  EXPECT_TRUE(o->read_only);
  EXPECT_EQ(o->max_bytes, uint64_t(512) << 20);
  max.set("12345");
  EXPECT_EQ(options_from_env()->max_bytes, 12345u);

  max.set("lots");
  o = options_from_env();
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(o.status().message().find("GATEJIT_CACHE_MAX_BYTES"), std::string::npos);
  max.set("99999999999999999999G");
  EXPECT_FALSE(options_from_env().ok());
  max.unset();
  ro.set("maybe");
  EXPECT_FALSE(options_from_env().ok());
  ro.set("TRUE");  // the spellings of gatejit/env_flag.h, in any case
  EXPECT_TRUE(options_from_env()->read_only);
  ro.set("Off");
  EXPECT_FALSE(options_from_env()->read_only);
}

// ---- issue 19, point 7: maintenance beside live writers ----------------------------------------

// A temporary file as a live writer holds it (locked), and one a killed
// writer left (unlocked); both older than the grace period.
struct TempFiles {
  std::optional<TempFile> live;
  std::string live_path, dead_path;
};

TempFiles make_temp_files(DiskCache &cache, const std::string &key, size_t dead_bytes = 3) {
  TempFiles t;
  const std::string entry = cache.entry_path(key);
  const std::string shard = entry.substr(0, entry.rfind('/'));
  ::mkdir(shard.c_str(), 0700);
  const int shard_fd = ::open(shard.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);  // kept for the test's life
  auto live = TempFile::create(shard_fd, key + ".gjk", 0600, entry);
  EXPECT_TRUE(live.ok()) << live.status().message();
  t.live_path = shard + "/" + live->name();
  t.live.emplace(std::move(*live));
  set_mtime(t.live_path, ::time(nullptr) - 2 * kTempGraceSeconds);
  t.dead_path = entry + ".tmp.999999.1.abc";
  write_all(t.dead_path, std::vector<uint8_t>(dead_bytes, 1));
  set_mtime(t.dead_path, ::time(nullptr) - 2 * kTempGraceSeconds);
  return t;
}

TEST_F(DiskCacheTest, ClearAndVerifyLeaveALiveWritersTemporaryFile) {
  auto cache = open_cache();
  ASSERT_TRUE(cache);
  const std::string key = put(*cache, 1);
  TempFiles t = make_temp_files(*cache, cache_key(contract_key_for(2), "tc-1"));

  auto report = cache->verify();
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(exists(t.live_path)) << "verify removed a live writer's temporary file";
  EXPECT_FALSE(exists(t.dead_path));
  EXPECT_EQ(report->temp_removed, 1u);
  EXPECT_EQ(report->exit_code(), 0);  // cleaning a dead writer's file is routine

  write_all(t.dead_path, {1, 2, 3});
  set_mtime(t.dead_path, ::time(nullptr) - 2 * kTempGraceSeconds);
  ASSERT_TRUE(cache->clear().ok());
  EXPECT_TRUE(exists(t.live_path)) << "clear removed a live writer's temporary file";
  EXPECT_FALSE(exists(t.dead_path));
  EXPECT_FALSE(exists(cache->entry_path(key)));
  // The writer finishes: its entry lands.
  ASSERT_TRUE(t.live->commit().ok());
  EXPECT_TRUE(exists(cache->entry_path(cache_key(contract_key_for(2), "tc-1"))));
}

TEST_F(DiskCacheTest, VerifyExitCodes) {
  auto cache = open_cache();
  ASSERT_TRUE(cache);
  put(*cache, 1);
  const std::string bad = put(*cache, 2);
  auto clean = cache->verify();
  ASSERT_TRUE(clean.ok());
  EXPECT_EQ(clean->exit_code(), 0);

  ASSERT_EQ(::truncate(cache->entry_path(bad).c_str(), 10), 0);
  auto ro = open_cache(/*read_only=*/true);
  ASSERT_TRUE(ro);
  auto unrepaired = ro->verify();
  ASSERT_TRUE(unrepaired.ok());
  EXPECT_EQ(unrepaired->exit_code(), 2);  // read-only: found, not removed
  EXPECT_EQ(unrepaired->unrepaired, 1u);
  EXPECT_TRUE(exists(cache->entry_path(bad)));

  auto repaired = cache->verify();
  ASSERT_TRUE(repaired.ok());
  EXPECT_EQ(repaired->exit_code(), 1);
  EXPECT_FALSE(exists(cache->entry_path(bad)));
  auto again = cache->verify();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->exit_code(), 0);
}

TEST_F(DiskCacheTest, TemporaryFilesCountTowardTheCapAndDeadOnesGoOnTheNextWrite) {
  const size_t entry_bytes = encode_kernel_binary(make_binary(contract_key_for(1), "tc-1")).size();
  // Room for three entries.
  auto cache = open_cache(false, 3 * entry_bytes + entry_bytes / 2);
  ASSERT_TRUE(cache);
  put(*cache, 1);
  put(*cache, 2);
  // A live writer's file about to become an entry, and a big dead one.
  TempFiles t = make_temp_files(*cache, cache_key(contract_key_for(9), "tc-1"), 10 * entry_bytes);
  ASSERT_TRUE(t.live->write_all(encode_kernel_binary(make_binary(contract_key_for(9), "tc-1"))).ok());
  put(*cache, 3);
  EXPECT_FALSE(exists(t.dead_path)) << "the next writer leaves a dead writer's file behind";
  EXPECT_TRUE(exists(t.live_path));
  // Entries 1..3 plus the live file are over the cap: the oldest entry went.
  EXPECT_EQ(cache->stats().entries, 2u);
  EXPECT_EQ(cache->stats().evictions, 1u);
}

TEST_F(DiskCacheTest, GetOrCompileSaysWhetherItStored) {
  auto cache = open_cache(false, 64);  // smaller than any entry
  ASSERT_TRUE(cache);
  const KernelBinary kb = make_binary(contract_key_for(1), "tc-1");
  bool hit = true;
  Status stored;
  auto got = cache->get_or_compile(cache_key(kb.key, kb.toolchain), kb.key, kb.toolchain,
                                   [&]() -> StatusOr<KernelBinary> { return kb; }, &hit, &stored);
  ASSERT_TRUE(got.ok());
  EXPECT_FALSE(hit);
  EXPECT_FALSE(stored.ok());
  EXPECT_NE(stored.message().find("more than the cache limit of 64 bytes"), std::string::npos) << stored.message();

  auto roomy = open_cache();
  ASSERT_TRUE(roomy);
  got = roomy->get_or_compile(cache_key(kb.key, kb.toolchain), kb.key, kb.toolchain,
                              [&]() -> StatusOr<KernelBinary> { return kb; }, &hit, &stored);
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(stored.ok()) << stored.message();
}

TEST_F(DiskCacheTest, OpeningWithoutCreateLeavesAMissingDirectoryMissing) {
  DiskCacheOptions o = options();
  o.dir = root_ + "/not/there";
  o.create = false;
  auto c = DiskCache::open(o);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(exists(root_ + "/not"));
}

// ---- issue 45: what verify must see, what must never block -------------------------------------

using testing_support::exit_code_within;
using testing_support::kChildTimedOut;

bool has(const std::string &text, const std::string &needle) { return text.find(needle) != std::string::npos; }

// The problem line of a verify report that names `path`, or "".
std::string problem_naming(const VerifyReport &r, const std::string &path) {
  for (const std::string &p : r.problems)
    if (has(p, path + ":")) return p;
  return "";
}

// A FIFO where the toolchain record goes must not block a reader or a writer
// of the record (every compile records its toolchain; a runtime without the
// compiler reads it on every lookup).
TEST_F(DiskCacheTest, AFifoToolchainRecordNeitherBlocksAReaderNorAWriter) {
  auto cache = open_cache();
  ASSERT_TRUE(cache);
  put(*cache, 1);
  const std::string record = toolchain_record_path(*cache);
  ASSERT_EQ(::mkfifo(record.c_str(), 0600), 0);
  const int read_rc = exit_code_within(10, [&] {
    auto read = recorded_toolchain(*cache);
    return !read.ok() && has(read.status().message(), record + ": is a FIFO") ? 0 : 1;
  });
  EXPECT_EQ(read_rc, 0) << (read_rc == kChildTimedOut ? "reading the record hung" : "no error naming the FIFO");
  // Recording puts a regular file in the FIFO's place (the directory is ours).
  const int write_rc = exit_code_within(10, [&] {
    if (!record_toolchain(*cache, "tc-1").ok()) return 1;
    auto read = recorded_toolchain(*cache);
    return read.ok() && *read == "tc-1" ? 0 : 2;
  });
  EXPECT_EQ(write_rc, 0) << (write_rc == kChildTimedOut ? "recording hung" : "recording failed");
}

// The cache's own files (the toolchain record, the counters, lock files) when
// they are not regular files: verify reports each, removes it (read-only:
// leaves it, exit 2), and clear removes them too.
TEST_F(DiskCacheTest, VerifyReportsAndRemovesNonRegularFilesAndClearRemovesThem) {
  auto cache = open_cache();
  ASSERT_TRUE(cache);
  const std::string key = put(*cache, 1);
  const std::string v1 = dir_ + "/v1";
  const std::vector<std::string> planted = {v1 + "/toolchain", v1 + "/stats", v1 + "/locks/" + key + ".lock"};
  const auto plant = [&] {
    for (const std::string &p : planted) {
      ::unlink(p.c_str());
      ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0) << p;
    }
  };
  plant();
  auto ro = open_cache(/*read_only=*/true);
  ASSERT_TRUE(ro);
  const int ro_rc = exit_code_within(20, [&] {
    auto r = ro->verify();
    if (!r.ok() || r->exit_code() != 2 || r->unrepaired != planted.size()) return 1;
    for (const std::string &p : planted)
      if (!has(problem_naming(*r, p), "is a FIFO")) return 2;
    return 0;
  });
  EXPECT_EQ(ro_rc, 0) << (ro_rc == kChildTimedOut ? "verify hung" : "read-only verify did not report every FIFO");
  for (const std::string &p : planted) EXPECT_TRUE(exists(p)) << "read-only verify removed " << p;

  auto report = cache->verify();
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->exit_code(), 1);
  EXPECT_EQ(report->ok, 1u);
  for (const std::string &p : planted) {
    EXPECT_TRUE(has(problem_naming(*report, p), "is a FIFO")) << p;
    EXPECT_FALSE(exists(p)) << p;
  }
  EXPECT_TRUE(exists(cache->entry_path(key)));
  auto clean = cache->verify();
  ASSERT_TRUE(clean.ok());
  EXPECT_EQ(clean->exit_code(), 0);

  plant();
  ASSERT_TRUE(cache->clear().ok());
  for (const std::string &p : planted) EXPECT_FALSE(exists(p)) << "clear left " << p;
}

// An entry that passes its checksum but whose report is not a JSON object
// (the tool prints every report it serves) is a miss that is rebuilt over,
// never a hit that fails forever; verify calls it bad.
TEST_F(DiskCacheTest, AnEntryWithAnUnusableReportIsRebuiltAndVerifyCallsItBad) {
  auto cache = open_cache();
  ASSERT_TRUE(cache);
  const std::string key = put(*cache, 1);
  const KernelBinary good = make_binary(contract_key_for(1), "tc-1", 512, 1);
  for (const char *report : {"not json {", "[1, 2]", "null", ""}) {
    SCOPED_TRACE(report);
    KernelBinary bad = good;
    bad.report_json = report;
    write_all(cache->entry_path(key), encode_kernel_binary(bad));
    auto listed = cache->list();
    ASSERT_TRUE(listed.ok());
    ASSERT_EQ(listed->size(), 1u);
    EXPECT_TRUE(has((*listed)[0].problem, "report")) << (*listed)[0].problem;
    auto report_of_verify = cache->verify();
    ASSERT_TRUE(report_of_verify.ok());
    EXPECT_EQ(report_of_verify->exit_code(), 1);
    EXPECT_TRUE(has(problem_naming(*report_of_verify, cache->entry_path(key)), "report"));
    EXPECT_FALSE(exists(cache->entry_path(key)));

    write_all(cache->entry_path(key), encode_kernel_binary(bad));
    int compiles = 0;
    bool hit = true;
    auto got = cache->get_or_compile(key, good.key, good.toolchain, [&]() -> StatusOr<KernelBinary> {
      ++compiles;
      return good;
    }, &hit);
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    EXPECT_FALSE(hit);
    EXPECT_EQ(compiles, 1);
    auto again = cache->get(key, good.key, good.toolchain);
    ASSERT_TRUE(again.ok()) << again.status().to_string();
    EXPECT_EQ(again->report_json, good.report_json);
  }
}

// A shard that is a symbolic link is never followed; verify says so instead
// of "checked 0": it removes the link (not what it points to), or, read-only,
// leaves it and exits 2. A shard it cannot fix (group-writable) stays
// reported, exit 2.
TEST_F(DiskCacheTest, VerifyReportsTheShardsItRefusesToLookInto) {
  auto cache = open_cache();
  ASSERT_TRUE(cache);
  const std::string key = put(*cache, 1);
  const std::string shard = dir_ + "/v1/" + key.substr(0, 2);
  const std::string elsewhere = root_ + "/elsewhere";
  ASSERT_EQ(::rename(shard.c_str(), elsewhere.c_str()), 0);
  ASSERT_EQ(::symlink(elsewhere.c_str(), shard.c_str()), 0);

  auto ro = open_cache(/*read_only=*/true);
  ASSERT_TRUE(ro);
  auto unrepaired = ro->verify();
  ASSERT_TRUE(unrepaired.ok());
  EXPECT_EQ(unrepaired->exit_code(), 2);
  EXPECT_TRUE(has(problem_naming(*unrepaired, shard), "symbolic link")) << ::testing::PrintToString(unrepaired->problems);
  EXPECT_TRUE(exists(shard));

  auto report = cache->verify();
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->exit_code(), 1);
  EXPECT_TRUE(has(problem_naming(*report, shard), "symbolic link")) << ::testing::PrintToString(report->problems);
  EXPECT_FALSE(exists(shard));
  EXPECT_TRUE(exists(elsewhere + "/" + key + ".gjk")) << "verify removed what the link pointed to";

  const std::string open_shard = dir_ + "/v1/ff";
  ASSERT_EQ(::mkdir(open_shard.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(open_shard.c_str(), 0777), 0);
  auto cannot = cache->verify();
  ASSERT_TRUE(cannot.ok());
  EXPECT_EQ(cannot->exit_code(), 2);
  EXPECT_TRUE(has(problem_naming(*cannot, open_shard), "world-writable")) << ::testing::PrintToString(cannot->problems);
}

}  // namespace
}  // namespace gatejit
