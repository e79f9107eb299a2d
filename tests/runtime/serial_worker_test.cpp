// SerialWorker: the background JIT's loader thread (serial_worker.h).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <stdexcept>
#include <thread>
#include <vector>

#include "serial_worker.h"

namespace gatejit {
namespace {

TEST(SerialWorker, RunsTasksInOrderOffTheCallersThread) {
  SerialWorker worker;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::vector<int> order;
  std::vector<std::thread::id> threads;
  std::mutex mu;
  // The first task blocks: post() must return while it runs.
  worker.post([&] {
    released.wait();
    std::lock_guard<std::mutex> lock(mu);
    order.push_back(0);
    threads.push_back(std::this_thread::get_id());
  });
  std::promise<void> last;
  for (int i = 1; i < 4; ++i)
    worker.post([&, i] {
      std::lock_guard<std::mutex> lock(mu);
      order.push_back(i);
      threads.push_back(std::this_thread::get_id());
      if (i == 3) last.set_value();
    });
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_TRUE(order.empty()) << "a task ran before the blocking one was released";
  }
  release.set_value();
  last.get_future().wait();
  worker.stop();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3}));
  ASSERT_EQ(threads.size(), 4u);
  for (const auto &t : threads) {
    EXPECT_EQ(t, threads.front()) << "one thread runs every task";
    EXPECT_NE(t, std::this_thread::get_id());
  }
}

TEST(SerialWorker, APostAfterStopRunsOnTheCaller) {
  SerialWorker worker;
  worker.stop();
  std::thread::id ran_on;
  worker.post([&] { ran_on = std::this_thread::get_id(); });
  EXPECT_EQ(ran_on, std::this_thread::get_id());
}

// Stopping (the runtime's destruction) lets the running task finish and
// drops the rest: a queue of module loads is not worth waiting for.
TEST(SerialWorker, StopFinishesTheRunningTaskAndDropsTheRest) {
  SerialWorker worker;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> first_started{false}, first_done{false};
  std::atomic<int> rest{0};
  worker.post([&] {
    first_started = true;
    released.wait();
    first_done = true;
  });
  // Until the worker thread has taken the first task, stop() would drop it too.
  while (!first_started) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  for (int i = 0; i < 7; ++i) worker.post([&] { ++rest; });
  std::thread stopper([&] { worker.stop(); });
  // The first task blocks the worker, so the queue empties only by stop().
  while (worker.pending() != 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  release.set_value();
  stopper.join();
  EXPECT_TRUE(first_done.load());
  EXPECT_EQ(rest.load(), 0);
}

TEST(SerialWorker, AThrowingTaskLeavesTheWorkerRunning) {
  SerialWorker worker;
  std::promise<void> after;
  worker.post([] { throw std::runtime_error("task failed"); });
  worker.post([&] { after.set_value(); });
  EXPECT_EQ(after.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready);
}

}  // namespace
}  // namespace gatejit
