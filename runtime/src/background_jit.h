// Background JIT (GATEJIT_JIT=background): a contract whose specialised
// kernel is in no bundle or cache is served at once by a kernel already
// loadable (the generic one), while the specialised kernel compiles on a
// small pool of worker threads; the runtime swaps it in on a later call
// (runtime_core.h), never inside a graph capture.
//
// One job per kernel key (a second request for the key gets the same job),
// at most `queue` jobs waiting: past that a job is refused, not lost: it
// says so (explain, the log) and is queued again by a later call that finds
// room, or compiled by whoever waits for it (prepare()). A failed compile
// stays failed with its message.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "gatejit/kernel_binary.h"
#include "gatejit/status.h"

namespace gatejit {

// What a miss does: compile before the call returns (kSync, the default),
// serve a loadable kernel meanwhile (kBackground), or never compile (kOff).
enum class JitMode { kSync, kBackground, kOff };
// "sync" | "background" | "off"; the message names `field` and the values.
StatusOr<JitMode> parse_jit_mode(std::string_view text, std::string_view field);
const char *jit_mode_name(JitMode mode);

struct BackgroundResult {
  KernelBinary binary;
  std::string explanation;
};

class BackgroundJob {
 public:
  enum class State { kQueued, kRunning, kDone, kFailed, kRefused };
  using Compile = std::function<StatusOr<BackgroundResult>()>;

  BackgroundJob(std::string key, std::string what, Compile compile)
      : key_(std::move(key)), what_(std::move(what)), compile_(std::move(compile)) {}

  const std::string &key() const { return key_; }
  const std::string &what() const { return what_; }  // "specialised mma"
  State state() const { return state_.load(std::memory_order_acquire); }
  bool finished() const { return state() == State::kDone || state() == State::kFailed; }
  // The result; only once finished().
  const StatusOr<BackgroundResult> &result() const { return result_; }
  // Blocks until finished(); a refused job is compiled on the caller's thread.
  const StatusOr<BackgroundResult> &wait();
  // For explanations: "queued", "compiling", "failed: ...", ...
  std::string describe() const;

 private:
  friend class BackgroundCompiler;
  // Runs the compile if the job is in `from` (claims it); false if another did.
  bool run_if(State from);
  void finish(StatusOr<BackgroundResult> result);

  const std::string key_, what_;
  const Compile compile_;
  std::atomic<State> state_{State::kQueued};
  mutable std::mutex mu_;
  std::condition_variable done_;
  StatusOr<BackgroundResult> result_ = internal_error("not compiled yet");
};

class BackgroundCompiler {
 public:
  struct Limits {
    unsigned threads = 2;  // compiles at once (each is single-threaded)
    size_t queue = 256;    // jobs waiting for a thread
  };
  explicit BackgroundCompiler(Limits limits) : limits_(limits) {}
  // Queued jobs fail ("the runtime was destroyed"); running ones finish.
  ~BackgroundCompiler();
  BackgroundCompiler(const BackgroundCompiler &) = delete;
  BackgroundCompiler &operator=(const BackgroundCompiler &) = delete;

  // The job for `key`: the one submitted before (whatever its state), else a
  // new one, queued, or refused when the queue is full. Threads start on the
  // first job.
  std::shared_ptr<BackgroundJob> submit(const std::string &key, const std::string &what, BackgroundJob::Compile compile);
  // The job for `key`, or null.
  std::shared_ptr<BackgroundJob> find(const std::string &key) const;
  // Queues a refused job again if the queue has room; true if it did.
  bool retry(const std::shared_ptr<BackgroundJob> &job);

  struct Counts {
    size_t queued = 0, running = 0, done = 0, failed = 0, refused = 0;
  };
  Counts counts() const;

 private:
  void work();
  bool has_room_locked();
  bool enqueue_locked(const std::shared_ptr<BackgroundJob> &job);

  const Limits limits_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::deque<std::shared_ptr<BackgroundJob>> queue_;
  std::unordered_map<std::string, std::shared_ptr<BackgroundJob>> jobs_;
  std::vector<std::thread> threads_;
};

}  // namespace gatejit
