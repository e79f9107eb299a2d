#include "background_jit.h"

#include "input_echo.h"
#include "log.h"

namespace gatejit {

StatusOr<JitMode> parse_jit_mode(std::string_view text, std::string_view field) {
  if (text == "sync") return JitMode::kSync;
  if (text == "background") return JitMode::kBackground;
  if (text == "off") return JitMode::kOff;
  return invalid_argument(std::string(field) + " = " + quote_input(text) + ": allowed are sync, background, off");
}

const char *jit_mode_name(JitMode mode) {
  switch (mode) {
    case JitMode::kSync: return "sync";
    case JitMode::kBackground: return "background";
    case JitMode::kOff: return "off";
  }
  return "?";
}

bool BackgroundJob::run_if(State from) {
  if (!state_.compare_exchange_strong(from, State::kRunning, std::memory_order_acq_rel)) return false;
  StatusOr<BackgroundResult> result = internal_error("not compiled");
  try {
    result = compile_();
  } catch (const std::exception &e) {
    result = internal_error(std::string("unexpected exception: ") + e.what());
  } catch (...) {
    result = internal_error("unexpected exception");
  }
  finish(std::move(result));
  return true;
}

void BackgroundJob::finish(StatusOr<BackgroundResult> result) {
  const bool ok = result.ok();
  if (!ok) log::warn("background JIT: " + what_ + " failed: " + result.status().message());
  else log::info("background JIT: " + what_ + " ready (" + key_ + ")");
  {
    std::lock_guard<std::mutex> lock(mu_);
    result_ = std::move(result);
    state_.store(ok ? State::kDone : State::kFailed, std::memory_order_release);
  }
  done_.notify_all();
}

const StatusOr<BackgroundResult> &BackgroundJob::wait() {
  // Not started yet: the waiter compiles it now rather than wait its turn
  // (a worker that reaches it later finds it claimed).
  if (!run_if(State::kRefused)) run_if(State::kQueued);
  std::unique_lock<std::mutex> lock(mu_);
  done_.wait(lock, [this] { return finished(); });
  return result_;
}

std::string BackgroundJob::describe() const {
  switch (state()) {
    case State::kQueued: return "queued";
    case State::kRunning: return "compiling";
    case State::kDone: return "done";
    case State::kRefused: return "not queued: the background queue was full (a later call queues it)";
    case State::kFailed: {
      std::lock_guard<std::mutex> lock(mu_);
      return "failed: " + result_.status().message();
    }
  }
  return "?";
}

BackgroundCompiler::~BackgroundCompiler() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    queue_.clear();
  }
  wake_.notify_all();
  // What never started fails, so that no waiter blocks and no job runs its
  // compile (which refers to the resolver) after this.
  for (auto &[key, job] : jobs_)
    for (auto from : {BackgroundJob::State::kQueued, BackgroundJob::State::kRefused})
      if (job->state_.compare_exchange_strong(from, BackgroundJob::State::kRunning))
        job->finish(internal_error("the runtime was destroyed before the background compile ran"));
  for (std::thread &t : threads_) t.join();
}

bool BackgroundCompiler::has_room_locked() {
  // A waiter may have claimed a queued job (BackgroundJob::wait): it no longer waits for a thread.
  std::erase_if(queue_, [](const auto &job) { return job->state() != BackgroundJob::State::kQueued; });
  return !stopping_ && queue_.size() < limits_.queue;
}

bool BackgroundCompiler::enqueue_locked(const std::shared_ptr<BackgroundJob> &job) {
  if (!has_room_locked()) return false;
  queue_.push_back(job);
  if (threads_.size() < std::max(1u, limits_.threads)) threads_.emplace_back([this] { work(); });
  wake_.notify_one();
  return true;
}

std::shared_ptr<BackgroundJob> BackgroundCompiler::submit(const std::string &key, const std::string &what,
                                                          BackgroundJob::Compile compile) {
  std::lock_guard<std::mutex> lock(mu_);
  auto &job = jobs_[key];
  if (job) return job;
  job = std::make_shared<BackgroundJob>(key, what, std::move(compile));
  if (!enqueue_locked(job)) {
    job->state_.store(BackgroundJob::State::kRefused, std::memory_order_release);
    log::warn_once("background JIT: the queue is full (" + std::to_string(limits_.queue) +
                   " compiles waiting); kernels wait for a later call to queue them");
  }
  return job;
}

std::shared_ptr<BackgroundJob> BackgroundCompiler::find(const std::string &key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = jobs_.find(key);
  return it == jobs_.end() ? nullptr : it->second;
}

bool BackgroundCompiler::retry(const std::shared_ptr<BackgroundJob> &job) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!has_room_locked()) return false;
  auto refused = BackgroundJob::State::kRefused;  // a waiter may be claiming it
  if (!job->state_.compare_exchange_strong(refused, BackgroundJob::State::kQueued)) return false;
  return enqueue_locked(job);
}

BackgroundCompiler::Counts BackgroundCompiler::counts() const {
  std::lock_guard<std::mutex> lock(mu_);
  Counts c;
  for (const auto &[key, job] : jobs_) {
    switch (job->state()) {
      case BackgroundJob::State::kQueued: ++c.queued; break;
      case BackgroundJob::State::kRunning: ++c.running; break;
      case BackgroundJob::State::kDone: ++c.done; break;
      case BackgroundJob::State::kFailed: ++c.failed; break;
      case BackgroundJob::State::kRefused: ++c.refused; break;
    }
  }
  return c;
}

void BackgroundCompiler::work() {
  for (;;) {
    std::shared_ptr<BackgroundJob> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    job->run_if(BackgroundJob::State::kQueued);  // a waiter may have claimed it
  }
}

}  // namespace gatejit
