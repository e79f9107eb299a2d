#include "contract_record.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <set>

#include "file_io.h"
#include "gatejit/contract_json.h"
#include "input_echo.h"
#include "input_limits.h"
#include "log.h"

namespace gatejit {

bool ContractRecorder::open_locked() {
  if (fd_.valid()) return true;
  if (failed_) return false;
  // O_NONBLOCK: a FIFO without a reader fails at once instead of hanging;
  // anything but a regular file is refused below.
  UniqueFd fd(::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0644));
  std::string why;
  struct stat st;
  if (!fd.valid()) why = std::strerror(errno);
  else if (::fstat(fd.get(), &st) != 0) why = std::strerror(errno);
  else if (!S_ISREG(st.st_mode)) why = std::string("it is ") + file_type_name(st.st_mode) + ", not a regular file";
  if (!why.empty()) {
    failed_ = true;
    log::warn("GATEJIT_RECORD: cannot append to " + escape_input(path_) + ": " + why + "; contracts are not recorded");
    return false;
  }
  fd_ = std::move(fd);
  return true;
}

void ContractRecorder::record(const Contract &c) {
  std::string line;
  try {
    line = contract_to_json(c).dump() + "\n";
  } catch (const std::exception &e) {  // out of memory: recording is best effort
    log::warn_once(std::string("GATEJIT_RECORD: contract not recorded: ") + e.what());
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (written_.count(line) || !open_locked()) return;
  // One write() under PIPE_BUF: an O_APPEND line lands whole, never between
  // another process's bytes. (A contract's line is a few hundred bytes.)
  if (line.size() > PIPE_BUF) {
    log::warn_once("GATEJIT_RECORD: a contract line of " + std::to_string(line.size()) + " bytes is longer than " +
                   std::to_string(PIPE_BUF) + "; not recorded");
    return;
  }
  ssize_t n;
  do n = ::write(fd_.get(), line.data(), line.size());
  while (n < 0 && errno == EINTR);
  if (n != ssize_t(line.size())) {
    failed_ = true;
    fd_.reset();
    log::warn("GATEJIT_RECORD: cannot append to " + escape_input(path_) + ": " +
              (n < 0 ? std::strerror(errno) : "short write") + "; contracts are no longer recorded");
    return;
  }
  written_.insert(std::move(line));
}

StatusOr<std::vector<Contract>> read_contract_record(const std::string &path) {
  const std::string shown = "contracts " + escape_input(path);
  auto bytes = read_file(path, limits::kSpecBytes);
  if (!bytes.ok()) return Status(bytes.status().code(), "contracts " + bytes.status().message());
  const std::string_view text(reinterpret_cast<const char *>(bytes->data()), bytes->size());
  std::vector<Contract> out;
  std::set<std::string> seen;
  size_t number = 0;
  for (size_t start = 0; start < text.size();) {
    const size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    auto parsed = contract_from_json_text(line);
    auto c = parsed.ok() ? normalize(*parsed) : parsed;
    if (!c.ok()) return Status(c.status().code(), shown + " line " + std::to_string(number) + ": " + c.status().message());
    if (seen.insert(canonical_text(*c)).second) out.push_back(*c);
  }
  if (out.empty()) return invalid_argument(shown + ": no contracts in it (one JSON object a line)");
  return out;
}

}  // namespace gatejit
