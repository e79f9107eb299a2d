#include "stream_key.h"

#include <cstdint>
#include <cstdio>

namespace gatejit {

size_t StreamKeyHash::operator()(const StreamKey &k) const {
  return std::hash<void *>()(k.stream) ^ (std::hash<std::thread::id>()(k.thread) << 1);
}

StreamKey stream_key(void *stream) {
  constexpr uintptr_t kPerThreadDefaultStream = 2;
  StreamKey k{stream, {}};
  if (reinterpret_cast<uintptr_t>(stream) == kPerThreadDefaultStream) k.thread = std::this_thread::get_id();
  return k;
}

std::string instance_tag(const StreamKey &k) {
  char tag[64];
  std::snprintf(tag, sizeof tag, "stream-%p-%zx", k.stream, std::hash<std::thread::id>()(k.thread));
  return tag;
}

}  // namespace gatejit
