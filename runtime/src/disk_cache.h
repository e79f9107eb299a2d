// The on-disk kernel cache: compiled KernelBinary blobs shared by every
// process of one user, so a contract is compiled once per machine and
// toolchain. See docs/cache.md for the layout and the guarantees.
//
//   <dir>/v1/<first 2 hex of key>/<key>.gjk   one encode_kernel_binary() blob
//   <dir>/v1/locks/<key>.lock                 flock()ed while <key> compiles
//   <dir>/v1/stats                            persistent counters (flock()ed)
//
// gatejit loads executable code from here, so the directory and every entry
// must belong to the current user and must not be group- or world-writable.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <sys/stat.h>

#include "gatejit/kernel_binary.h"
#include "gatejit/status.h"

namespace gatejit {

struct DiskCacheOptions {
  std::string dir;                          // the cache root (v1/ lives below it)
  bool read_only = false;                   // load only: never compile, write, touch or remove
  uint64_t max_bytes = uint64_t(1) << 30;   // size cap over all entries; 0 = no cap
  // Create the directory when it is missing. The maintenance commands
  // (`gatejit cache stats|list|verify|clear`) pass false: looking at a cache
  // must not make one.
  bool create = true;
};

// DiskCacheOptions from the environment:
//   dir       DiskCache::default_dir()
//   read_only GATEJIT_CACHE_READONLY (gatejit/env_flag.h: 1/true/yes/on, 0/false/no/off, any case)
//   max_bytes GATEJIT_CACHE_MAX_BYTES: a byte count, optionally with a K, M or G
//             suffix (powers of 1024); 0 = no cap
// A malformed value is an invalid_argument error that names the variable.
StatusOr<DiskCacheOptions> options_from_env();

// The cache key of one compiled kernel: 32 hex digits of XXH3-128 over
// contract_key + '\n' + toolchain_fingerprint. contract_key is hex (it never
// contains '\n'), so distinct pairs never join into the same text.
std::string cache_key(std::string_view contract_key, std::string_view toolchain_fingerprint);

// Counters: hits..corrupt_removed persist across processes (the stats file);
// entries and bytes are counted by scanning the directory when asked.
struct CacheStats {
  std::string dir;
  uint64_t max_bytes = 0;
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t writes = 0;           // entries written by put()
  uint64_t compiles = 0;         // compile callbacks run by get_or_compile()
  uint64_t evictions = 0;        // entries removed to stay under max_bytes
  uint64_t corrupt_removed = 0;  // truncated, corrupt or stale entries removed
  uint64_t entries = 0;
  uint64_t bytes = 0;
};

// Human-readable lines for `gatejit cache stats`.
std::string format_stats(const CacheStats &s);

struct CacheEntryInfo {
  std::string key;            // cache key (the file name)
  std::string path;
  uint64_t size_bytes = 0;
  std::chrono::system_clock::time_point last_use;  // mtime: write or last hit
  // From the decoded entry; empty when `problem` is set.
  std::string contract_key;
  std::string contract_text;
  std::string target;
  std::string toolchain;
  std::string problem;        // empty for a good entry, else why it is bad
};

struct VerifyReport {
  uint64_t checked = 0;
  uint64_t ok = 0;
  uint64_t removed = 0;               // bad entries removed (or found already gone)
  uint64_t unrepaired = 0;            // bad entries left in place (read-only cache, unlink failed)
  uint64_t temp_removed = 0;          // temporary files of killed writers removed (routine, not a problem)
  std::vector<std::string> problems;  // one line per bad entry: "<path>: <reason> (<what was done>)"
  // `gatejit cache verify`'s exit status: 0 every entry good, 1 bad entries
  // found and all removed, 2 a bad entry could not be removed. Entries that
  // vanish while verify runs (a concurrent clear or eviction) are skipped,
  // not reported.
  int exit_code() const;
};

// Thread-safe and multi-process-safe. Every method returns a Status naming the
// path and the problem instead of crashing on file-system errors.
class DiskCache {
 public:
  // $GATEJIT_CACHE_DIR, else $XDG_CACHE_HOME/gatejit (absolute paths only, as
  // the XDG spec says), else $HOME/.cache/gatejit; "" when none is set.
  static std::string default_dir();

  // Creates the directory (missing components mode 0700) unless read-only, then
  // checks it: it must be a directory owned by the current user and not group-
  // or world-writable (kPermissionDenied otherwise). A read-only cache whose
  // directory does not exist is kNotFound.
  static StatusOr<std::unique_ptr<DiskCache>> open(DiskCacheOptions options);

  ~DiskCache();
  DiskCache(const DiskCache &) = delete;
  DiskCache &operator=(const DiskCache &) = delete;

  const DiskCacheOptions &options() const { return options_; }
  // <dir>/v1/<shard>/<key>.gjk
  std::string entry_path(const std::string &cache_key) const;

  // The entry, checksum-verified, whose key and toolchain match the request.
  // kNotFound on a miss. A truncated, corrupt, stale or unusable entry (its
  // report not a JSON object) is removed
  // (unless read-only), counted and reported as kNotFound. An entry owned by
  // another user, group/world-writable or not a regular file is refused with
  // kPermissionDenied and not read. A hit sets the entry's mtime (LRU).
  StatusOr<KernelBinary> get(const std::string &cache_key, const std::string &contract_key,
                             const std::string &toolchain);

  // Writes the entry atomically (temporary file + rename, mode 0600), then
  // removes the temporary files of killed writers and evicts least-recently-
  // used entries until entries plus live temporary files are <= max_bytes.
  // `cache_key` must equal cache_key(kb.key, kb.toolchain). Fails (never
  // crashes) when read-only, the disk is full or the directory unwritable.
  Status put(const std::string &cache_key, const KernelBinary &kb);

  // get(); on a miss, take the key's cross-process lock, look again, run
  // `compile`, put() and unlock. Concurrent callers on one key all succeed and
  // only one compiles. If the entry cannot be written the compiled binary is
  // still returned (with one warning). Read-only: a miss is kNotFound and
  // `compile` is not run. *hit (optional) says whether the result came from
  // disk; *stored (optional), after a compile, is Ok when the entry was
  // written and otherwise says why it was not (kNotFound when no compile ran).
  StatusOr<KernelBinary> get_or_compile(const std::string &cache_key, const std::string &contract_key,
                                        const std::string &toolchain,
                                        const std::function<StatusOr<KernelBinary>()> &compile,
                                        bool *hit = nullptr, Status *stored = nullptr);

  // Persistent counters (plus this process's, when read-only) and the current
  // entry count and size.
  CacheStats stats() const;

  // Every entry, decoded (not touched: listing does not count as use).
  StatusOr<std::vector<CacheEntryInfo>> list() const;

  // Decodes every entry; reports bad ones and, unless read-only, removes them
  // (only the very file that was read) and the temporary files of killed
  // writers. A live writer's temporary file (locked) is left alone. The
  // cache's own files (stats, toolchain, lock files) that are not regular
  // files are reported and removed the same way.
  StatusOr<VerifyReport> verify();

  // Removes every entry (counters are kept), the temporary files of killed
  // writers and whatever is not a regular file where the cache's own files
  // go; a live writer's temporary file is left to become its entry.
  // kPermissionDenied when read-only.
  Status clear();

 private:
  struct Scanned;
  DiskCache(DiskCacheOptions options, int root_fd);

  StatusOr<KernelBinary> lookup(const std::string &cache_key, const std::string &contract_key,
                                const std::string &toolchain, bool touch, CacheStats &delta);
  Status write_entry(const std::string &cache_key, const KernelBinary &kb, CacheStats &delta);
  void evict(const std::string &keep_key, CacheStats &delta);
  struct RefusedShard {
    std::string name;     // the shard's name in v1
    std::string problem;  // "<path>: why it was not looked into"
    bool removable;      // a link or a file, not a folder: unlinking it repairs the cache
  };
  // Every entry and temporary file in the shards; the shards it would not
  // look into (a symbolic link, not a folder, a folder not private to us)
  // are added to *refused where given.
  std::vector<Scanned> scan(std::vector<RefusedShard> *refused = nullptr) const;
  std::vector<std::string> own_files() const;
  void report_and_remove(VerifyReport &report, const std::string &problem, int v1, const std::string &rel, int flags,
                         const char *removed) const;
  // Fills `info` for a scanned entry (`st`: what was opened); false when it
  // has vanished since the scan.
  bool check_entry(const Scanned &e, CacheEntryInfo &info, struct stat &st) const;
  Status ensure_v1();
  int v1_fd() const;
  void record(const CacheStats &delta);
  CacheStats read_counters() const;

  DiskCacheOptions options_;
  int root_fd_ = -1;                 // the checked cache directory
  mutable std::mutex mu_;            // guards v1_fd_ and session_
  mutable int v1_fd_ = -1;           // <dir>/v1, opened (or created) lazily when read-only
  CacheStats session_;               // read-only: this process's counters (no stats file)
};

}  // namespace gatejit
