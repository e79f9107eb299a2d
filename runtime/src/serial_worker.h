// SerialWorker: one thread that runs tasks in the order they were posted.
// The background JIT's module loads go through it, so that the call that
// finds a compiled kernel does not wait for its module load (on CUDA the
// driver compiles the PTX there: tens of milliseconds). The thread starts on
// the first post; stop() (also the destructor) drops what has not started,
// lets the running task finish and joins; a post after stop() runs the task
// on the caller's thread. An exception out of a task is swallowed.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace gatejit {

class SerialWorker {
 public:
  SerialWorker() = default;
  ~SerialWorker();
  SerialWorker(const SerialWorker &) = delete;
  SerialWorker &operator=(const SerialWorker &) = delete;

  void post(std::function<void()> task);
  void stop();
  size_t pending();  // posted, not started

 private:
  void run();

  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace gatejit
