#include "cache_toolchain.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "file_io.h"
#include "input_limits.h"
#include "unique_fd.h"

namespace gatejit {
namespace {

constexpr const char *kRecordName = "toolchain";

bool printable_line(const std::string &s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

}  // namespace

std::string toolchain_record_path(const DiskCache &cache) { return cache.options().dir + "/v1/" + kRecordName; }

StatusOr<std::string> recorded_toolchain(const DiskCache &cache) {
  const std::string path = toolchain_record_path(cache);
  // Non-blocking and type-checked before a byte is read: a FIFO planted here
  // fails at once instead of hanging every lookup.
  struct stat st;
  auto fd = open_regular_file(AT_FDCWD, path, path, /*no_follow=*/true, &st);
  if (!fd.ok()) {
    if (fd.status().code() == StatusCode::kNotFound)
      return not_found(path + ": no toolchain recorded (no compiler has written this cache)");
    return fd.status();
  }
  if (st.st_uid != ::geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)))
    return permission_denied(path + ": not a file of the current user writable only by its owner; not trusting it");
  auto bytes = read_bounded(fd->get(), limits::kToolchainBytes + 1, path);
  if (!bytes.ok()) return bytes.status();
  std::string text(bytes->begin(), bytes->end());
  if (!text.empty() && text.back() == '\n') text.pop_back();
  if (!printable_line(text) || text.size() > limits::kToolchainBytes)
    return corrupt(path + ": not one line of printable text");
  return text;
}

Status record_toolchain(const DiskCache &cache, const std::string &fingerprint) {
  if (!printable_line(fingerprint) || fingerprint.size() > limits::kToolchainBytes)
    return invalid_argument("toolchain fingerprint: not one line of printable text");
  auto current = recorded_toolchain(cache);
  if (current.ok() && *current == fingerprint) return Status::Ok();
  const std::string v1_path = cache.options().dir + "/v1";
  UniqueFd v1(::open(v1_path.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!v1.valid()) return io_error(v1_path + ": cannot open: " + std::strerror(errno));
  // The folder is the cache's own: whatever is at the name (an older record,
  // or a FIFO or link someone planted) is replaced, never followed or read.
  const std::string text = fingerprint + "\n";
  return replace_file_atomic(v1.get(), kRecordName, {reinterpret_cast<const uint8_t *>(text.data()), text.size()},
                             0600, toolchain_record_path(cache));
}

}  // namespace gatejit
