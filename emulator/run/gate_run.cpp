#include "gatejit/emulator/gate_run.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <future>
#include <thread>

#include <nlohmann/json.hpp>

#include "disk_cache.h"
#include "gatejit/compiler/compiler.h"
#include "gatejit/gatejit.h"
#include "gatejit/jit_hook.h"
#include "gatejit/template_choice.h"
#include "launch_args.h"
#include "support/c_dtype.h"
#include "support/gate_reference.h"

namespace gatejit::emulator {
namespace {

using reference::HostTensor;

// A device buffer of the emulated GPU holding `bytes` at `offset` past an
// allocation (the misaligned cases).
struct DeviceBytes {
  Device *dev = nullptr;
  uint8_t *base = nullptr;
  size_t offset = 0, bytes = 0;
  DeviceBytes() = default;
  DeviceBytes(Device &d, size_t n, size_t off) : dev(&d), offset(off), bytes(n) {
    base = static_cast<uint8_t *>(d.allocate(n + off + 64));
  }
  DeviceBytes(DeviceBytes &&o) noexcept { *this = std::move(o); }
  DeviceBytes &operator=(DeviceBytes &&o) noexcept {
    std::swap(dev, o.dev), std::swap(base, o.base), std::swap(offset, o.offset), std::swap(bytes, o.bytes);
    return *this;
  }
  ~DeviceBytes() {
    if (dev && base) dev->release(base);
  }
  uint8_t *data() const { return base + offset; }
};

// NaN in the storage dtype (0x7f for fp8 e4m3), so an unwritten element fails.
void poison(uint8_t *p, size_t bytes, DType d) {
  if (d == DType::kFP8E4M3) return void(std::memset(p, 0x7f, bytes));
  if (d == DType::kF32) {
    const uint32_t nan = 0x7fc00000u;
    for (size_t i = 0; i + 4 <= bytes; i += 4) std::memcpy(p + i, &nan, 4);
    return;
  }
  const uint16_t nan = d == DType::kBF16 ? 0x7fc0 : 0x7e00;
  for (size_t i = 0; i + 2 <= bytes; i += 2) std::memcpy(p + i, &nan, 2);
}

std::string status_text(gatejit_status_t s) {
  std::string m = s ? gatejit_status_message(s) : "";
  gatejit_status_free(s);
  return m;
}

}  // namespace

std::string kernel_form(const KernelBinary &kb) {
  const auto report = nlohmann::json::parse(kb.report_json, nullptr, false);
  if (report.is_discarded() || !report.contains("plan_facts")) return "unknown";
  const auto &f = report["plan_facts"];
  std::string form = f.value("form", std::string("unknown"));
  const int rows = f.value("hidden_rows_per_block", 0), cols = f.value("weight_rows_per_block", 0);
  if (rows || cols) form += " " + std::to_string(rows) + "x" + std::to_string(cols);
  if (f.value("splits", 1) > 1) form += f.value("split_poll", false) ? ", K split met by poll" : ", K split met by arrival";
  if (kb.geometry.persistent_workgroups) form += ", persistent";
  return form;
}

StatusOr<KernelBinary> compile_cached(const Contract &contract) {
  auto normalized = normalize(contract);
  if (!normalized.ok()) return normalized.status();
  // What the resolver would compile for it: the contract as asked (the
  // compiler picks the form), the shape-free contract for the generic one.
  auto kind = compiler::planned_template(*normalized);
  if (!kind.ok()) return kind.status();
  auto chosen = normalize(*kind == TemplateKind::kGeneric ? generic_contract_for(*normalized) : *normalized);
  if (!chosen.ok()) return chosen.status();
  const Contract &c = *chosen;
  auto compile = [&]() -> StatusOr<KernelBinary> {
    auto compiled = compiler::compile(c);
    if (!compiled.ok()) return compiled.status();
    return std::move(compiled->binary);
  };
  auto options = options_from_env();
  if (!options.ok() || options->dir.empty()) return compile();
  auto cache = DiskCache::open(*options);
  if (!cache.ok()) return compile();
  const std::string key = contract_key(c), fp = compiler::fingerprint();
  return (*cache)->get_or_compile(cache_key(key, fp), key, fp, compile);
}

namespace {

// One problem's host tensors and their device copies.
struct Problem {
  HostTensor hidden, weight, attn;
  std::vector<float> scales;
  int64_t groups = 0;
  DeviceBytes d_hidden, d_weight, d_attn, d_out, d_scales, d_out_scales;
  size_t out_bytes = 0;
  uint8_t *out = nullptr;
};

// Fresh inputs as the GPU suite makes them (projections of O(1)), uploaded;
// the out and its scales poisoned so that an unwritten element fails.
void fill(Problem &p, const Contract &c, const GateRunRequest &r, uint64_t seed) {
  reference::fill_random(p.hidden, 1.0f, seed);
  const float bound = float(6.0 / std::sqrt(double(c.k)));
  if (c.weight_scale == WeightScale::kNone) {
    reference::fill_random(p.weight, bound, seed + 1);
  } else {
    reference::fill_random_fp8(p.weight, seed + 1);
    p.scales = reference::random_weight_scales(c.weight_scale, c.n, c.k, bound, seed + 3);
  }
  reference::fill_random(p.attn, 2.0f, seed + 2);
  std::memcpy(p.d_hidden.data(), p.hidden.bytes.data(), p.hidden.bytes.size());
  std::memcpy(p.d_weight.data(), p.weight.bytes.data(), p.weight.bytes.size());
  std::memcpy(p.d_attn.data(), p.attn.bytes.data(), p.attn.bytes.size());
  if (!p.scales.empty()) std::memcpy(p.d_scales.data(), p.scales.data(), p.scales.size() * 4);
  if (!r.in_place) poison(p.d_out.data(), p.out_bytes, c.dtype_out);
  if (p.groups) poison(p.d_out_scales.data(), p.d_out_scales.bytes, DType::kF32);
}

// Every element of the out (and its scales) against the reference.
reference::CheckResult check(const Problem &p, const Contract &c, int64_t M, int64_t ldo) {
  reference::GateProblem gp{c.act, c.rounding, &p.hidden, &p.weight, &p.attn, c.weight_scale,
                            p.scales.empty() ? nullptr : &p.scales};
  if (p.groups) {
    HostTensor q = reference::make_tensor(DType::kFP8E4M3, M, c.n, ldo);
    std::memcpy(q.bytes.data(), p.out, q.bytes.size());
    std::vector<float> out_scales(size_t(M * p.groups));
    std::memcpy(out_scales.data(), p.d_out_scales.data(), out_scales.size() * 4);
    return reference::check_gate_fp8_out(gp, q, out_scales);
  }
  HostTensor out = reference::make_tensor(c.dtype_out, M, c.n, ldo);
  std::memcpy(out.bytes.data(), p.out, out.bytes.size());
  return reference::check_gate(gp, out);
}

void add_check(GateRunReport &report, const reference::CheckResult &check) {
  report.checked += check.checked;
  report.exact_required += check.exact_required;
  report.mismatches += check.mismatches;
  report.unwritten += check.unwritten;
  if (!check.first_failure.empty()) report.first_mismatches.push_back(check.first_failure);
}

}  // namespace

StatusOr<GateRunReport> run_gate(EmulatedGpu &gpu, const GateRunRequest &r) {
  const Contract &c = r.contract;
  if (c.target != gpu.device().target())
    return invalid_argument(std::string("contract target ") + target_name(c.target) + " is not the emulated GPU's " +
                            target_name(gpu.device().target()));
  const int64_t M = r.launch_m ? r.launch_m : c.m;
  if (M <= 0) return invalid_argument("launch M must be at least 1");
  if (r.launches < 1) return invalid_argument("launches must be at least 1");
  if (c.m_dynamic && r.through_runtime)
    return invalid_argument("a dynamic-M contract runs through its ABI (through_runtime = false)");
  if (r.in_place && c.fp8_out()) return invalid_argument("an fp8 out cannot be in place");
  const DType dt = c.dtype_hidden, wdt = c.dtype_weight, odt = c.dtype_out;
  const int64_t ldh = c.ld_hidden ? c.ld_hidden : c.k, ldw = c.ld_weight ? c.ld_weight : c.k;
  const int64_t lda = c.ld_attn ? c.ld_attn : c.n, ldo = r.in_place ? lda : (c.ld_out ? c.ld_out : c.n);

  Device &dev = gpu.device();
  Problem p;
  p.hidden = reference::make_tensor(dt, M, c.k, ldh);
  p.weight = reference::make_tensor(wdt, c.n, c.k, ldw);
  p.attn = reference::make_tensor(c.dtype_attn, M, c.n, lda);
  if (c.weight_scale != WeightScale::kNone) {
    const auto shape = reference::weight_scale_shape(c.weight_scale, c.n, c.k);
    p.d_scales = DeviceBytes(dev, size_t(shape.rows * shape.cols) * 4, 0);
  }
  p.groups = c.fp8_out() ? c.n / kOutGroup : 0;
  const size_t off = r.misalign_bytes, off_ao = off + r.attn_out_misalign;
  p.d_hidden = DeviceBytes(dev, p.hidden.bytes.size(), off);
  p.d_weight = DeviceBytes(dev, p.weight.bytes.size(), off);
  p.d_attn = DeviceBytes(dev, p.attn.bytes.size(), off_ao);
  p.out_bytes = size_t(M * ldo) * size_t(dtype_bytes(odt));
  if (!r.in_place) p.d_out = DeviceBytes(dev, p.out_bytes, off_ao);
  if (p.groups) p.d_out_scales = DeviceBytes(dev, size_t(M * p.groups) * 4, 0);
  if (!p.d_hidden.base || !p.d_weight.base || !p.d_attn.base || (!r.in_place && !p.d_out.base))
    return internal_error("out of host memory for the emulated GPU's buffers");
  p.out = r.in_place ? p.d_attn.data() : p.d_out.data();

  GateRunReport report;
  gpu.set_options(r.options);
  gpu.take_launches();
  KernelBinary used;
  double seconds = 0;
  auto timed = [&](const auto &launch) -> Status {
    const auto t0 = std::chrono::steady_clock::now();
    Status s = launch();
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return s;
  };
  if (r.through_runtime) {
    gatejit_runtime_options_t options = GATEJIT_RUNTIME_OPTIONS_INIT;
    options.disable_cache = 1;  // compile_cached keeps the disk cache; the hook hands its binary over
    std::string bundles;
    for (const std::string &b : r.bundles) bundles += (bundles.empty() ? "" : ":") + b;
    if (r.background_jit) {
      options.jit_mode = GATEJIT_JIT_BACKGROUND;
      options.disable_shipped_bundle = 1;  // only the bundles named
      options.bundle_path = bundles.c_str();
    }
    if (c.template_kind != TemplateKind::kAuto) setenv("GATEJIT_TEMPLATE", template_name(c.template_kind), 1);
    gatejit_runtime_t rt = nullptr;
    const std::string created = status_text(gatejit_runtime_create(&options, &rt));
    unsetenv("GATEJIT_TEMPLATE");
    if (!created.empty()) return device_error("runtime: " + created);
    struct Destroy {
      gatejit_runtime_t rt;
      ~Destroy() { gatejit_runtime_destroy(rt); }
    } destroy{rt};
    // Background JIT: the compile is held until launch 0 has returned, so
    // that launch is served meanwhile however fast the compile (a disk-cache
    // hit) would be. Released before the runtime is destroyed, whatever happens.
    struct Release {
      std::promise<void> promise;
      bool done = false;
      void operator()() {
        if (!done) promise.set_value(), done = true;
      }
      ~Release() { (*this)(); }
    } release;
    const std::shared_future<void> released = release.promise.get_future().share();
    JitHook hook;
    hook.fingerprint = compiler::fingerprint();
    hook.compile = [&, released](const Contract &call) -> StatusOr<KernelBinary> {
      if (r.background_jit) released.wait();
      auto kb = compile_cached(call);
      if (kb.ok()) used = *kb;
      return kb;
    };
    hook.form = [](const Contract &call) -> StatusOr<std::string> {
      auto kind = compiler::planned_template(call);
      if (!kind.ok()) return kind.status();
      return std::string(template_name(*kind));
    };
    GATEJIT_RETURN_IF_ERROR(runtime_set_jit(rt, std::move(hook)));
    gatejit_gate_args_t args = GATEJIT_GATE_ARGS_INIT;
    args.hidden = {p.d_hidden.data(), c_dtype(dt), M, c.k, ldh};
    args.weight = {p.d_weight.data(), c_dtype(wdt), c.n, c.k, ldw};
    args.attn = {p.d_attn.data(), c_dtype(c.dtype_attn), M, c.n, lda};
    args.out = {p.out, c_dtype(odt), M, c.n, ldo};
    args.act = c.act == Activation::kSigmoid ? GATEJIT_SIGMOID : GATEJIT_SILU;
    args.rounding = c.rounding == Rounding::kBoundary ? GATEJIT_ROUNDING_BOUNDARY : GATEJIT_ROUNDING_FUSED;
    args.device_kind = GATEJIT_DEVICE_HIP;
    if (p.d_scales.base) {
      const auto shape = reference::weight_scale_shape(c.weight_scale, c.n, c.k);
      args.weight_scale = {p.d_scales.data(), GATEJIT_F32, shape.rows, shape.cols, shape.cols};
    }
    if (p.groups) args.out_scale = {p.d_out_scales.data(), GATEJIT_F32, M, p.groups, p.groups};
    auto explain = [&]() -> StatusOr<std::string> {
      char *text = nullptr;
      const std::string failed = status_text(gatejit_explain(rt, &args, &text));
      const std::string out = text ? text : "";
      gatejit_string_free(text);
      if (!failed.empty()) return device_error("explain: " + failed);
      return out;
    };
    auto first = explain();
    if (!first.ok()) return first.status();
    report.path = *first;
    // Background JIT: polls the explanation (bounded) until `done` holds.
    auto explain_until = [&](auto done) -> std::string {
      std::string now;
      for (int tries = 0; tries < 6000; ++tries) {
        auto e = explain();
        now = e.ok() ? *e : e.status().message();
        if (done(now)) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      return now;
    };
    for (int i = 0; i < r.launches; ++i) {
      fill(p, c, r, r.seed + 1000 * uint64_t(i));
      if (r.background_jit)
        report.paths.push_back(explain_until([&](const std::string &now) {
          // Nothing pending (never was, or swapped in): nothing to wait for.
          const bool pending = now.find("compiles in the background") != std::string::npos;
          if (i == 0 || !pending) return true;
          return i == 1 && now.find("[now done") != std::string::npos;
        }));
      GATEJIT_RETURN_IF_ERROR(timed([&] {
        const std::string launched = status_text(gatejit_gate_epilogue(rt, &args));
        return launched.empty() ? Status::Ok() : device_error(launched);
      }));
      add_check(report, check(p, c, M, ldo));
      release();
    }
  } else {
    if (r.binary) used = *r.binary;
    else {
      auto kb = compile_cached(c);
      if (!kb.ok()) return kb.status();
      used = std::move(*kb);
    }
    report.path = "direct launch";
    auto module = dev.load(used.code);
    if (!module.ok()) return module.status();
    struct Unload {
      Device &d;
      Module *m;
      ~Unload() { d.unload(m); }
    } unload{dev, *module};
    LaunchValues v{p.d_hidden.data(), p.d_weight.data(), p.d_attn.data(), p.out, M, c.n, c.k, ldh, ldw, lda, ldo};
    v.weight_scale = p.d_scales.base ? p.d_scales.data() : nullptr;
    v.out_scale = p.groups ? p.d_out_scales.data() : nullptr;
    const std::vector<AbiArg> abi = declared_abi(used);
    LaunchSlots slots = pack_launch_args(abi, v);
    LaunchGrid grid;
    grid.workgroups = used.geometry.launch_grid(c.n, M);
    grid.workgroup_size = {used.geometry.block_x, 1, 1};
    grid.dynamic_lds_bytes = used.geometry.shared_bytes;
    for (int i = 0; i < r.launches; ++i) {
      fill(p, c, r, r.seed + 1000 * uint64_t(i));
      RunStats stats;
      GATEJIT_RETURN_IF_ERROR(timed([&] { return dev.launch(*module, used.symbol, grid, slots.data(), r.options, &stats); }));
      report.launches.push_back({used.symbol, grid, std::move(stats)});
      add_check(report, check(p, c, M, ldo));
    }
  }
  report.emulate_seconds = seconds;
  for (auto &l : gpu.take_launches()) report.launches.push_back(std::move(l));
  report.kernel = used.symbol;
  report.form = used.code.empty() ? "unknown" : kernel_form(used);
  return report;
}

}  // namespace gatejit::emulator
