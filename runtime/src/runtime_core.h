// RuntimeCore: what a gatejit_runtime_t handle points at. Resolves each
// distinct (contract, device) once, loads one module per (device, code
// object), and launches. After the first call for a contract, a call is a
// shared-lock hash lookup and a launch: no allocation, file I/O or sync.
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>

#include "device_backend.h"
#include "gatejit/gatejit.h"
#include "resolver.h"
#include "serial_worker.h"
#include "stream_key.h"

namespace gatejit {

struct RuntimeOptions {
  ResolverOptions resolver;
  std::vector<std::string> bundles;
  // GATEJIT_TEMPLATE: auto (default), or a template every call must use (for
  // A/B comparisons and for testing a template where auto would pick another).
  std::string template_override;
  // GATEJIT_NATIVE_CODE=1: PTX kernels load as cubins kept in the disk cache
  // (native_code_cache.h; off by default).
  bool native_code = false;
  // Load the shipped bundle of generic kernels (shipped_bundle.h) after the
  // named ones; GATEJIT_SHIPPED_BUNDLE=0 leaves it out.
  bool shipped_bundle = true;
  // A malformed environment variable (GATEJIT_DISABLE_JIT=maybe) or option
  // value: init() fails with it.
  Status env_status;
};

// Options from the C struct (may be null; as this library's struct: the C
// API copies a smaller one in first) and the environment.
RuntimeOptions runtime_options_from(const gatejit_runtime_options_t *o);

class RuntimeCore {
 public:
  explicit RuntimeCore(RuntimeOptions options);
  ~RuntimeCore();
  RuntimeCore(const RuntimeCore &) = delete;
  RuntimeCore &operator=(const RuntimeCore &) = delete;

  // Loads the bundles named in the options and, unless the JIT is disabled,
  // attaches the JIT library when one is found (jit_library.h).
  Status init();
  Resolver &resolver() { return resolver_; }

  Status launch(const gatejit_gate_args_t &args);
  // Also waits for a kernel compiling in the background and swaps it in.
  Status prepare(const gatejit_gate_args_t &args);
  StatusOr<std::string> explain(const gatejit_gate_args_t &args);

 private:
  struct Loaded {
    DeviceBackend *backend = nullptr;
    int ordinal = 0;
    FunctionHandle fn = nullptr;
    LaunchGeometry geometry;
    std::vector<AbiArg> abi;  // the kernel's declared arguments, in order
  };
  struct CallKey {
    Contract contract;
    int device_kind;
    int ordinal;
    bool operator==(const CallKey &) const = default;
  };
  struct CallKeyHash {
    size_t operator()(const CallKey &k) const;
  };
  // A K-split kernel (LaunchGeometry::k_blocks > 1) keeps its partials and
  // arrival counters in its module, so launches that may overlap must not
  // share one: each stream (stream_key.h) gets its own instance of the
  // module, named in modules_ by instance_tag (so every contract that
  // resolves to the same code object shares a stream's instance). A slot
  // remembers each stream's function; module_function makes the load happen
  // once however many callers race for it.
  using StreamFunction = std::atomic<FunctionHandle>;
  // Resolved once; other threads with the same key wait on `mu`. A failed
  // resolution is not kept: a later call (after load_bundle, say) tries again.
  // Background JIT: a slot served while its specialised kernel compiles keeps
  // the job (`pending`, set before `ready`); once the job is done, a call
  // outside a graph capture has the loader thread load the kernel into a
  // second slot (`loading`) and publish it in `upgraded`, which later calls
  // follow (prepare loads it itself and waits). Slots are never
  // freed while the runtime lives, so a captured graph's kernel stays loaded.
  struct Slot {
    std::mutex mu;
    std::atomic<bool> ready{false};
    Loaded kernel;
    std::string explanation;
    std::shared_ptr<const KernelBinary> split_binary;  // K-split kernels: to load more instances
    std::shared_mutex streams_mu;
    std::unordered_map<StreamKey, std::unique_ptr<StreamFunction>, StreamKeyHash> streams;
    std::shared_ptr<BackgroundJob> pending;
    std::mutex upgrade_mu;
    std::atomic<Slot *> upgraded{nullptr};
    std::unique_ptr<Slot> upgrade;         // owns what `upgraded` points at
    std::atomic<bool> upgrade_failed{false};
    std::atomic<bool> loading{false};      // the swap is posted to the loader thread
  };
  struct DeviceSlot {
    std::once_flag once;
    StatusOr<DeviceInfo> info = device_error("not queried");
  };
  struct Module {
    DeviceBackend *backend;
    int ordinal;
    ModuleHandle module;
    FunctionHandle fn;
  };

  Status attach_jit_library();
  void load_shipped_bundle();
  StatusOr<DeviceBackend *> backend_for(gatejit_device_kind_t kind);
  StatusOr<Target> device_target(gatejit_device_kind_t kind, int ordinal);
  // The contract of a call: the device's target, the descriptors, and the
  // GATEJIT_TEMPLATE override.
  StatusOr<Contract> call_contract(const gatejit_gate_args_t &args);
  // `wait`: a kernel compiling in the background is waited for (prepare).
  StatusOr<Slot *> slot_for(const gatejit_gate_args_t &args, bool wait = false);
  // `stream`: the resolving call's, whose instance a K-split kernel's first
  // module load becomes.
  Status resolve_into(Slot &slot, const CallKey &key, void *stream);
  Status load_into(Slot &slot, const CallKey &key, const Resolution &resolved, const StreamKey &stream);
  // The slot a call uses: `slot`, or the one its background kernel was
  // swapped into (swapping it in first when it is ready and `stream` is not
  // capturing a graph).
  Slot *settled(Slot &slot, const CallKey &key, void *stream, bool wait);
  // The call's backend where `stream` is not capturing a graph; null where it
  // is, or where the backend cannot tell (nothing may be loaded for it then).
  DeviceBackend *backend_free_to_load(const CallKey &key, void *stream);
  // Loads the finished job's kernel into the upgrade slot and publishes it.
  // `stream`: the key of the call that asked (taken on its thread).
  Slot *swap_in(Slot &slot, const CallKey &key, const StreamKey &stream);
  // The function to launch on `stream`: the slot's own, or for a K-split
  // kernel the stream's instance (loaded on the stream's first call).
  StatusOr<FunctionHandle> function_for_stream(Slot &slot, void *stream);
  StatusOr<FunctionHandle> function_for_key(Slot &slot, const StreamKey &sk);
  // Whether the slot's K-split kernel has this stream's instance loaded.
  static bool has_instance(Slot &slot, const StreamKey &sk);
  // `instance` tells apart module instances of one code object ("" = shared).
  StatusOr<FunctionHandle> module_function(DeviceBackend &backend, int ordinal, const KernelBinary &kb,
                                           const std::string &instance = "");

  Resolver resolver_;
  RuntimeOptions options_;
  TemplateKind template_kind_ = TemplateKind::kAuto;  // from GATEJIT_TEMPLATE, set by init()
  std::shared_mutex calls_mu_;
  std::unordered_map<CallKey, std::unique_ptr<Slot>, CallKeyHash> calls_;
  std::shared_mutex devices_mu_;  // shared for lookups: every call takes it
  std::unordered_map<int64_t, std::unique_ptr<DeviceSlot>> devices_;
  std::mutex modules_mu_;
  std::unordered_map<std::string, Module> modules_;  // "<backend>:<ordinal>:<binary key>[:<instance>]"
  SerialWorker loader_;  // stopped first by the destructor
};

}  // namespace gatejit
