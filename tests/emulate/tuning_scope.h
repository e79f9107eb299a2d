// GATEJIT_MMA_TUNING for one scope (the compiler reads it at each compile):
// the emulate tests use it to reach a form the default plan takes only at
// sizes too slow to emulate.
#pragma once

#include <cstdlib>

namespace gatejit::emulator {

class TuningScope {
 public:
  explicit TuningScope(const char *tuning) : on_(tuning != nullptr) {
    if (on_) setenv("GATEJIT_MMA_TUNING", tuning, 1);
  }
  ~TuningScope() {
    if (on_) unsetenv("GATEJIT_MMA_TUNING");
  }
  TuningScope(const TuningScope &) = delete;
  TuningScope &operator=(const TuningScope &) = delete;

 private:
  bool on_;
};

}  // namespace gatejit::emulator
