// Wall time per compiler phase, for the report's "compile_phases_ms": where a
// JIT compile spends its time (MLIR passes, LLVM O3, instruction selection,
// the model) without a profiler.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace gatejit::compiler {

class CompilePhases {
 public:
  // Ends the phase running since the last mark (or since construction) and
  // records it under `name`.
  void mark(std::string name) {
    const auto now = std::chrono::steady_clock::now();
    phases_.emplace_back(std::move(name), std::chrono::duration<double, std::milli>(now - last_).count());
    last_ = now;
  }
  const std::vector<std::pair<std::string, double>> &phases() const { return phases_; }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
  std::vector<std::pair<std::string, double>> phases_;
};

}  // namespace gatejit::compiler
