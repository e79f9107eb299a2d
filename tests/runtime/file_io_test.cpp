// Issue 19, points 1, 4, 5 and 7 at the library: the atomic writer replaces
// only a regular file (or nothing) and keeps its mode, leaves no temporary
// file on an error path and removes those of killed writers; the reader is
// bounded and never blocks on a FIFO. Real files, FIFOs and processes.
#include "file_io.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "support/child_process.h"

namespace gatejit {
namespace {

using testing_support::exit_code_within;
using testing_support::kChildTimedOut;

namespace fs = std::filesystem;

class FileIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gatejit-fileio-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string &name) const { return dir_ + "/" + name; }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto &e : fs::directory_iterator(dir_)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
  static std::vector<uint8_t> bytes(const std::string &s) { return {s.begin(), s.end()}; }
  static std::string slurp(const std::string &p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  static void backdate(const std::string &p, int seconds) {
    struct timespec t[2];
    t[0].tv_sec = t[1].tv_sec = ::time(nullptr) - seconds;
    t[0].tv_nsec = t[1].tv_nsec = 0;
    ASSERT_EQ(::utimensat(AT_FDCWD, p.c_str(), t, AT_SYMLINK_NOFOLLOW), 0);
  }
  std::string dir_;
};

TEST_F(FileIoTest, WritesANewFileAndReplacesARegularOne) {
  ASSERT_TRUE(write_file_atomic(path("out"), bytes("one"), 0644).ok());
  EXPECT_EQ(slurp(path("out")), "one");
  ASSERT_TRUE(write_file_atomic(path("out"), bytes("two"), 0644).ok());
  EXPECT_EQ(slurp(path("out")), "two");
  EXPECT_EQ(names(), std::vector<std::string>{"out"});  // no temporary file left
}

TEST_F(FileIoTest, RefusesToReplaceAFifoADirectoryASymlinkOrASocket) {
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0644), 0);
  ASSERT_EQ(::mkdir(path("dir").c_str(), 0755), 0);
  { std::ofstream(path("target")) << "keep"; }
  ASSERT_EQ(::symlink(path("target").c_str(), path("link").c_str()), 0);
  const int sock = ::socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path("sock").c_str());
  ASSERT_EQ(::bind(sock, reinterpret_cast<struct sockaddr *>(&addr), sizeof addr), 0);
  const std::pair<const char *, const char *> cases[] = {
      {"fifo", "is a FIFO"}, {"dir", "is a directory"}, {"link", "is a symbolic link"}, {"sock", "is a socket"}};
  for (const auto &[name, why] : cases) {
    SCOPED_TRACE(name);
    struct stat before;
    ASSERT_EQ(::lstat(path(name).c_str(), &before), 0);
    Status s = write_file_atomic(path(name), bytes("clobber"), 0644);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find(path(name)), std::string::npos) << s.message();
    EXPECT_NE(s.message().find(why), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("refusing to replace it"), std::string::npos) << s.message();
    struct stat after;
    ASSERT_EQ(::lstat(path(name).c_str(), &after), 0);
    EXPECT_EQ(after.st_ino, before.st_ino);
    EXPECT_EQ(after.st_mode, before.st_mode);
  }
  ::close(sock);
  EXPECT_EQ(slurp(path("target")), "keep");
  EXPECT_EQ(names(), (std::vector<std::string>{"dir", "fifo", "link", "sock", "target"}));
}

TEST_F(FileIoTest, RefusesToReplaceACharacterDevice) {
  if (::geteuid() != 0) GTEST_SKIP() << "making a device node needs root";
  ASSERT_EQ(::mknod(path("null").c_str(), S_IFCHR | 0666, makedev(1, 3)), 0);
  Status s = write_file_atomic(path("null"), bytes("clobber"), 0644);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("is a character device"), std::string::npos) << s.message();
  struct stat st;
  ASSERT_EQ(::lstat(path("null").c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST_F(FileIoTest, KeepsTheModeOfTheFileItReplaces) {
  { std::ofstream(path("out")) << "old"; }
  ASSERT_EQ(::chmod(path("out").c_str(), 0640), 0);
  ASSERT_TRUE(write_file_atomic(path("out"), bytes("new"), 0644).ok());
  struct stat st;
  ASSERT_EQ(::stat(path("out").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(slurp(path("out")), "new");
}

TEST_F(FileIoTest, RefusesAReadOnlyFile) {
  { std::ofstream(path("out")) << "old"; }
  ASSERT_EQ(::chmod(path("out").c_str(), 0444), 0);
  Status s = write_file_atomic(path("out"), bytes("new"), 0644);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("is read-only (mode 444)"), std::string::npos) << s.message();
  EXPECT_EQ(slurp(path("out")), "old");
}

TEST_F(FileIoTest, AFailedWriteLeavesNoTemporaryFile) {
  { std::ofstream(path("out")) << "old"; }
  // A file size limit makes write() fail half-way (EFBIG), a real error path.
  struct rlimit saved;
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  struct rlimit small = saved;
  small.rlim_cur = 1000;
  auto *old_handler = ::signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  Status s = write_file_atomic(path("out"), std::vector<uint8_t>(100000, 7), 0644);
  ::setrlimit(RLIMIT_FSIZE, &saved);
  ::signal(SIGXFSZ, old_handler);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("write failed"), std::string::npos) << s.message();
  EXPECT_EQ(slurp(path("out")), "old");
  EXPECT_EQ(names(), std::vector<std::string>{"out"});
}

TEST_F(FileIoTest, TheNextWriteRemovesTemporaryFilesOfKilledWriters) {
  // What a writer killed mid-write leaves: its temporary file, unlocked.
  const std::string dead = path("out.tmp.999999.0.abc123");
  { std::ofstream(dead) << "partial"; }
  backdate(dead, 2 * kTempGraceSeconds);
  // Not ours to touch: a user's file that only looks similar.
  const std::string lookalike = path("out.tmp.backup");
  { std::ofstream(lookalike) << "mine"; }
  backdate(lookalike, 3600);
  ASSERT_TRUE(write_file_atomic(path("out"), bytes("new"), 0644).ok());
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(lookalike));
  EXPECT_EQ(slurp(path("out")), "new");
}

TEST_F(FileIoTest, ALiveWritersTemporaryFileIsLeftAlone) {
  // A writer in another process holds its temporary file (locked) past the
  // grace period; a second writer of the same target must not remove it.
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const int dirfd = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY);
    auto t = TempFile::create(dirfd, "out", 0644, "out");
    if (!t.ok()) ::_exit(2);
    const std::string name = t->name();
    (void)!::write(ready[1], name.c_str(), name.size());
    ::pause();  // killed by the parent: the file stays behind
    ::_exit(0);
  }
  char buf[256] = {};
  const ssize_t n = ::read(ready[0], buf, sizeof buf - 1);
  ASSERT_GT(n, 0);
  const std::string live = path(std::string(buf, size_t(n)));
  backdate(live, 2 * kTempGraceSeconds);
  ASSERT_TRUE(write_file_atomic(path("out"), bytes("new"), 0644).ok());
  EXPECT_TRUE(fs::exists(live)) << "a live writer's temporary file was removed";
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  // Now its writer is dead: the next write cleans it up.
  ASSERT_TRUE(write_file_atomic(path("out"), bytes("newer"), 0644).ok());
  EXPECT_FALSE(fs::exists(live));
  ::close(ready[0]);
  ::close(ready[1]);
}

TEST_F(FileIoTest, ReadingAFifoFailsAtOnce) {
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0644), 0);
  const std::string fifo = path("fifo");
  const int rc = exit_code_within(5, [&] {
    auto r = read_file(fifo, 1 << 20);
    return !r.ok() && r.status().message().find("is a FIFO, not a regular file") != std::string::npos ? 0 : 1;
  });
  EXPECT_EQ(rc, 0) << (rc == kChildTimedOut ? "read_file blocked on a FIFO" : "wrong result");
}

TEST_F(FileIoTest, ReadsAreBounded) {
  { std::ofstream(path("big")) << std::string(5000, 'x'); }
  auto r = read_file(path("big"), 4096);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("5000 bytes is larger than the limit of 4096 bytes"), std::string::npos)
      << r.status().message();
  auto ok = read_file(path("big"), 5000);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->size(), 5000u);
  // An endless character device is refused by type, before any read.
  auto zero = read_file("/dev/zero", 1 << 20);
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.status().message().find("/dev/zero: is a character device"), std::string::npos)
      << zero.status().message();
}

TEST_F(FileIoTest, MessagesEscapeThePath) {
  const std::string odd = path("a\nb\x1b[31m");
  auto r = read_file(odd, 100);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().find('\n'), std::string::npos) << r.status().message();
  EXPECT_EQ(r.status().message().find('\x1b'), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("a\\nb\\x1b[31m: no such file"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace gatejit
