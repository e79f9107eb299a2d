#include "disk_cache.h"

#include "gatejit/env_flag.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "file_io.h"
#include "input_echo.h"
#include "input_limits.h"
#include "json_input.h"
#include "log.h"
#include "unique_fd.h"

namespace gatejit {
namespace {

constexpr const char *kLayout = "v1";
constexpr const char *kEntrySuffix = ".gjk";
constexpr const char *kLocksDir = "locks";
constexpr const char *kStatsFile = "stats";
constexpr const char *kEvictLock = "evict.lock";
constexpr const char *kToolchainFile = "toolchain";  // cache_toolchain.h
// An entry is one kernel; anything near this is damage, not a kernel.
constexpr uint64_t kMaxEntryBytes = limits::kCacheEntryBytes;

std::string errno_text(int e) { return std::strerror(e); }

bool is_cache_key(std::string_view k) {
  if (k.size() != 32) return false;
  return std::all_of(k.begin(), k.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::string mode_text(mode_t m) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", unsigned(m & 07777));
  return buf;
}

// The rule for everything gatejit loads code from: ours, and only we can write it.
Status check_owned_private(const struct stat &st, const std::string &path, const char *what) {
  if (st.st_uid != geteuid())
    return permission_denied(path + ": " + what + " is owned by uid " + std::to_string(st.st_uid) +
                             ", not by the current user (uid " + std::to_string(geteuid()) +
                             "); refusing to load kernels from it");
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return permission_denied(path + ": " + what + " has mode " + mode_text(st.st_mode) +
                             ", which is group- or world-writable; refusing to load kernels from it (chmod go-w it)");
  return Status::Ok();
}

// Why a decoded entry cannot be served, or "": the checksum proves the bytes
// are what was written, not that a writer wrote a usable entry. Every
// gatejit writer stores its compile report as a JSON object, and the tool
// prints the report of every kernel it serves, so an entry without one would
// fail every hit forever instead of being rebuilt.
std::string unusable_reason(const KernelBinary &kb) {
  auto report = parse_json_input(kb.report_json, "report");
  if (!report.ok() || !report->is_object()) return "the report is not a JSON object";
  return "";
}

// mkdir -p; only the components we create get mode 0700.
Status make_dirs(const std::string &dir) {
  for (size_t pos = 1; pos <= dir.size(); ++pos) {
    if (pos != dir.size() && dir[pos] != '/') continue;
    const std::string prefix = dir.substr(0, pos);
    struct stat st;
    if (::stat(prefix.c_str(), &st) == 0) continue;
    if (::mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST)
      return io_error(prefix + ": cannot create the cache directory: " + errno_text(errno));
  }
  return Status::Ok();
}

// Opens `name` under `parent` without following a symlink, creating it (0700)
// if asked, and checks it is a private directory of ours.
StatusOr<UniqueFd> open_private_dir(int parent, const std::string &name, const std::string &path, bool create) {
  UniqueFd fd(::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid() && errno == ENOENT && create) {
    if (::mkdirat(parent, name.c_str(), 0700) != 0 && errno != EEXIST)
      return io_error(path + ": cannot create directory: " + errno_text(errno));
    fd = UniqueFd(::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  }
  if (!fd.valid()) {
    const int e = errno;
    if (e == ENOENT) return not_found(path + ": no such directory");
    if (e == ELOOP || e == ENOTDIR)
      return permission_denied(path + ": is a symbolic link or not a directory; refusing to use it");
    return io_error(path + ": cannot open directory: " + errno_text(e));
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return io_error(path + ": fstat failed: " + errno_text(errno));
  GATEJIT_RETURN_IF_ERROR(check_owned_private(st, path, "directory"));
  return fd;
}

// Takes an exclusive flock on <dirfd>/<name>, created 0600. The lock dies
// with the process. Retries if the file was unlinked while we waited, so a
// holder never shares its key with someone who locked a fresh file.
StatusOr<UniqueFd> lock_file(int dirfd, const std::string &name, const std::string &path) {
  for (int attempt = 0; attempt < 64; ++attempt) {
    UniqueFd fd(::openat(dirfd, name.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd.valid()) return io_error(path + ": cannot open the lock file: " + errno_text(errno));
    struct stat held;
    if (::fstat(fd.get(), &held) != 0) return io_error(path + ": fstat failed: " + errno_text(errno));
    if (held.st_uid != geteuid())
      return permission_denied(path + ": lock file is owned by uid " + std::to_string(held.st_uid) +
                               ", not by the current user");
    while (::flock(fd.get(), LOCK_EX) != 0) {
      if (errno != EINTR) return io_error(path + ": flock failed: " + errno_text(errno));
    }
    struct stat now;
    if (::fstatat(dirfd, name.c_str(), &now, AT_SYMLINK_NOFOLLOW) == 0 && now.st_dev == held.st_dev &&
        now.st_ino == held.st_ino)
      return fd;
  }
  return io_error(path + ": the lock file kept being replaced; giving up on locking");
}

// Unlinks a lock file only if nobody holds it (we hold it while unlinking).
void remove_lock_file_if_idle(int dirfd, const std::string &name) {
  UniqueFd fd(::openat(dirfd, name.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return;
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) return;
  struct stat held, now;
  if (::fstat(fd.get(), &held) == 0 && ::fstatat(dirfd, name.c_str(), &now, AT_SYMLINK_NOFOLLOW) == 0 &&
      held.st_ino == now.st_ino && held.st_dev == now.st_dev)
    ::unlinkat(dirfd, name.c_str(), 0);
}

// The persistent counters, in file order.
struct CounterField {
  const char *name;
  uint64_t CacheStats::*field;
};
constexpr CounterField kCounters[] = {
    {"hits", &CacheStats::hits},         {"misses", &CacheStats::misses},
    {"writes", &CacheStats::writes},     {"compiles", &CacheStats::compiles},
    {"evictions", &CacheStats::evictions}, {"corrupt_removed", &CacheStats::corrupt_removed},
};

bool any_counter(const CacheStats &s) {
  for (const auto &c : kCounters)
    if (s.*c.field) return true;
  return false;
}

// Lenient: counters are advisory, a damaged file just restarts from zero.
void parse_counters(const std::string &text, CacheStats &out) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    const size_t sp = line.find(' ');
    if (sp == std::string::npos) continue;
    const std::string name = line.substr(0, sp);
    char *stop = nullptr;
    const unsigned long long v = std::strtoull(line.c_str() + sp + 1, &stop, 10);
    if (stop == line.c_str() + sp + 1) continue;
    for (const auto &c : kCounters)
      if (name == c.name) out.*c.field = v;
  }
}

std::string format_counters(const CacheStats &s) {
  std::string out = "gatejit-cache-stats 1\n";
  for (const auto &c : kCounters) out += std::string(c.name) + " " + std::to_string(s.*c.field) + "\n";
  return out;
}

std::string human_bytes(uint64_t b) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = double(b);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%" PRIu64 " B", b);
  else
    std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

StatusOr<uint64_t> parse_byte_count(const char *var, const std::string &v) {
  const auto bad = [&] {
    return invalid_argument(std::string(var) + "=" + quote_input(v) +
                            ": expected a byte count such as 1073741824, 512M or 2G (0 = no limit)");
  };
  size_t i = 0;
  uint64_t n = 0;
  while (i < v.size() && v[i] >= '0' && v[i] <= '9') {
    const uint64_t d = uint64_t(v[i] - '0');
    if (n > (UINT64_MAX - d) / 10) return bad();
    n = n * 10 + d;
    ++i;
  }
  if (i == 0) return bad();
  int shift = 0;
  if (i < v.size()) {
    switch (v[i]) {
      case 'k': case 'K': shift = 10; break;
      case 'm': case 'M': shift = 20; break;
      case 'g': case 'G': shift = 30; break;
      default: return bad();
    }
    ++i;
  }
  if (i != v.size()) return bad();
  if (shift && n > (UINT64_MAX >> shift)) return bad();
  return n << shift;
}

}  // namespace

struct DiskCache::Scanned {
  std::string name;      // file name inside the shard
  std::string rel_path;  // "<shard>/<name>", relative to v1
  std::string key;       // cache key; empty for a temporary file
  uint64_t size = 0;
  struct timespec mtime {};
};

// ---- free functions -------------------------------------------------------

std::string cache_key(std::string_view contract_key, std::string_view toolchain_fingerprint) {
  std::string text;
  text.reserve(contract_key.size() + 1 + toolchain_fingerprint.size());
  text.append(contract_key);
  text.push_back('\n');
  text.append(toolchain_fingerprint);
  const XXH128_hash_t h = XXH3_128bits(text.data(), text.size());
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", (unsigned long long)h.high64, (unsigned long long)h.low64);
  return buf;
}

StatusOr<DiskCacheOptions> options_from_env() {
  DiskCacheOptions o;
  o.dir = DiskCache::default_dir();
  auto read_only = env_flag("GATEJIT_CACHE_READONLY");
  if (!read_only.ok()) return read_only.status();
  o.read_only = *read_only;
  if (const char *mb = std::getenv("GATEJIT_CACHE_MAX_BYTES"); mb && *mb) {
    auto n = parse_byte_count("GATEJIT_CACHE_MAX_BYTES", mb);
    if (!n.ok()) return n.status();
    o.max_bytes = *n;
  }
  return o;
}

std::string format_stats(const CacheStats &s) {
  const uint64_t lookups = s.hits + s.misses;
  char rate[32] = "";
  if (lookups) std::snprintf(rate, sizeof rate, " (%.1f%% of lookups)", 100.0 * double(s.hits) / double(lookups));
  std::string out;
  out += "cache directory  " + escape_input(s.dir) + "\n";
  out += "entries          " + std::to_string(s.entries) + ", " + human_bytes(s.bytes) + " (limit " +
         (s.max_bytes ? human_bytes(s.max_bytes) : std::string("none")) + ")\n";
  out += "hits             " + std::to_string(s.hits) + rate + "\n";
  out += "misses           " + std::to_string(s.misses) + "\n";
  out += "compiles         " + std::to_string(s.compiles) + "\n";
  out += "writes           " + std::to_string(s.writes) + "\n";
  out += "evictions        " + std::to_string(s.evictions) + "\n";
  out += "corrupt removed  " + std::to_string(s.corrupt_removed) + "\n";
  return out;
}

// ---- DiskCache ------------------------------------------------------------

std::string DiskCache::default_dir() {
  const auto env = [](const char *name) -> std::string {
    const char *v = std::getenv(name);
    return v ? v : "";
  };
  if (std::string d = env("GATEJIT_CACHE_DIR"); !d.empty()) return d;
  // The XDG spec says to ignore a relative XDG_CACHE_HOME.
  if (std::string x = env("XDG_CACHE_HOME"); !x.empty() && x[0] == '/') return x + "/gatejit";
  if (std::string h = env("HOME"); !h.empty()) return h + "/.cache/gatejit";
  return "";
}

DiskCache::DiskCache(DiskCacheOptions options, int root_fd) : options_(std::move(options)), root_fd_(root_fd) {
  session_.dir = options_.dir;
}

DiskCache::~DiskCache() {
  if (v1_fd_ >= 0) ::close(v1_fd_);
  if (root_fd_ >= 0) ::close(root_fd_);
}

StatusOr<std::unique_ptr<DiskCache>> DiskCache::open(DiskCacheOptions options) {
  if (options.dir.empty())
    return invalid_argument("no kernel cache directory: set GATEJIT_CACHE_DIR, XDG_CACHE_HOME or HOME");
  while (options.dir.size() > 1 && options.dir.back() == '/') options.dir.pop_back();
  const std::string &dir = options.dir;
  if (dir.size() > limits::kEnvValueBytes)
    return invalid_argument("kernel cache directory " + escape_input(dir, 64) + ": longer than " +
                            std::to_string(limits::kEnvValueBytes) + " bytes");
  const bool create = !options.read_only && options.create;
  if (create) GATEJIT_RETURN_IF_ERROR(make_dirs(dir));
  // The root may be a symlink (e.g. ~/.cache on another disk); what it
  // resolves to is checked. Below it nothing is followed.
  UniqueFd root(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root.valid()) {
    const int e = errno;
    if (e == ENOENT)
      return not_found(escape_input(dir) + ": the kernel cache directory does not exist" +
                       std::string(options.read_only ? " (a read-only cache is never created)" : ""));
    return io_error(escape_input(dir) + ": cannot open the kernel cache directory: " + errno_text(e));
  }
  struct stat st;
  if (::fstat(root.get(), &st) != 0) return io_error(dir + ": fstat failed: " + errno_text(errno));
  GATEJIT_RETURN_IF_ERROR(check_owned_private(st, dir, "kernel cache directory"));

  std::unique_ptr<DiskCache> cache(new DiskCache(std::move(options), root.release()));
  const std::string v1_path = cache->options_.dir + "/" + kLayout;
  auto v1 = open_private_dir(cache->root_fd_, kLayout, v1_path, create);
  if (v1.ok()) {
    if (create) {
      auto locks = open_private_dir(v1->get(), kLocksDir, v1_path + "/" + kLocksDir, true);
      if (!locks.ok()) return locks.status();
    }
    cache->v1_fd_ = v1->release();
  } else if (create || v1.status().code() != StatusCode::kNotFound) {
    return v1.status();
  }
  return cache;
}

std::string DiskCache::entry_path(const std::string &key) const {
  return options_.dir + "/" + kLayout + "/" + key.substr(0, 2) + "/" + key + kEntrySuffix;
}

int DiskCache::v1_fd() const {
  std::lock_guard<std::mutex> lock(mu_);
  // A read-only cache may have been opened before any writer created v1.
  if (v1_fd_ < 0) {
    auto v1 = open_private_dir(root_fd_, kLayout, options_.dir + "/" + kLayout, false);
    if (v1.ok()) v1_fd_ = v1->release();
  }
  return v1_fd_;
}

StatusOr<KernelBinary> DiskCache::lookup(const std::string &key, const std::string &contract_key,
                                         const std::string &toolchain, bool touch, CacheStats &delta) {
  if (!is_cache_key(key)) return invalid_argument("cache key '" + key + "' is not 32 lowercase hex digits");
  const std::string path = entry_path(key);
  const int v1 = v1_fd();
  if (v1 < 0) return not_found(path + ": not in the cache");
  const std::string shard_name = key.substr(0, 2);
  auto shard = open_private_dir(v1, shard_name, options_.dir + "/" + kLayout + "/" + shard_name, false);
  if (!shard.ok()) {
    if (shard.status().code() == StatusCode::kNotFound) return not_found(path + ": not in the cache");
    return shard.status();
  }
  const std::string name = key + kEntrySuffix;
  // O_NONBLOCK: a FIFO planted here must not hang us; it fails S_ISREG below.
  UniqueFd fd(::openat(shard->get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) {
    const int e = errno;
    if (e == ENOENT) return not_found(path + ": not in the cache");
    if (e == ELOOP) return permission_denied(path + ": is a symbolic link; refusing to load it");
    return io_error(path + ": cannot open: " + errno_text(e));
  }
  // Checks and reads go through the same descriptor: no window to swap the file.
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return io_error(path + ": fstat failed: " + errno_text(errno));
  if (!S_ISREG(st.st_mode)) return permission_denied(path + ": not a regular file; refusing to load it");
  GATEJIT_RETURN_IF_ERROR(check_owned_private(st, path, "cache entry"));

  std::string problem;
  StatusOr<KernelBinary> kb = internal_error("unset");
  if (uint64_t(st.st_size) > kMaxEntryBytes) {
    problem = std::to_string(st.st_size) + " bytes is larger than any kernel entry";
  } else {
    auto bytes = read_bounded(fd.get(), kMaxEntryBytes, path);
    if (!bytes.ok()) return bytes.status();
    kb = decode_kernel_binary(*bytes);
    if (!kb.ok()) {
      problem = kb.status().message();
    } else if (kb->key != contract_key || kb->toolchain != toolchain) {
      problem = "stale entry: built for contract key " + kb->key + " with toolchain '" + kb->toolchain +
                "', asked for " + contract_key + " with '" + toolchain + "'";
    } else {
      problem = unusable_reason(*kb);
    }
  }
  if (problem.empty()) {
    // LRU: the mtime is the last use. Failure only makes eviction less exact.
    if (touch && !options_.read_only) ::futimens(fd.get(), nullptr);
    return kb;
  }
  if (options_.read_only) {
    log::warn_once(path + ": " + problem + "; ignored (read-only cache, not removed)");
    return not_found(path + ": " + problem + " (read-only cache: left in place)");
  }
  // Remove only the file we read: a writer may have renamed a good one in since.
  struct stat now;
  bool removed = false;
  if (::fstatat(shard->get(), name.c_str(), &now, AT_SYMLINK_NOFOLLOW) == 0 && now.st_ino == st.st_ino &&
      now.st_dev == st.st_dev)
    removed = ::unlinkat(shard->get(), name.c_str(), 0) == 0;
  if (removed) ++delta.corrupt_removed;
  log::warn_once(path + ": " + problem + (removed ? "; removed, it will be rebuilt" : ""));
  return not_found(path + ": " + problem + (removed ? "; removed" : ""));
}

StatusOr<KernelBinary> DiskCache::get(const std::string &key, const std::string &contract_key,
                                      const std::string &toolchain) {
  CacheStats delta;
  auto r = lookup(key, contract_key, toolchain, /*touch=*/true, delta);
  if (r.ok())
    ++delta.hits;
  else if (r.status().code() != StatusCode::kInvalidArgument)
    ++delta.misses;
  record(delta);
  return r;
}

Status DiskCache::write_entry(const std::string &key, const KernelBinary &kb, CacheStats &delta) {
  const std::string path = entry_path(key);
  if (options_.read_only)
    return permission_denied(options_.dir + ": the kernel cache is read-only (GATEJIT_CACHE_READONLY); not writing " +
                             path);
  if (!is_cache_key(key)) return invalid_argument("cache key '" + key + "' is not 32 lowercase hex digits");
  if (cache_key(kb.key, kb.toolchain) != key)
    return invalid_argument("cache key " + key + " is not cache_key(" + kb.key + ", toolchain of the binary); " +
                            "such an entry could never be found again");
  if (std::string why = unusable_reason(kb); !why.empty())
    return invalid_argument(path + ": " + why + "; such an entry would never be served");
  const std::vector<uint8_t> bytes = encode_kernel_binary(kb);
  if (options_.max_bytes && bytes.size() > options_.max_bytes)
    return unsupported(path + ": the entry is " + std::to_string(bytes.size()) +
                       " bytes, more than the cache limit of " + std::to_string(options_.max_bytes) +
                       " bytes (GATEJIT_CACHE_MAX_BYTES)");
  const int v1 = v1_fd();
  if (v1 < 0) return internal_error(options_.dir + ": cache layout directory is not open");
  const std::string shard_name = key.substr(0, 2);
  auto shard = open_private_dir(v1, shard_name, options_.dir + "/" + kLayout + "/" + shard_name, true);
  if (!shard.ok()) return shard.status();

  // A private temporary file, flushed, renamed over the entry: readers see
  // the old entry or the new one, never a partial one. Its lock tells
  // `clear` and `verify` that a writer is alive.
  auto tmp = TempFile::create(shard->get(), key + kEntrySuffix, 0600, path);
  if (!tmp.ok()) return tmp.status();
  GATEJIT_RETURN_IF_ERROR(tmp->write_all(bytes));
  GATEJIT_RETURN_IF_ERROR(tmp->commit());
  ++delta.writes;
  return Status::Ok();
}

Status DiskCache::put(const std::string &key, const KernelBinary &kb) {
  CacheStats delta;
  Status s = write_entry(key, kb, delta);
  if (s.ok()) evict(key, delta);
  record(delta);
  return s;
}

std::vector<DiskCache::Scanned> DiskCache::scan(std::vector<RefusedShard> *refused) const {
  std::vector<Scanned> out;
  const int v1 = v1_fd();
  if (v1 < 0) return out;
  // A fresh descriptor: readdir position must not be shared with v1_fd_.
  DIR *top = open_dir_stream(v1, ".");
  if (!top) return out;
  while (struct dirent *d = ::readdir(top)) {
    const std::string shard = d->d_name;
    if (shard.size() != 2 || !std::isxdigit((unsigned char)shard[0]) || !std::isxdigit((unsigned char)shard[1]))
      continue;
    DIR *sd = open_dir_stream(v1, shard.c_str(), O_NOFOLLOW);
    if (!sd) {
      // Writers refuse such a shard too (open_private_dir), so its entries
      // could never be read or replaced: say so rather than skip it quietly.
      const int open_errno = errno;
      struct stat st;
      if (refused && ::fstatat(v1, shard.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
        const std::string path = options_.dir + "/" + kLayout + "/" + shard;
        if (S_ISLNK(st.st_mode))
          refused->push_back({shard, path + ": is a symbolic link; not followed", true});
        else if (!S_ISDIR(st.st_mode))
          refused->push_back({shard, path + ": is " + file_type_name(st.st_mode) + ", not a folder", true});
        else
          refused->push_back({shard, path + ": cannot be opened: " + errno_text(open_errno), false});
      }
      continue;
    }
    if (struct stat st; refused && ::fstat(::dirfd(sd), &st) == 0) {
      if (Status s = check_owned_private(st, options_.dir + "/" + kLayout + "/" + shard, "shard"); !s.ok())
        refused->push_back({shard, s.message(), false});
    }
    while (struct dirent *e = ::readdir(sd)) {
      const std::string name = e->d_name;
      Scanned s;
      const size_t tmp_pos = name.find(std::string(kEntrySuffix) + ".tmp.");
      if (tmp_pos != std::string::npos) {
        // a writer's temporary file: key stays empty
      } else if (name.size() == 32 + std::strlen(kEntrySuffix) && name.ends_with(kEntrySuffix) &&
                 is_cache_key(name.substr(0, 32)) && name.compare(0, 2, shard) == 0) {
        s.key = name.substr(0, 32);
      } else {
        continue;
      }
      struct stat st;
      if (::fstatat(::dirfd(sd), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      s.name = name;
      s.rel_path = shard + "/" + name;
      s.size = uint64_t(st.st_size);
      s.mtime = st.st_mtim;
      out.push_back(std::move(s));
    }
    ::closedir(sd);
  }
  ::closedir(top);
  return out;
}

void DiskCache::evict(const std::string &keep_key, CacheStats &delta) {
  const int v1 = v1_fd();
  if (v1 < 0) return;
  auto locks = open_private_dir(v1, kLocksDir, options_.dir + "/" + kLayout + "/" + kLocksDir, true);
  // One evictor at a time, so two do not both cut to the cap. Without the
  // lock we still evict; the worst case is removing a little too much.
  StatusOr<UniqueFd> evict_lock = locks.ok() ? lock_file(locks->get(), kEvictLock, kEvictLock)
                                             : StatusOr<UniqueFd>(locks.status());
  std::vector<Scanned> entries = scan();
  // Temporary files of killed writers go now; those of live writers are
  // about to be entries, so they count toward the cap.
  uint64_t total = 0;
  std::erase_if(entries, [&](const Scanned &s) {
    if (!s.key.empty()) return false;
    if (remove_if_abandoned(v1, s.rel_path))
      log::debug("kernel cache: removed " + options_.dir + "/" + kLayout + "/" + s.rel_path +
                 ", the temporary file of a writer that died");
    else
      total += s.size;
    return true;
  });
  if (options_.max_bytes == 0) return;
  for (const auto &e : entries) total += e.size;
  if (total <= options_.max_bytes) return;
  std::sort(entries.begin(), entries.end(), [](const Scanned &a, const Scanned &b) {
    if (a.mtime.tv_sec != b.mtime.tv_sec) return a.mtime.tv_sec < b.mtime.tv_sec;
    if (a.mtime.tv_nsec != b.mtime.tv_nsec) return a.mtime.tv_nsec < b.mtime.tv_nsec;
    return a.key < b.key;
  });
  for (const auto &e : entries) {
    if (total <= options_.max_bytes) break;
    if (e.key == keep_key) continue;  // the entry just written is the newest use
    if (::unlinkat(v1, e.rel_path.c_str(), 0) != 0) continue;
    total -= e.size;
    ++delta.evictions;
    log::debug("kernel cache: evicted " + options_.dir + "/" + kLayout + "/" + e.rel_path);
    if (locks.ok()) remove_lock_file_if_idle(locks->get(), e.key + ".lock");
  }
}

StatusOr<KernelBinary> DiskCache::get_or_compile(const std::string &key, const std::string &contract_key,
                                                 const std::string &toolchain,
                                                 const std::function<StatusOr<KernelBinary>()> &compile, bool *hit,
                                                 Status *stored) {
  if (hit) *hit = false;
  if (stored) *stored = Status(StatusCode::kNotFound, "not compiled");
  if (!is_cache_key(key)) return invalid_argument("cache key '" + key + "' is not 32 lowercase hex digits");
  CacheStats delta;
  const auto finish_hit = [&](StatusOr<KernelBinary> kb) {
    ++delta.hits;
    record(delta);
    if (hit) *hit = true;
    return kb;
  };
  auto found = lookup(key, contract_key, toolchain, true, delta);
  if (found.ok()) return finish_hit(std::move(found));
  if (found.status().code() != StatusCode::kNotFound) log::warn_once("kernel cache: " + found.status().message());
  if (options_.read_only) {
    ++delta.misses;
    record(delta);
    return not_found(entry_path(key) + ": not in the read-only kernel cache, and a read-only cache does not compile");
  }

  // Serialise compiles of this key across processes. The lock is released by
  // the kernel if we die, so a crashed compiler never wedges the others.
  StatusOr<UniqueFd> lock = internal_error("unset");
  if (const int v1 = v1_fd(); v1 >= 0) {
    const std::string locks_path = options_.dir + "/" + kLayout + "/" + kLocksDir;
    auto locks = open_private_dir(v1, kLocksDir, locks_path, true);
    lock = locks.ok() ? lock_file(locks->get(), key + ".lock", locks_path + "/" + key + ".lock")
                      : StatusOr<UniqueFd>(locks.status());
  }
  if (lock.ok()) {
    // Whoever held the lock before us may have just written it.
    found = lookup(key, contract_key, toolchain, true, delta);
    if (found.ok()) return finish_hit(std::move(found));
  } else {
    log::warn_once("kernel cache: " + lock.status().message() + "; compiling without the cross-process lock");
  }
  ++delta.misses;
  ++delta.compiles;
  auto kb = compile();
  if (kb.ok()) {
    Status s = write_entry(key, *kb, delta);
    if (s.ok())
      evict(key, delta);
    else
      log::warn_once("kernel cache: cannot store a compiled kernel (" + s.message() +
                     "); using it without caching");
    if (stored) *stored = s;
  }
  record(delta);
  return kb;
}

void DiskCache::record(const CacheStats &delta) {
  if (!any_counter(delta)) return;
  if (options_.read_only) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto &c : kCounters) session_.*c.field += delta.*c.field;
    return;
  }
  const int v1 = v1_fd();
  if (v1 < 0) return;
  // Read-modify-write under flock, as ccache does; lost updates are impossible
  // and a crash mid-write only garbles advisory numbers.
  UniqueFd fd(::openat(v1, kStatsFile, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600));
  struct stat st;
  if (!fd.valid() || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
    log::debug("kernel cache: cannot update " + options_.dir + "/" + kLayout + "/" + kStatsFile);
    return;
  }
  while (::flock(fd.get(), LOCK_EX) != 0)
    if (errno != EINTR) return;
  auto text = read_bounded(fd.get(), 4096, "stats");
  CacheStats c;
  if (text.ok()) parse_counters(std::string(text->begin(), text->end()), c);
  for (const auto &f : kCounters) c.*f.field += delta.*f.field;
  const std::string out = format_counters(c);
  if (::pwrite(fd.get(), out.data(), out.size(), 0) == ssize_t(out.size()))
    (void)::ftruncate(fd.get(), off_t(out.size()));
}

CacheStats DiskCache::read_counters() const {
  CacheStats c;
  const int v1 = v1_fd();
  if (v1 < 0) return c;
  UniqueFd fd(::openat(v1, kStatsFile, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat st;
  if (!fd.valid() || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return c;
  while (::flock(fd.get(), LOCK_SH) != 0)
    if (errno != EINTR) return c;
  auto text = read_bounded(fd.get(), 4096, "stats");
  if (text.ok()) parse_counters(std::string(text->begin(), text->end()), c);
  return c;
}

CacheStats DiskCache::stats() const {
  CacheStats s = read_counters();
  if (options_.read_only) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto &c : kCounters) s.*c.field += session_.*c.field;
  }
  s.dir = options_.dir;
  s.max_bytes = options_.max_bytes;
  for (const auto &e : scan()) {
    if (e.key.empty()) continue;
    ++s.entries;
    s.bytes += e.size;
  }
  return s;
}

bool DiskCache::check_entry(const Scanned &e, CacheEntryInfo &info, struct stat &st) const {
  info.key = e.key;
  info.path = options_.dir + "/" + kLayout + "/" + e.rel_path;
  info.size_bytes = e.size;
  info.last_use = std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::seconds(e.mtime.tv_sec) +
                                                                     std::chrono::nanoseconds(e.mtime.tv_nsec)));
  st = {};
  auto fd = open_regular_file(v1_fd(), e.rel_path, info.path, /*no_follow=*/true, &st);
  if (!fd.ok()) {
    // Removed (by `clear`, eviction or a rebuild) since the scan: not a problem.
    if (fd.status().code() == StatusCode::kNotFound) return false;
    info.problem = fd.status().message();
    return true;
  }
  if (Status s = check_owned_private(st, info.path, "cache entry"); !s.ok()) {
    info.problem = s.message();
  } else if (auto bytes = read_bounded(fd->get(), kMaxEntryBytes, info.path); !bytes.ok()) {
    info.problem = bytes.status().message();
  } else if (auto kb = decode_kernel_binary(*bytes); !kb.ok()) {
    info.problem = kb.status().message();
  } else if (cache_key(kb->key, kb->toolchain) != e.key) {
    info.problem = "stale entry: its contract key and toolchain do not hash to its file name";
  } else if (std::string why = unusable_reason(*kb); !why.empty()) {
    info.problem = why;
  } else {
    info.contract_key = kb->key;
    info.contract_text = kb->contract_text;
    info.target = target_name(kb->target);
    info.toolchain = kb->toolchain;
  }
  return true;
}

StatusOr<std::vector<CacheEntryInfo>> DiskCache::list() const {
  std::vector<CacheEntryInfo> out;
  for (const auto &e : scan()) {
    if (e.key.empty()) continue;
    CacheEntryInfo info;
    struct stat st;
    if (check_entry(e, info, st)) out.push_back(std::move(info));
  }
  std::sort(out.begin(), out.end(), [](const CacheEntryInfo &a, const CacheEntryInfo &b) { return a.key < b.key; });
  return out;
}

// Reports `problem` and, unless the cache is read-only, removes <v1>/<rel>
// (unlinkat with `flags`), saying which happened.
void DiskCache::report_and_remove(VerifyReport &report, const std::string &problem, int v1, const std::string &rel,
                                  int flags, const char *removed) const {
  std::string line = problem;
  if (options_.read_only) {
    line += " (read-only cache: not removed)";
    ++report.unrepaired;
  } else if (::unlinkat(v1, rel.c_str(), flags) == 0 || errno == ENOENT) {
    line += std::string(" (") + removed + ")";
    ++report.removed;
  } else {
    line += " (cannot remove: " + errno_text(errno) + ")";
    ++report.unrepaired;
  }
  report.problems.push_back(std::move(line));
}

// The cache's own files besides entries (the counters, the toolchain record,
// lock files), as paths relative to v1: each must be a regular file or
// absent. Lock files are listed where the locks folder can be read.
std::vector<std::string> DiskCache::own_files() const {
  std::vector<std::string> out = {kStatsFile, kToolchainFile};
  const int v1 = v1_fd();
  if (v1 < 0) return out;
  if (DIR *d = open_dir_stream(v1, kLocksDir, O_NOFOLLOW)) {
    while (struct dirent *e = ::readdir(d))
      if (std::string_view(e->d_name).ends_with(".lock")) out.push_back(std::string(kLocksDir) + "/" + e->d_name);
    ::closedir(d);
  }
  return out;
}

int VerifyReport::exit_code() const {
  if (unrepaired) return 2;
  return problems.empty() ? 0 : 1;
}

StatusOr<VerifyReport> DiskCache::verify() {
  VerifyReport report;
  const int v1 = v1_fd();
  CacheStats delta;
  std::vector<RefusedShard> refused;
  std::vector<Scanned> scanned = scan(&refused);
  std::sort(scanned.begin(), scanned.end(), [](const Scanned &a, const Scanned &b) { return a.name < b.name; });
  // What verify would not look into is a problem too: an empty report from a
  // cache whose shards are links would read as "all good".
  for (const RefusedShard &r : refused) {
    if (r.removable) {
      report_and_remove(report, r.problem, v1, r.name, 0, "removed; what it pointed to is untouched");
    } else {
      report.problems.push_back(r.problem + " (not repaired)");
      ++report.unrepaired;
    }
  }
  for (const auto &e : scanned) {
    if (e.key.empty()) {
      // A temporary file: a live writer's is left alone, a dead one's goes.
      if (!options_.read_only && remove_if_abandoned(v1, e.rel_path)) ++report.temp_removed;
      continue;
    }
    CacheEntryInfo info;
    struct stat st;
    if (!check_entry(e, info, st)) continue;  // gone since the scan
    ++report.checked;
    if (info.problem.empty()) {
      ++report.ok;
      continue;
    }
    std::string line = info.path + ": " + info.problem;
    if (options_.read_only) {
      line += " (read-only cache: not removed)";
      ++report.unrepaired;
    } else {
      // Remove only the file that was read: a writer may have renamed a good
      // one in since, and someone else may have removed it already.
      struct stat now;
      const bool present = ::fstatat(v1, e.rel_path.c_str(), &now, AT_SYMLINK_NOFOLLOW) == 0;
      if (!present && errno == ENOENT) {
        line += " (already removed)";
        ++report.removed;
      } else if (present && st.st_ino != 0 && (now.st_ino != st.st_ino || now.st_dev != st.st_dev)) {
        line += " (replaced by a writer since; left in place)";
      } else if (::unlinkat(v1, e.rel_path.c_str(), 0) == 0 || errno == ENOENT) {
        ++report.removed;
        ++delta.corrupt_removed;
        line += " (removed)";
      } else {
        line += " (cannot remove: " + errno_text(errno) + ")";
        ++report.unrepaired;
      }
    }
    report.problems.push_back(std::move(line));
  }
  // The cache's own files: a FIFO or link in their place would block or
  // mislead whoever opens them next (the stats counters stop counting, a
  // runtime without the compiler stops reading the cache).
  for (const std::string &rel : own_files()) {
    struct stat st;
    if (v1 < 0 || ::fstatat(v1, rel.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || S_ISREG(st.st_mode)) continue;
    report_and_remove(report,
                      options_.dir + "/" + kLayout + "/" + rel + ": is " + file_type_name(st.st_mode) +
                          ", not a regular file",
                      v1, rel, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0, "removed");
  }
  record(delta);
  return report;
}

Status DiskCache::clear() {
  if (options_.read_only)
    return permission_denied(options_.dir +
                             ": the kernel cache is read-only (GATEJIT_CACHE_READONLY); not clearing it");
  const int v1 = v1_fd();
  if (v1 < 0) return Status::Ok();
  std::string first_error;
  for (const auto &s : scan()) {
    // A live writer's temporary file is about to become an entry: removing
    // it would only make that writer fail to store.
    if (s.key.empty()) {
      remove_if_abandoned(v1, s.rel_path);
      continue;
    }
    if (::unlinkat(v1, s.rel_path.c_str(), 0) != 0 && errno != ENOENT && first_error.empty())
      first_error = options_.dir + "/" + kLayout + "/" + s.rel_path + ": cannot remove: " + errno_text(errno);
  }
  // The cache's own files where something else took their place (a FIFO, a
  // link): they would block or mislead the next reader.
  for (const std::string &rel : own_files()) {
    struct stat st;
    if (::fstatat(v1, rel.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode) &&
        ::unlinkat(v1, rel.c_str(), 0) != 0 && errno != ENOENT && first_error.empty())
      first_error = options_.dir + "/" + kLayout + "/" + rel + ": cannot remove: " + errno_text(errno);
  }
  // Lock files nobody holds go too; held ones belong to a compile in progress.
  if (auto locks = open_private_dir(v1, kLocksDir, kLocksDir, false); locks.ok()) {
    if (DIR *d = open_dir_stream(locks->get(), ".")) {
      std::vector<std::string> names;
      while (struct dirent *e = ::readdir(d))
        if (std::string_view(e->d_name).ends_with(".lock") && std::string_view(e->d_name) != kEvictLock)
          names.emplace_back(e->d_name);
      ::closedir(d);
      for (const auto &n : names) remove_lock_file_if_idle(locks->get(), n);
    }
  }
  if (!first_error.empty()) return io_error(first_error);
  return Status::Ok();
}

}  // namespace gatejit
