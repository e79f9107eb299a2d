// An environment variable set or unset for a scope, restored after it: for
// tests of what the runtime reads from the environment, whatever the
// environment they run in (the GPU machine exports GATEJIT_BUNDLE_PATH).
#pragma once

#include <stdlib.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace gatejit {

class ScopedEnv {
 public:
  explicit ScopedEnv(const char *name) : name_(name) {
    if (const char *v = std::getenv(name)) old_ = v;
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv &) = delete;
  ScopedEnv &operator=(const ScopedEnv &) = delete;
  void set(const char *v) { ::setenv(name_, v, 1); }
  void unset() { ::unsetenv(name_); }

 private:
  const char *name_;
  std::optional<std::string> old_;
};

}  // namespace gatejit
