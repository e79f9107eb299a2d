// Recorded contracts: what a serving process met, as the input of its next
// bundle (GATEJIT_RECORD=FILE, then gatejit precompile --contracts FILE).
//
// The file holds one contract a line, as the JSON object of
// contract_to_json() (the keys of a precompile spec item). Many processes
// may append to one file at once: it is opened O_APPEND and each line goes
// out in one write() of less than PIPE_BUF bytes, so lines never interleave.
// A process writes each distinct contract once; across processes the
// reader drops the repeats.
#pragma once

#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include "gatejit/contract.h"
#include "unique_fd.h"

namespace gatejit {

class ContractRecorder {
 public:
  explicit ContractRecorder(std::string path) : path_(std::move(path)) {}
  ContractRecorder(const ContractRecorder &) = delete;
  ContractRecorder &operator=(const ContractRecorder &) = delete;

  // Appends `c` (normalised) unless this recorder has written it already.
  // Never fails the caller: a file that cannot be opened or written is one
  // logged warning, and recording stops.
  void record(const Contract &c);
  const std::string &path() const { return path_; }

 private:
  bool open_locked();

  const std::string path_;
  std::mutex mu_;
  UniqueFd fd_;
  bool failed_ = false;
  std::unordered_set<std::string> written_;  // the lines written
};

// The contracts of a record file, normalised, each once, in file order.
// Blank lines are skipped; any other line that is not a valid contract is an
// error naming the file and the line number.
StatusOr<std::vector<Contract>> read_contract_record(const std::string &path);

}  // namespace gatejit
