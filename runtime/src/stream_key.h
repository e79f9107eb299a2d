// StreamKey: the stream a launch runs on, for work that must not overlap
// (a K-split kernel's workspace lives in its module: one instance per
// stream). A stream is its handle; the per-thread default stream handle
// (CU_STREAM_PER_THREAD, hipStreamPerThread: both 2) is a different stream
// on every thread, so for it the key also holds the calling thread.
#pragma once

#include <cstddef>
#include <string>
#include <thread>

namespace gatejit {

struct StreamKey {
  void *stream = nullptr;
  std::thread::id thread;  // set only for the per-thread default stream
  bool operator==(const StreamKey &) const = default;
};

struct StreamKeyHash {
  size_t operator()(const StreamKey &k) const;
};

// The key of `stream` as called from this thread.
StreamKey stream_key(void *stream);

// A name for the key's module instance, unique per key.
std::string instance_tag(const StreamKey &k);

}  // namespace gatejit
