// Runs a piece of a test in a forked child with a deadline, so code that
// would block forever (a FIFO opened for reading) or crash shows up as a
// result instead of hanging or killing the test binary.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <thread>

namespace gatejit::testing_support {

inline constexpr int kChildTimedOut = -2;

// The child's exit code, 128 + signal when it died of one, or kChildTimedOut
// (the child is then killed).
inline int exit_code_within(int seconds, const std::function<int()> &f) {
  std::fflush(nullptr);
  const pid_t child = ::fork();
  if (child == 0) ::_exit(f());
  for (int i = 0; i < seconds * 100; ++i) {
    int status = 0;
    if (::waitpid(child, &status, WNOHANG) == child)
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  return kChildTimedOut;
}

}  // namespace gatejit::testing_support
