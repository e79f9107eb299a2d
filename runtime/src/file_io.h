// Bounded whole-file reads and crash-safe writes, shared by the disk cache,
// bundles and the tools (docs/runtime.md, "Files gatejit reads and writes").
//
// Reading: the file is opened O_NONBLOCK (a FIFO or device fails at once
// instead of hanging), its type is checked on the open descriptor before any
// byte is read, and no more than the caller's bound is ever read.
//
// Writing: a write goes to a temporary file in the same directory, locked
// (flock) while its writer lives, flushed, then renamed over the target:
// readers see the old file or the new one, never a partial one. The target
// must be a regular file or nothing. A temporary file that no live writer
// holds is abandoned (its writer was killed) and the next writer removes it.
#pragma once

#include <dirent.h>
#include <sys/stat.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gatejit/status.h"
#include "unique_fd.h"

namespace gatejit {

// A directory stream on a fresh descriptor of <dirfd>/<name> (its own read
// position), or null; never leaks the descriptor.
DIR *open_dir_stream(int dirfd, const char *name, int extra_flags = 0);

// "a directory", "a FIFO", "a character device", ... for messages.
const char *file_type_name(mode_t mode);

// Opens <dirfd>/<name> for reading (dirfd AT_FDCWD: a plain path) without
// blocking, and checks on the descriptor that it is a regular file. `shown`
// names the file in messages. no_follow: a symbolic link is refused too.
StatusOr<UniqueFd> open_regular_file(int dirfd, const std::string &name, const std::string &shown, bool no_follow,
                                     struct stat *st_out = nullptr);

// Reads from an open descriptor to its end; more than `max_bytes` is an
// error (the file grew past its bound), never a truncation.
StatusOr<std::vector<uint8_t>> read_bounded(int fd, uint64_t max_bytes, const std::string &shown);

// open_regular_file() + read_bounded(): a larger file is an error naming the
// limit.
StatusOr<std::vector<uint8_t>> read_file(const std::string &path, uint64_t max_bytes);

// Writes `bytes` to `path` atomically. A new file gets `mode` (before umask);
// an existing regular file keeps its own mode. Refused, with `path`
// untouched: a symbolic link, a directory, a device, a FIFO or a socket at
// `path`, or a file without write permission. On any failure the temporary
// file is removed.
Status write_file_atomic(const std::string &path, std::span<const uint8_t> bytes, unsigned mode = 0600);

// Writes <dirfd>/<name> atomically for a folder the caller owns (the disk
// cache's): the rename replaces whatever is at the name, a FIFO or a symbolic
// link included (never following it), where write_file_atomic() refuses to.
// Abandoned temporary files of `name` are removed first. `shown` names the
// file in messages.
Status replace_file_atomic(int dirfd, const std::string &name, std::span<const uint8_t> bytes, unsigned mode,
                           const std::string &shown);

// What write_file_atomic() checks before it writes: Ok where `path` is
// missing or a regular file it may replace, else the error it would give.
// Lets a writer of many files refuse before it writes the first.
Status check_replaceable(const std::string &path);

// A temporary file next to a target, "<target>.tmp.<pid>.<n>.<random>",
// holding an exclusive flock for as long as it is open. Removed on
// destruction unless commit() renamed it over the target.
class TempFile {
 public:
  // Created O_EXCL | O_NOFOLLOW with `mode` in `dirfd`. `shown` names the
  // target in messages.
  static StatusOr<TempFile> create(int dirfd, const std::string &target_name, unsigned mode, std::string shown);
  TempFile(TempFile &&o) noexcept;
  TempFile &operator=(TempFile &&) = delete;
  ~TempFile();

  int fd() const { return fd_.get(); }
  const std::string &name() const { return name_; }
  Status write_all(std::span<const uint8_t> bytes);
  // fsync, rename over the target (still locked, so no cleaner can take it
  // for abandoned), close.
  Status commit();

 private:
  TempFile(int dirfd, std::string target, std::string name, UniqueFd fd, std::string shown);
  Status failed(const std::string &what, int err);
  int dirfd_;
  std::string target_;
  std::string name_;
  UniqueFd fd_;
  std::string shown_;
  bool done_ = false;
};

// Whether `name` is a TempFile name for `target_name` (the exact pattern, so
// a user's "out.bin.tmp.old" is never taken for one).
bool is_temp_name_for(std::string_view name, std::string_view target_name);

// A temporary file with no live writer: nobody holds its lock and it is
// older than kTempGraceSeconds (the grace covers the instant between its
// creation and its writer's flock). Regular files owned by us only.
inline constexpr long kTempGraceSeconds = 10;
bool temp_is_abandoned(int dirfd, const std::string &name);
// Removes <dirfd>/<name> if temp_is_abandoned(); true when removed.
bool remove_if_abandoned(int dirfd, const std::string &name);

}  // namespace gatejit
