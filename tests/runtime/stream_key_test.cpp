// Which launches may share a K-split kernel's module instance: those on the
// same stream. The per-thread default stream handle names a different stream
// on every thread; every other handle is one stream for all threads.
#include <gtest/gtest.h>

#include <cstdint>
#include <thread>

#include "stream_key.h"

namespace gatejit {
namespace {

StreamKey key_on_another_thread(void *stream) {
  StreamKey k;
  std::thread([&] { k = stream_key(stream); }).join();
  return k;
}

TEST(StreamKeyTest, AStreamHandleIsOneStreamOnEveryThread) {
  for (void *handle : {static_cast<void *>(nullptr), reinterpret_cast<void *>(uintptr_t(1)),
                       reinterpret_cast<void *>(uintptr_t(0x7f00aa00))}) {
    const StreamKey here = stream_key(handle), there = key_on_another_thread(handle);
    EXPECT_EQ(here, there) << handle;
    EXPECT_EQ(instance_tag(here), instance_tag(there));
  }
}

TEST(StreamKeyTest, ThePerThreadDefaultStreamIsOneStreamPerThread) {
  void *per_thread = reinterpret_cast<void *>(uintptr_t(2));
  const StreamKey here = stream_key(per_thread), there = key_on_another_thread(per_thread);
  EXPECT_NE(here, there);
  EXPECT_NE(instance_tag(here), instance_tag(there));
  EXPECT_NE(StreamKeyHash()(here), StreamKeyHash()(there));
  EXPECT_EQ(here, stream_key(per_thread));  // the same thread again
}

TEST(StreamKeyTest, DifferentStreamsHaveDifferentInstances) {
  const StreamKey a = stream_key(reinterpret_cast<void *>(uintptr_t(0x1000)));
  const StreamKey b = stream_key(reinterpret_cast<void *>(uintptr_t(0x2000)));
  EXPECT_NE(a, b);
  EXPECT_NE(instance_tag(a), instance_tag(b));
}

}  // namespace
}  // namespace gatejit
