#include "runtime_core.h"

#include "launch_args.h"

#include "gatejit/env_flag.h"
#include "jit_library.h"

#include <cstdlib>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <algorithm>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "contract_derivation.h"
#include "log.h"
#include "native_code_cache.h"
#include "self_location.h"
#include "shipped_bundle.h"

namespace gatejit {
namespace {

// The entry for `key`, created empty on first use: a lookup under the shared
// lock (every call after the first), an insert under the exclusive one.
// Entries are never removed, so the pointer stays valid without the lock.
template <class Map>
auto *find_or_create(Map &map, std::shared_mutex &mu, const typename Map::key_type &key) {
  {
    std::shared_lock lock(mu);
    auto it = map.find(key);
    if (it != map.end()) return it->second.get();
  }
  std::unique_lock lock(mu);
  auto &entry = map[key];
  if (!entry) entry = std::make_unique<typename Map::mapped_type::element_type>();
  return entry.get();
}

std::vector<std::string> split_paths(const char *list) {
  std::vector<std::string> out;
  if (!list) return out;
  const std::string all(list);
  size_t start = 0;
  while (start <= all.size()) {
    const size_t end = std::min(all.find(':', start), all.size());
    if (end > start) out.push_back(all.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace

RuntimeOptions runtime_options_from(const gatejit_runtime_options_t *o) {
  RuntimeOptions r;
  auto env = options_from_env();
  if (env.ok()) r.resolver.cache = *env;
  else log::warn_once(env.status().message() + "; using the default cache options");
  auto disable_jit = env_flag("GATEJIT_DISABLE_JIT");
  if (disable_jit.ok()) r.resolver.disable_jit = *disable_jit;
  else r.env_status = disable_jit.status();
  auto native_code = env_flag("GATEJIT_NATIVE_CODE");
  if (native_code.ok()) r.native_code = *native_code;
  else if (r.env_status.ok()) r.env_status = native_code.status();
  auto shipped = env_flag("GATEJIT_SHIPPED_BUNDLE", true);
  if (shipped.ok()) r.shipped_bundle = *shipped;
  else if (r.env_status.ok()) r.env_status = shipped.status();
  std::string record;
  if (const char *path = std::getenv("GATEJIT_RECORD")) record = path;
  JitMode jit = JitMode::kSync;
  if (const char *mode = std::getenv("GATEJIT_JIT"); mode && *mode) {
    auto parsed = parse_jit_mode(mode, "GATEJIT_JIT");
    if (parsed.ok()) jit = *parsed;
    else if (r.env_status.ok()) r.env_status = parsed.status();
  }
  if (o) {
    int requested;  // an int, whatever a C caller stored in the enum field
    std::memcpy(&requested, &o->jit_mode, sizeof requested);
    switch (requested) {
      case GATEJIT_JIT_DEFAULT: break;
      case GATEJIT_JIT_SYNC: jit = JitMode::kSync; break;
      case GATEJIT_JIT_BACKGROUND: jit = JitMode::kBackground; break;
      case GATEJIT_JIT_OFF: jit = JitMode::kOff; break;
      default:
        r.env_status = invalid_argument("options.jit_mode = " + std::to_string(requested) +
                                        ": allowed values are GATEJIT_JIT_DEFAULT (0), GATEJIT_JIT_SYNC (1), "
                                        "GATEJIT_JIT_BACKGROUND (2), GATEJIT_JIT_OFF (3)");
    }
    if (o->record_path) record = o->record_path;
    if (o->disable_shipped_bundle) r.shipped_bundle = false;
    if (o->cache_dir) r.resolver.cache.dir = o->cache_dir;
    if (o->disable_cache) r.resolver.disable_cache = true;
    if (o->cache_read_only) r.resolver.cache.read_only = true;
    if (o->disable_jit) r.resolver.disable_jit = true;
    for (auto &p : split_paths(o->bundle_path)) r.bundles.push_back(p);
  }
  for (auto &p : split_paths(std::getenv("GATEJIT_BUNDLE_PATH"))) r.bundles.push_back(p);
  if (!record.empty()) r.resolver.recorder = std::make_shared<ContractRecorder>(record);
  if (jit == JitMode::kOff) r.resolver.disable_jit = true;
  r.resolver.background_jit = jit == JitMode::kBackground && !r.resolver.disable_jit;
  if (const char *t = std::getenv("GATEJIT_TEMPLATE")) r.template_override = t;
  return r;
}

size_t RuntimeCore::CallKeyHash::operator()(const CallKey &k) const {
  // Contract is plain data (enums, integers, bools): hash its fields.
  const Contract &c = k.contract;
  const int64_t fields[] = {int64_t(c.target), c.m, c.m_dynamic, c.m_max, c.n, c.k, int64_t(c.dtype_hidden),
                            int64_t(c.dtype_weight), int64_t(c.dtype_attn), int64_t(c.dtype_out), int64_t(c.out_scale), c.ld_hidden,
                            c.ld_weight, c.ld_attn, c.ld_out, c.align, int64_t(c.act), int64_t(c.rounding),
                            int64_t(c.template_kind), k.device_kind, k.ordinal};
  return size_t(XXH3_64bits(fields, sizeof fields));
}

RuntimeCore::RuntimeCore(RuntimeOptions options) : resolver_(options.resolver), options_(std::move(options)) {}

RuntimeCore::~RuntimeCore() {
  loader_.stop();  // a swap in flight uses the slots and modules below
  for (auto &[key, m] : modules_) m.backend->unload_module(m.ordinal, m.module);
}

Status RuntimeCore::init() {
  GATEJIT_RETURN_IF_ERROR(options_.env_status);
  if (!options_.template_override.empty()) {
    auto kind = parse_template(options_.template_override);
    if (!kind.ok()) return invalid_argument("GATEJIT_TEMPLATE: " + kind.status().message());
    template_kind_ = *kind;
  }
  for (const std::string &path : options_.bundles) GATEJIT_RETURN_IF_ERROR(resolver_.add_bundle(path));
  if (options_.shipped_bundle) load_shipped_bundle();
  return attach_jit_library();
}

// Not named by the user: a missing or unreadable shipped bundle is a note or
// a warning, never an error (the runtime still serves bundles, cache and JIT).
void RuntimeCore::load_shipped_bundle() {
  const auto path = find_shipped_bundle();
  if (!path) {
    std::string searched;
    for (const std::string &p : shipped_bundle_search_path(folder_of_runtime_binary()))
      searched += (searched.empty() ? "" : ", ") + p;
    log::info(std::string("no shipped bundle ") + kShippedBundleName + " (searched " + searched + ")");
    return;
  }
  if (Status s = resolver_.add_bundle(*path, "the shipped bundle"); !s.ok())
    log::warn_once("shipped bundle not loaded: " + s.message());
}

Status RuntimeCore::attach_jit_library() {
  if (options_.resolver.disable_jit) return Status::Ok();
  const auto location = find_jit_library();
  if (!location) return Status::Ok();
  auto hook = load_jit_library(location->path);
  if (hook.ok()) {
    resolver_.set_jit(std::move(*hook));
    return Status::Ok();
  }
  // Named by the user: not loading it is an error. Found beside us: a warning.
  if (location->explicit_choice) return Status(hook.status().code(), "GATEJIT_JIT_LIBRARY: " + hook.status().message());
  log::warn_once(hook.status().message() + "; running without the JIT");
  return Status::Ok();
}

StatusOr<DeviceBackend *> RuntimeCore::backend_for(gatejit_device_kind_t kind) {
  if (kind == GATEJIT_DEVICE_CUDA) return &cuda_backend();
  if (kind == GATEJIT_DEVICE_HIP) return &hip_backend();
  return invalid_argument("device_kind = " + std::to_string(int(kind)) +
                          ": allowed are GATEJIT_DEVICE_CUDA, GATEJIT_DEVICE_HIP");
}

StatusOr<Target> RuntimeCore::device_target(gatejit_device_kind_t kind, int ordinal) {
  auto backend = backend_for(kind);
  if (!backend.ok()) return backend.status();
  if (ordinal < 0) return invalid_argument("device_ordinal = " + std::to_string(ordinal) + ": must be >= 0");
  const int64_t key = (int64_t(kind) << 32) | uint32_t(ordinal);
  DeviceSlot *slot = find_or_create(devices_, devices_mu_, key);
  std::call_once(slot->once, [&] { slot->info = (*backend)->device_info(ordinal); });
  if (!slot->info.ok()) return slot->info.status();
  return slot->info->target;
}

StatusOr<FunctionHandle> RuntimeCore::module_function(DeviceBackend &backend, int ordinal, const KernelBinary &kb,
                                                      const std::string &instance) {
  std::string key = std::string(backend.name()) + ":" + std::to_string(ordinal) + ":" + kb.key;
  if (!instance.empty()) key += ":" + instance;
  std::lock_guard<std::mutex> lock(modules_mu_);
  auto it = modules_.find(key);
  if (it != modules_.end()) return it->second.fn;
  if (kb.geometry.tensor_maps.any()) GATEJIT_RETURN_IF_ERROR(backend.tensor_maps_available());
  ModuleHandle module = nullptr;
  // The disk cache is opened for native code only when that is on.
  const NativeCode native = options_.native_code ? native_code_for(backend, ordinal, kb, resolver_.cache())
                                                 : NativeCode{kb.code, "as it is"};
  auto fn = backend.load_function(ordinal, native.code, kb.symbol, kb.geometry.shared_bytes, &module);
  if (!fn.ok()) return fn.status();
  modules_[key] = Module{&backend, ordinal, module, *fn};
  log::info("loaded module " + kb.symbol + " on " + backend.name() + ":" + std::to_string(ordinal) + " (" +
             native.how + ")");
  return *fn;
}

Status RuntimeCore::resolve_into(Slot &slot, const CallKey &key, void *stream) {
  GATEJIT_RETURN_IF_ERROR(backend_for(gatejit_device_kind_t(key.device_kind)).status());
  auto resolved = resolver_.resolve(key.contract);
  if (!resolved.ok()) return resolved.status();
  GATEJIT_RETURN_IF_ERROR(load_into(slot, key, *resolved, stream_key(stream)));
  slot.pending = resolved->pending;
  return Status::Ok();
}

Status RuntimeCore::load_into(Slot &slot, const CallKey &key, const Resolution &resolved, const StreamKey &stream) {
  auto backend = backend_for(gatejit_device_kind_t(key.device_kind));
  if (!backend.ok()) return backend.status();
  if (resolved.binary.target != key.contract.target)
    return internal_error("resolved kernel is for " + std::string(target_name(resolved.binary.target)) +
                          ", device needs " + target_name(key.contract.target));
  slot.kernel = Loaded{*backend, key.ordinal, nullptr, resolved.binary.geometry, declared_abi(resolved.binary)};
  // The scales reach the kernel only through a declared argument: a kernel
  // for a scaled contract that does not take them would read none.
  // (validate_abi admits the scales only as a pointer.)
  const bool takes_scales = declares(slot.kernel.abi, AbiArgKind::kPointer, AbiValue::kWeightScale);
  if (takes_scales != (key.contract.weight_scale != WeightScale::kNone))
    return internal_error("kernel " + resolved.binary.symbol + " (" + abi_text(slot.kernel.abi) + ") " +
                          (takes_scales ? "takes weight scales its contract does not have"
                                        : "does not take the weight scales of its contract"));
  const bool writes_scales = declares(slot.kernel.abi, AbiArgKind::kPointer, AbiValue::kOutScale);
  if (writes_scales != key.contract.fp8_out())
    return internal_error("kernel " + resolved.binary.symbol + " (" + abi_text(slot.kernel.abi) + ") " +
                          (writes_scales ? "writes out scales its contract does not have"
                                         : "does not write the out scales of its contract"));
  // A K-split kernel's first load is the resolving stream's instance; so is
  // a specialised fp8-out kernel's (its group counters and staged values
  // live in the module, like the K-split's workspace).
  const bool module_state = writes_scales && !resolved.binary.geometry.grid_y_is_m;
  if (resolved.binary.geometry.k_blocks > 1 || module_state)
    slot.split_binary = std::make_shared<const KernelBinary>(resolved.binary);
  auto fn = slot.split_binary ? function_for_key(slot, stream)
                              : module_function(**backend, key.ordinal, resolved.binary);
  if (!fn.ok()) return fn.status();
  slot.kernel.fn = *fn;
  slot.explanation = resolved.explanation;
  log::info("resolved " + canonical_text(key.contract) + ": " + slot.explanation);
  return Status::Ok();
}

StatusOr<Contract> RuntimeCore::call_contract(const gatejit_gate_args_t &args) {
  auto target = device_target(args.device_kind, args.device_ordinal);
  if (!target.ok()) return target.status();
  auto contract = derive_contract(args, *target);
  if (!contract.ok()) return contract.status();
  contract->template_kind = template_kind_;
  return contract;
}

StatusOr<RuntimeCore::Slot *> RuntimeCore::slot_for(const gatejit_gate_args_t &args, bool wait) {
  auto contract = call_contract(args);
  if (!contract.ok()) return contract.status();
  const CallKey key{*contract, int(args.device_kind), args.device_ordinal};
  Slot *slot = find_or_create(calls_, calls_mu_, key);
  if (slot->ready.load(std::memory_order_acquire)) return slot->pending ? settled(*slot, key, args.stream, wait) : slot;
  {
    // Only callers of this same contract wait here; the map lock is not held.
    std::lock_guard<std::mutex> lock(slot->mu);
    if (!slot->ready.load(std::memory_order_relaxed)) {
      GATEJIT_RETURN_IF_ERROR(resolve_into(*slot, key, args.stream));
      slot->ready.store(true, std::memory_order_release);
    }
  }
  return slot->pending ? settled(*slot, key, args.stream, wait) : slot;
}

DeviceBackend *RuntimeCore::backend_free_to_load(const CallKey &key, void *stream) {
  auto backend = backend_for(gatejit_device_kind_t(key.device_kind));
  if (!backend.ok()) return nullptr;
  auto capturing = (*backend)->stream_capturing(key.ordinal, stream);
  return capturing.ok() && !*capturing ? *backend : nullptr;
}

RuntimeCore::Slot *RuntimeCore::settled(Slot &slot, const CallKey &key, void *stream, bool wait) {
  if (Slot *up = slot.upgraded.load(std::memory_order_acquire)) {
    // A K-split kernel swapped in without an instance for this stream: a
    // capture on it keeps the old kernel (it may not load one there).
    if (!up->split_binary || has_instance(*up, stream_key(stream))) return up;
    return backend_free_to_load(key, stream) ? up : &slot;
  }
  BackgroundJob &job = *slot.pending;
  if (wait) job.wait();
  if (!job.finished()) {
    if (job.state() == BackgroundJob::State::kRefused) resolver_.retry_background(slot.pending);
    return &slot;
  }
  if (slot.upgrade_failed.load(std::memory_order_relaxed)) return &slot;
  // Never inside a graph capture (nor where the backend cannot tell): the
  // capture keeps the kernel it started with.
  DeviceBackend *loader_backend = backend_free_to_load(key, stream);
  if (!loader_backend) return &slot;
  // The key is taken here: the per-thread default stream is the caller's.
  const StreamKey sk = stream_key(stream);
  if (wait) return swap_in(slot, key, sk);
  // The call keeps its kernel; the loader thread loads the new one (on CUDA
  // the driver compiles its PTX at the load) and later calls follow it.
  if (!slot.loading.exchange(true, std::memory_order_acq_rel)) {
    try {
      loader_.post([this, &slot, key, sk, loader_backend] {
        loader_backend->relax_capture_mode_of_this_thread();
        try {
          swap_in(slot, key, sk);
        } catch (const std::exception &e) {  // out of memory, say: keep serving what the slot has
          slot.upgrade_failed.store(true, std::memory_order_relaxed);
          log::warn("background JIT: " + canonical_text(key.contract) + ": loading failed: " + e.what());
        }
      });
    } catch (const std::exception &) {
      slot.loading.store(false, std::memory_order_release);  // not posted: a later call tries again
    }
  }
  return &slot;
}

RuntimeCore::Slot *RuntimeCore::swap_in(Slot &slot, const CallKey &key, const StreamKey &stream) {
  std::lock_guard<std::mutex> lock(slot.upgrade_mu);
  if (Slot *up = slot.upgraded.load(std::memory_order_acquire)) return up;
  const auto &result = slot.pending->result();
  Status s = result.status();
  auto next = std::make_unique<Slot>();
  if (s.ok()) s = load_into(*next, key, Resolution{result->binary, result->explanation, {}}, stream);
  // A K-split kernel: an instance for every stream the old kernel ran on,
  // so that a capture on any of them finds one loaded.
  if (s.ok() && next->split_binary) {
    std::vector<StreamKey> known;
    {
      std::shared_lock<std::shared_mutex> lock(slot.streams_mu);
      for (const auto &entry : slot.streams) known.push_back(entry.first);
    }
    for (const StreamKey &other : known)
      if (auto fn = function_for_key(*next, other); !fn.ok()) s = fn.status();
  }
  if (!s.ok()) {
    // Failed compiles are already in the log and in explain: keep serving.
    slot.upgrade_failed.store(true, std::memory_order_relaxed);
    if (result.ok()) log::warn("background JIT: " + canonical_text(key.contract) + ": " + s.message() +
                               "; the call keeps " + slot.explanation);
    return &slot;
  }
  next->ready.store(true, std::memory_order_relaxed);
  log::info("swapped in " + canonical_text(key.contract) + ": " + next->explanation);
  slot.upgrade = std::move(next);
  slot.upgraded.store(slot.upgrade.get(), std::memory_order_release);
  return slot.upgrade.get();
}

StatusOr<FunctionHandle> RuntimeCore::function_for_stream(Slot &slot, void *stream) {
  if (!slot.split_binary) return slot.kernel.fn;
  return function_for_key(slot, stream_key(stream));
}

bool RuntimeCore::has_instance(Slot &slot, const StreamKey &sk) {
  std::shared_lock<std::shared_mutex> lock(slot.streams_mu);
  auto it = slot.streams.find(sk);
  return it != slot.streams.end() && it->second->load(std::memory_order_acquire) != nullptr;
}

StatusOr<FunctionHandle> RuntimeCore::function_for_key(Slot &slot, const StreamKey &sk) {
  if (!slot.split_binary) return slot.kernel.fn;
  StreamFunction *known = find_or_create(slot.streams, slot.streams_mu, sk);
  if (FunctionHandle fn = known->load(std::memory_order_acquire)) return fn;
  auto fn = module_function(*slot.kernel.backend, slot.kernel.ordinal, *slot.split_binary, instance_tag(sk));
  if (!fn.ok()) return fn.status();
  known->store(*fn, std::memory_order_release);
  return *fn;
}

// Also loads the stream's instance of a K-split kernel, so that a launch
// captured into a CUDA graph afterwards loads nothing.
Status RuntimeCore::prepare(const gatejit_gate_args_t &args) {
  auto slot = slot_for(args, /*wait=*/true);
  if (!slot.ok()) return slot.status();
  auto fn = function_for_stream(**slot, args.stream);
  return fn.ok() ? Status::Ok() : fn.status();
}

Status RuntimeCore::launch(const gatejit_gate_args_t &args) {
  auto slot_or = slot_for(args);
  if (!slot_or.ok()) return slot_or.status();
  const Loaded &k = (*slot_or)->kernel;
  auto fn = function_for_stream(**slot_or, args.stream);
  if (!fn.ok()) return fn.status();
  // The arguments the kernel declares (kernel_abi.h), packed in its order.
  LaunchValues v{args.hidden.data, args.weight.data, args.attn.data, args.out.data,
                 args.hidden.rows,  args.weight.rows,  args.hidden.cols, args.hidden.ld,
                 args.weight.ld,    args.attn.ld,      args.out.ld};
  v.weight_scale = args.weight_scale.data;
  v.out_scale = args.out_scale.data;
  const TensorMapBoxes &boxes = k.geometry.tensor_maps;
  if (declares_tensor_map(k.abi, AbiValue::kWeight))
    GATEJIT_RETURN_IF_ERROR(k.backend->encode_tensor_map({"weight", v.weight, uint64_t(v.n), uint64_t(args.weight.cols),
                                                          uint64_t(v.ld_weight), boxes.box_k, boxes.weight_rows},
                                                         &v.weight_map));
  if (declares_tensor_map(k.abi, AbiValue::kHidden))
    GATEJIT_RETURN_IF_ERROR(k.backend->encode_tensor_map({"hidden", v.hidden, uint64_t(v.m), uint64_t(args.hidden.cols),
                                                          uint64_t(v.ld_hidden), boxes.box_k, boxes.hidden_rows},
                                                         &v.hidden_map));
  LaunchSlots params = pack_launch_args(k.abi, v);
  const std::array<uint32_t, 3> block = {k.geometry.block_x, 1, 1};
  if (!k.geometry.grid_y_is_m) {
    return k.backend->launch(k.ordinal, *fn, k.geometry.launch_grid(v.n, v.m), block, k.geometry.shared_bytes,
                             args.stream, params.data());
  }
  // One grid row per output row: at most 65535 rows a launch (the grid's y
  // limit), so a long prefill is several launches over row ranges.
  constexpr int64_t kMaxGridY = 65535;
  const int64_t total_m = v.m;
  for (int64_t m0 = 0; m0 < total_m; m0 += kMaxGridY) {
    v.m = std::min(kMaxGridY, total_m - m0);
    v.hidden = static_cast<char *>(args.hidden.data) + size_t(m0 * v.ld_hidden * element_bytes(args.hidden));
    v.attn = static_cast<char *>(args.attn.data) + size_t(m0 * v.ld_attn * element_bytes(args.attn));
    v.out = static_cast<char *>(args.out.data) + size_t(m0 * v.ld_out * element_bytes(args.out));
    if (v.out_scale)
      v.out_scale = static_cast<char *>(args.out_scale.data) + size_t(m0 * args.out_scale.ld * element_bytes(args.out_scale));
    GATEJIT_RETURN_IF_ERROR(k.backend->launch(k.ordinal, *fn, {k.geometry.grid_x(v.n), uint32_t(v.m), 1}, block,
                                              k.geometry.shared_bytes, args.stream, params.data()));
  }
  return Status::Ok();
}

StatusOr<std::string> RuntimeCore::explain(const gatejit_gate_args_t &args) {
  auto contract = call_contract(args);
  if (!contract.ok()) return contract.status();
  // A call served while its kernel compiles in the background: what it uses
  // now, and where the compile stands.
  const Slot *slot = nullptr;
  {
    std::shared_lock lock(calls_mu_);
    auto it = calls_.find(CallKey{*contract, int(args.device_kind), args.device_ordinal});
    if (it != calls_.end() && it->second->ready.load(std::memory_order_acquire) && it->second->pending)
      slot = it->second.get();
  }
  if (!slot) return resolver_.explain(*contract);
  if (const Slot *up = slot->upgraded.load(std::memory_order_acquire)) return up->explanation;
  const BackgroundJob &job = *slot->pending;
  std::string now = job.describe();
  if (job.state() == BackgroundJob::State::kDone)
    now += slot->upgrade_failed.load(std::memory_order_relaxed)
               ? "; not swapped in (the log says why)"
               : slot->loading.load(std::memory_order_acquire)
                   ? "; its module loads off the calling thread, then calls use it"
                   : "; the next call outside a graph capture swaps it in";
  return slot->explanation + " [now " + now + "]";
}

}  // namespace gatejit
