#include "file_io.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <random>

#include "input_echo.h"

namespace gatejit {
namespace {

std::string errno_text(int e) { return std::strerror(e); }

std::string temp_suffix() {
  static std::atomic<uint64_t> counter{0};
  thread_local std::mt19937_64 rng(std::random_device{}());
  char buf[80];
  std::snprintf(buf, sizeof buf, ".tmp.%d.%" PRIu64 ".%06" PRIx64, int(::getpid()), counter++, rng() & 0xffffff);
  return buf;
}

bool all_of_class(std::string_view s, int (*pred)(int)) {
  if (s.empty()) return false;
  for (char c : s)
    if (!pred(static_cast<unsigned char>(c))) return false;
  return true;
}

// "dir/base" -> {"dir", "base"}; "base" -> {".", "base"}.
std::pair<std::string, std::string> split_path(const std::string &path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {".", path};
  return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

}  // namespace

DIR *open_dir_stream(int dirfd, const char *name, int extra_flags) {
  const int fd = ::openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | extra_flags);
  if (fd < 0) return nullptr;
  DIR *d = ::fdopendir(fd);
  if (!d) ::close(fd);
  return d;
}

const char *file_type_name(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

StatusOr<UniqueFd> open_regular_file(int dirfd, const std::string &name, const std::string &shown, bool no_follow,
                                     struct stat *st_out) {
  if (name.empty()) return invalid_argument("an empty path names no file");
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
  const int flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (no_follow ? O_NOFOLLOW : 0);
  UniqueFd fd(::openat(dirfd, name.c_str(), flags));
  if (!fd.valid()) {
    const int e = errno;
    if (e == ENOENT) return not_found(escape_input(shown) + ": no such file");
    if (e == ELOOP && no_follow)
      return permission_denied(escape_input(shown) + ": is a symbolic link; refusing to read it");
    return io_error(escape_input(shown) + ": cannot open: " + errno_text(e));
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return io_error(escape_input(shown) + ": fstat failed: " + errno_text(errno));
  if (!S_ISREG(st.st_mode))
    return invalid_argument(escape_input(shown) + ": is " + file_type_name(st.st_mode) +
                            ", not a regular file; refusing to read it");
  // Back to blocking reads: a regular file never blocks, and some file
  // systems return EAGAIN on O_NONBLOCK reads.
  const int fl = ::fcntl(fd.get(), F_GETFL);
  if (fl >= 0) (void)::fcntl(fd.get(), F_SETFL, fl & ~O_NONBLOCK);
  if (st_out) *st_out = st;
  return fd;
}

StatusOr<std::vector<uint8_t>> read_bounded(int fd, uint64_t max_bytes, const std::string &shown) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return io_error(escape_input(shown) + ": fstat failed: " + errno_text(errno));
  const auto too_large = [&](const std::string &size) {
    return invalid_argument(escape_input(shown) + ": " + size + " is larger than the limit of " +
                            std::to_string(max_bytes) + " bytes");
  };
  if (uint64_t(st.st_size) > max_bytes) return too_large(std::to_string(st.st_size) + " bytes");
  std::vector<uint8_t> bytes(size_t(st.st_size));
  size_t done = 0;
  for (;;) {
    if (done == bytes.size()) {
      // Past the size fstat saw: the file grows. Read on, within the bound.
      if (done > max_bytes) return too_large("the file (still growing)");
      bytes.resize(std::min<uint64_t>(max_bytes + 1, std::max<uint64_t>(4096, 2 * uint64_t(done))));
      if (done == bytes.size()) return too_large("the file (still growing)");
    }
    const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return io_error(escape_input(shown) + ": read failed: " + errno_text(errno));
    if (n == 0) break;  // end of file (it may have shrunk: the caller's decoder reports that)
    done += size_t(n);
  }
  if (done > max_bytes) return too_large("the file (still growing)");
  bytes.resize(done);
  return bytes;
}

StatusOr<std::vector<uint8_t>> read_file(const std::string &path, uint64_t max_bytes) {
  auto fd = open_regular_file(AT_FDCWD, path, path, /*no_follow=*/false);
  if (!fd.ok()) return fd.status();
  return read_bounded(fd->get(), max_bytes, path);
}

// ---------------------------------------------------------------- TempFile

TempFile::TempFile(int dirfd, std::string target, std::string name, UniqueFd fd, std::string shown)
    : dirfd_(dirfd), target_(std::move(target)), name_(std::move(name)), fd_(std::move(fd)), shown_(std::move(shown)) {}

TempFile::TempFile(TempFile &&o) noexcept
    : dirfd_(o.dirfd_),
      target_(std::move(o.target_)),
      name_(std::move(o.name_)),
      fd_(std::move(o.fd_)),
      shown_(std::move(o.shown_)),
      done_(o.done_) {
  o.done_ = true;
}

TempFile::~TempFile() {
  if (done_) return;
  ::unlinkat(dirfd_, name_.c_str(), 0);  // before close: still ours while locked
  fd_.reset();
}

StatusOr<TempFile> TempFile::create(int dirfd, const std::string &target_name, unsigned mode, std::string shown) {
  for (int attempt = 0; attempt < 8; ++attempt) {
    std::string name = target_name + temp_suffix();
    UniqueFd fd(::openat(dirfd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
    if (!fd.valid()) {
      if (errno == EEXIST) continue;
      return io_error(escape_input(shown) + ": cannot create a temporary file: " + errno_text(errno));
    }
    TempFile t(dirfd, target_name, std::move(name), std::move(fd), std::move(shown));
    // The lock says "a writer is alive": cleaners leave a locked file alone.
    // Where the file system has no flock, nobody can take the file for
    // abandoned either (a cleaner must lock it first), so the write goes on.
    while (::flock(t.fd(), LOCK_EX | LOCK_NB) != 0 && errno == EINTR) {
    }
    return t;
  }
  return io_error(escape_input(shown) + ": cannot create a temporary file: names kept colliding");
}

Status TempFile::failed(const std::string &what, int err) {
  ::unlinkat(dirfd_, name_.c_str(), 0);
  fd_.reset();
  done_ = true;
  return io_error(escape_input(shown_) + ": " + what + ": " + errno_text(err));
}

Status TempFile::write_all(std::span<const uint8_t> bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd_.get(), bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return failed("write failed", n < 0 ? errno : ENOSPC);
    done += size_t(n);
  }
  return Status::Ok();
}

Status TempFile::commit() {
  // fsync before rename: after a crash the target is whole or absent, not empty.
  if (::fsync(fd_.get()) != 0) return failed("flush failed", errno);
  if (::renameat(dirfd_, name_.c_str(), dirfd_, target_.c_str()) != 0)
    return failed("cannot rename into place", errno);
  done_ = true;
  if (::close(fd_.release()) != 0) return io_error(escape_input(shown_) + ": close failed: " + errno_text(errno));
  return Status::Ok();
}

bool is_temp_name_for(std::string_view name, std::string_view target_name) {
  // <target>.tmp.<pid>.<counter>.<hex>
  if (!name.starts_with(target_name) || !name.substr(target_name.size()).starts_with(".tmp.")) return false;
  std::string_view rest = name.substr(target_name.size() + 5);
  const size_t a = rest.find('.');
  if (a == std::string_view::npos) return false;
  const size_t b = rest.find('.', a + 1);
  if (b == std::string_view::npos) return false;
  return all_of_class(rest.substr(0, a), isdigit) && all_of_class(rest.substr(a + 1, b - a - 1), isdigit) &&
         all_of_class(rest.substr(b + 1), isxdigit);
}

namespace {

// With the lock taken, if the file is abandoned; the caller unlinks while
// holding it.
UniqueFd lock_if_abandoned(int dirfd, const std::string &name, struct stat &st) {
  UniqueFd fd(::openat(dirfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (!fd.valid()) return {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) return {};
  if (::time(nullptr) - st.st_mtim.tv_sec < kTempGraceSeconds) return {};
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) return {};  // a live writer holds it
  return fd;
}

}  // namespace

bool temp_is_abandoned(int dirfd, const std::string &name) {
  struct stat st;
  return lock_if_abandoned(dirfd, name, st).valid();
}

bool remove_if_abandoned(int dirfd, const std::string &name) {
  struct stat held;
  UniqueFd fd = lock_if_abandoned(dirfd, name, held);
  if (!fd.valid()) return false;
  struct stat now;
  if (::fstatat(dirfd, name.c_str(), &now, AT_SYMLINK_NOFOLLOW) != 0 || now.st_ino != held.st_ino ||
      now.st_dev != held.st_dev)
    return false;
  return ::unlinkat(dirfd, name.c_str(), 0) == 0;
}

// ---------------------------------------------------------------- writer

namespace {

// Removes abandoned temporary files of `base` in `dirfd`, left by writers
// that were killed (where the directory can be listed).
void remove_abandoned_temps_of(int dirfd, const std::string &base) {
  DIR *d = open_dir_stream(dirfd, ".");
  if (!d) return;
  std::vector<std::string> names;
  while (struct dirent *e = ::readdir(d))
    if (is_temp_name_for(e->d_name, base)) names.emplace_back(e->d_name);
  ::closedir(d);
  for (const auto &n : names) remove_if_abandoned(dirfd, n);
}

}  // namespace

namespace {

// What is at a write target: st_mode 0 when nothing is; an error when it is
// something write_file_atomic() must not replace.
Status inspect_target(const std::string &path, struct stat &st) {
  if (path.empty()) return invalid_argument("an empty path names no file");
  const std::string shown = escape_input(path);
  const std::string base = split_path(path).second;
  if (base.empty() || base == "." || base == "..")
    return invalid_argument(shown + ": names a directory, not a file to write");
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) return io_error(shown + ": cannot check what is there: " + errno_text(errno));
    st.st_mode = 0;
    return Status::Ok();
  }
  if (S_ISLNK(st.st_mode))
    return invalid_argument(shown + ": is a symbolic link; refusing to replace it (give the path it points to)");
  if (!S_ISREG(st.st_mode))
    return invalid_argument(shown + ": is " + file_type_name(st.st_mode) +
                            ", not a regular file; refusing to replace it");
  if ((st.st_mode & S_IWUSR) == 0)
    return permission_denied(shown + ": is read-only (mode " + std::to_string((st.st_mode >> 6) & 7) +
                             std::to_string((st.st_mode >> 3) & 7) + std::to_string(st.st_mode & 7) +
                             "); refusing to replace it");
  return Status::Ok();
}

}  // namespace

Status check_replaceable(const std::string &path) {
  struct stat st;
  return inspect_target(path, st);
}

Status replace_file_atomic(int dirfd, const std::string &name, std::span<const uint8_t> bytes, unsigned mode,
                           const std::string &shown) {
  remove_abandoned_temps_of(dirfd, name);
  auto tmp = TempFile::create(dirfd, name, mode, shown);
  if (!tmp.ok()) return tmp.status();
  GATEJIT_RETURN_IF_ERROR(tmp->write_all(bytes));
  return tmp->commit();
}

Status write_file_atomic(const std::string &path, std::span<const uint8_t> bytes, unsigned mode) {
  struct stat st;
  GATEJIT_RETURN_IF_ERROR(inspect_target(path, st));
  const std::string shown = escape_input(path);
  const auto [dir, base] = split_path(path);
  if (st.st_mode != 0) mode = st.st_mode & 07777;
  // O_PATH: writing into a directory needs no permission to list it.
  UniqueFd dirfd(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!dirfd.valid()) return io_error(escape_input(dir) + ": cannot open the output directory: " + errno_text(errno));
  remove_abandoned_temps_of(dirfd.get(), base);
  auto tmp = TempFile::create(dirfd.get(), base, mode, path);
  if (!tmp.ok()) return tmp.status();
  GATEJIT_RETURN_IF_ERROR(tmp->write_all(bytes));
  // The umask may have narrowed a replaced file's mode: put its own back.
  if (st.st_mode != 0 && ::fchmod(tmp->fd(), mode) != 0)
    return io_error(shown + ": cannot keep the file's mode: " + std::strerror(errno));
  // Checked again just before the rename: what was there may have changed.
  struct stat again;
  if (::fstatat(dirfd.get(), base.c_str(), &again, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(again.st_mode))
    return invalid_argument(shown + ": is " + file_type_name(again.st_mode) +
                            ", not a regular file; refusing to replace it");
  return tmp->commit();
}

}  // namespace gatejit
