// Running the gatejit tool with extra environment and a deadline: for the
// tests that feed it hostile input (a FIFO that would block, a process that
// must not crash). Builds on compiler_test_support.h's TempDir and slurp.
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <string>

#include "compiler/compiler_test_support.h"

namespace gatejit::testing_support {

inline constexpr int kToolTimedOut = 137;  // `timeout -s KILL` killed it

// `env` is prepended as "NAME=value ..." (may be empty); the tool is killed
// after `seconds`. rc is its exit code, 128 + signal if it died of one.
inline CliResult gatejit_run(const TempDir &dir, const std::string &env, const std::string &args, int seconds = 60,
                             const std::string &tag = "run") {
  const fs::path out = dir / (tag + ".out"), err = dir / (tag + ".err");
  const std::string cmd = "GATEJIT_CACHE_DIR=" + (dir / "cache").string() + " " + env + " timeout -s KILL " +
                          std::to_string(seconds) + " " + GATEJIT_TOOL + " " + args + " >" + out.string() + " 2>" +
                          err.string();
  const int status = std::system(cmd.c_str());
  CliResult r;
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

}  // namespace gatejit::testing_support
