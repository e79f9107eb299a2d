#include "file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <random>

namespace gatejit {
namespace {

std::string errno_text(int e) { return std::strerror(e); }

std::string unique_suffix() {
  static std::atomic<uint64_t> counter{0};
  thread_local std::mt19937_64 rng(std::random_device{}());
  return ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter++) + "." + std::to_string(rng() & 0xffffff);
}

}  // namespace

StatusOr<std::vector<uint8_t>> read_file(const std::string &path, uint64_t max_bytes) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    if (e == ENOENT) return not_found(path + ": no such file");
    return io_error(path + ": cannot open: " + errno_text(e));
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return io_error(path + ": not a regular file");
  }
  if (uint64_t(st.st_size) > max_bytes) {
    close(fd);
    return io_error(path + ": " + std::to_string(st.st_size) + " bytes is larger than the limit of " +
                    std::to_string(max_bytes));
  }
  std::vector<uint8_t> bytes(size_t(st.st_size));
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // shrank under us: report what we got
    done += size_t(n);
  }
  close(fd);
  bytes.resize(done);
  return bytes;
}

Status write_file_atomic(const std::string &path, std::span<const uint8_t> bytes, unsigned mode) {
  const std::string tmp = path + unique_suffix();
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) return io_error(path + ": cannot create a temporary file: " + errno_text(errno));
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int e = n < 0 ? errno : ENOSPC;
      close(fd);
      unlink(tmp.c_str());
      return io_error(path + ": write failed: " + errno_text(e));
    }
    done += size_t(n);
  }
  if (fsync(fd) != 0 || close(fd) != 0) {
    const int e = errno;
    unlink(tmp.c_str());
    return io_error(path + ": flush failed: " + errno_text(e));
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    unlink(tmp.c_str());
    return io_error(path + ": cannot rename into place: " + errno_text(e));
  }
  return Status::Ok();
}

}  // namespace gatejit
