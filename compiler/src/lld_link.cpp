#include "lld_link.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <mutex>
#include <memory>
#include <thread>
#include <string>

#include "lld/Common/Driver.h"
#include "llvm/Support/raw_ostream.h"

LLD_HAS_DRIVER(elf)

namespace gatejit::compiler {
namespace {

// An anonymous in-memory file, named by /proc/self/fd/N for lld.
class MemFile {
 public:
  explicit MemFile(const char *name) : fd_(memfd_create(name, MFD_CLOEXEC)) {}
  ~MemFile() {
    if (fd_ >= 0) close(fd_);
  }
  MemFile(const MemFile &) = delete;
  MemFile &operator=(const MemFile &) = delete;
  bool ok() const { return fd_ >= 0; }
  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }
  bool write_all(const std::vector<uint8_t> &bytes) {
    size_t done = 0;
    while (done < bytes.size()) {
      ssize_t n = pwrite(fd_, bytes.data() + done, bytes.size() - done, off_t(done));
      if (n <= 0) return false;
      done += size_t(n);
    }
    return true;
  }

 private:
  int fd_;
};

// A pipe whose read end a thread drains into memory. lld treats a path that is
// not a regular file as a stream: it writes the finished output to it in one go
// (no temporary file beside it, no rename).
class PipeSink {
 public:
  PipeSink() {
    if (pipe2(fds_, O_CLOEXEC) != 0) return;
    // The reader owns a copy of the state it touches, so abandon() is safe.
    reader_ = std::thread([fd = fds_[0], bytes = bytes_ptr_] {
      uint8_t buf[65536];
      while (true) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        bytes->insert(bytes->end(), buf, buf + n);
      }
    });
  }
  ~PipeSink() { finish(); }
  bool ok() const { return fds_[1] >= 0 && reader_.joinable(); }
  std::string path() const { return "/proc/self/fd/" + std::to_string(fds_[1]); }
  // After a link that left lld unable to run again, lld may still hold a
  // write end: the reader would never see end-of-file. Let it go instead of
  // waiting for it (it ends with the process).
  void abandon() {
    if (fds_[1] >= 0) close(fds_[1]), fds_[1] = -1;
    if (reader_.joinable()) reader_.detach();
    fds_[0] = -1;  // owned by the detached reader's blocking read now
  }
  // Closes our write end and waits for the reader to see end-of-file.
  std::vector<uint8_t> &finish() {
    if (fds_[1] >= 0) close(fds_[1]), fds_[1] = -1;
    if (reader_.joinable()) reader_.join();
    if (fds_[0] >= 0) close(fds_[0]), fds_[0] = -1;
    return *bytes_ptr_;
  }

 private:
  int fds_[2] = {-1, -1};
  std::shared_ptr<std::vector<uint8_t>> bytes_ptr_ = std::make_shared<std::vector<uint8_t>>();
  std::thread reader_;
};

// lld keeps global state: one link at a time in this process.
std::mutex g_lld_mutex;

}  // namespace

StatusOr<std::vector<uint8_t>> link_code_object(const std::vector<uint8_t> &relocatable_object) {
  MemFile input("gatejit-kernel.o");
  PipeSink output;
  if (!input.ok() || !output.ok()) return compile_error("link: memfd_create failed");
  if (!input.write_all(relocatable_object)) return compile_error("link: cannot write the object to memory");
  const std::string in_path = input.path(), out_path = output.path();
  const char *args[] = {"ld.lld", "-shared", "--no-undefined", "--no-mmap-output-file",
                        in_path.c_str(), "-o", out_path.c_str()};
  std::string diagnostics;
  llvm::raw_string_ostream err(diagnostics), out(diagnostics);
  lld::Result result;
  {
    std::lock_guard<std::mutex> lock(g_lld_mutex);
    result = lld::lldMain(args, out, err, {{lld::Gnu, &lld::elf::link}});
  }
  if (!result.canRunAgain) output.abandon();
  if (result.retCode != 0 || !result.canRunAgain)
    return compile_error("lld failed (exit " + std::to_string(result.retCode) + "):\n" + diagnostics);
  std::vector<uint8_t> code_object = std::move(output.finish());
  if (code_object.empty())
    return compile_error("link: lld produced no output\n" + diagnostics);
  return code_object;
}

}  // namespace gatejit::compiler
