#include "native_code_cache.h"

#include "log.h"

namespace gatejit {

std::string native_toolchain(const KernelBinary &kb, const std::string &tag) {
  return kb.toolchain + "/native:" + tag;
}

NativeCode native_code_for(DeviceBackend &backend, int ordinal, const KernelBinary &kb, DiskCache *cache) {
  if (kb.format != BinaryFormat::kPtx) return {kb.code, "not native: " + std::string(binary_format_name(kb.format)) +
                                                            " is machine code already"};
  auto tag = backend.native_tag(ordinal);
  if (!tag.ok() || tag->empty())
    return {kb.code, "not native: " + (tag.ok() ? std::string(backend.name()) + " loads it as it is"
                                                : tag.status().message())};
  const std::string toolchain = native_toolchain(kb, *tag);
  const std::string key = cache_key(kb.key, toolchain);
  if (cache) {
    auto hit = cache->get(key, kb.key, toolchain);
    if (hit.ok() && hit->format == BinaryFormat::kCubin && hit->symbol == kb.symbol) return {hit->code, "cache hit"};
    if (hit.ok()) log::warn_once(cache->entry_path(key) + ": not the cubin of " + kb.symbol + "; compiling it again");
  }
  auto cubin = backend.compile_native(ordinal, kb.code);
  if (!cubin.ok()) {
    log::warn_once("native code for " + kb.symbol + ": " + cubin.status().message() +
                   "; loading its PTX (the driver compiles it at every load)");
    return {kb.code, "not native: " + cubin.status().message()};
  }
  if (!cache) return {std::move(*cubin), "compiled, not cached: no disk cache"};
  KernelBinary native = kb;
  native.format = BinaryFormat::kCubin;
  native.toolchain = toolchain;
  native.code = std::move(*cubin);
  Status stored = cache->put(key, native);  // refuses a read-only cache itself
  if (!stored.ok()) log::debug("native code for " + kb.symbol + " not cached: " + stored.message());
  return {std::move(native.code), stored.ok() ? "compiled, cached" : "compiled, not cached: " + stored.message()};
}

}  // namespace gatejit
