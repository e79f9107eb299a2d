#include "cache_toolchain.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "file_io.h"

namespace gatejit {
namespace {

constexpr size_t kMaxFingerprintBytes = 4096;

bool printable_line(const std::string &s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

}  // namespace

std::string toolchain_record_path(const DiskCache &cache) { return cache.options().dir + "/v1/toolchain"; }

StatusOr<std::string> recorded_toolchain(const DiskCache &cache) {
  const std::string path = toolchain_record_path(cache);
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return not_found(path + ": no toolchain recorded (no compiler has written this cache)");
    return io_error(path + ": cannot open: " + std::strerror(errno));
  }
  struct stat st;
  const bool stat_ok = ::fstat(fd, &st) == 0;
  std::string text;
  if (stat_ok && S_ISREG(st.st_mode) && st.st_uid == ::geteuid() && !(st.st_mode & (S_IWGRP | S_IWOTH)) &&
      size_t(st.st_size) <= kMaxFingerprintBytes) {
    text.resize(size_t(st.st_size));
    const ssize_t got = ::read(fd, text.data(), text.size());
    text.resize(got < 0 ? 0 : size_t(got));
  } else {
    ::close(fd);
    return permission_denied(path + ": not a regular file of the current user at most " +
                             std::to_string(kMaxFingerprintBytes) +
                             " bytes long and writable only by its owner; not trusting it");
  }
  ::close(fd);
  if (!text.empty() && text.back() == '\n') text.pop_back();
  if (!printable_line(text)) return corrupt(path + ": not one line of printable text");
  return text;
}

Status record_toolchain(const DiskCache &cache, const std::string &fingerprint) {
  if (!printable_line(fingerprint) || fingerprint.size() > kMaxFingerprintBytes)
    return invalid_argument("toolchain fingerprint: not one line of printable text");
  auto current = recorded_toolchain(cache);
  if (current.ok() && *current == fingerprint) return Status::Ok();
  const std::string text = fingerprint + "\n";
  return write_file_atomic(toolchain_record_path(cache), {reinterpret_cast<const uint8_t *>(text.data()), text.size()});
}

}  // namespace gatejit
