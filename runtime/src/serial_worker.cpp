#include "serial_worker.h"

namespace gatejit {

SerialWorker::~SerialWorker() { stop(); }

void SerialWorker::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    tasks_.clear();  // what has not started is dropped; the running task finishes
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

size_t SerialWorker::pending() {
  std::lock_guard<std::mutex> lock(mu_);
  return tasks_.size();
}

void SerialWorker::post(std::function<void()> task) {
  std::unique_lock<std::mutex> lock(mu_);
  if (stopping_) {
    lock.unlock();
    task();
    return;
  }
  tasks_.push_back(std::move(task));
  if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
  wake_.notify_one();
}

void SerialWorker::run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
    if (tasks_.empty()) return;  // stopping, and nothing left to run
    std::function<void()> task = std::move(tasks_.front());
    tasks_.pop_front();
    lock.unlock();
    try {
      task();
    } catch (...) {  // a task reports its own failures; the worker outlives them
    }
    lock.lock();
  }
}

}  // namespace gatejit
