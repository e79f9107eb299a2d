// SerialWorker: the background JIT's loader thread (serial_worker.h).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
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
  for (int i = 1; i < 4; ++i)
    worker.post([&, i] {
      std::lock_guard<std::mutex> lock(mu);
      order.push_back(i);
      threads.push_back(std::this_thread::get_id());
    });
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_TRUE(order.empty()) << "a task ran before the blocking one was released";
  }
  release.set_value();
  worker.stop();  // runs what was posted, then joins
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

TEST(SerialWorker, DestructionRunsWhatWasPosted) {
  std::atomic<int> ran{0};
  {
    SerialWorker worker;
    for (int i = 0; i < 8; ++i)
      worker.post([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        ++ran;
      });
  }
  EXPECT_EQ(ran.load(), 8);
}

}  // namespace
}  // namespace gatejit
