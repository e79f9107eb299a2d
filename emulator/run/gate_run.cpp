#include "gatejit/emulator/gate_run.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include <nlohmann/json.hpp>

#include "disk_cache.h"
#include "gatejit/compiler/compiler.h"
#include "gatejit/gatejit.h"
#include "gatejit/jit_hook.h"
#include "gatejit/template_choice.h"
#include "launch_args.h"
#include "support/gate_reference.h"

namespace gatejit::emulator {
namespace {

using reference::HostTensor;

gatejit_dtype_t c_dtype(DType d) {
  switch (d) {
    case DType::kBF16: return GATEJIT_BF16;
    case DType::kF16: return GATEJIT_F16;
    case DType::kF32: return GATEJIT_F32;
    case DType::kFP8E4M3: return GATEJIT_FP8_E4M3;
  }
  return GATEJIT_F32;
}

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
  // What the resolver would compile for it: the template chosen (the binary's
  // key names it), the shape-free contract for the generic one.
  auto choice = choose_template(*normalized);
  if (!choice.ok()) return choice.status();
  auto chosen = normalize(choice->contract);
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

StatusOr<GateRunReport> run_gate(EmulatedGpu &gpu, const GateRunRequest &r) {
  const Contract &c = r.contract;
  if (c.target != gpu.device().target())
    return invalid_argument(std::string("contract target ") + target_name(c.target) + " is not the emulated GPU's " +
                            target_name(gpu.device().target()));
  const int64_t M = r.launch_m ? r.launch_m : c.m;
  if (M <= 0) return invalid_argument("launch M must be at least 1");
  if (c.m_dynamic && r.through_runtime)
    return invalid_argument("a dynamic-M contract runs through its ABI (through_runtime = false)");
  if (r.in_place && c.fp8_out()) return invalid_argument("an fp8 out cannot be in place");
  const DType dt = c.dtype_hidden, wdt = c.dtype_weight, odt = c.dtype_out;
  const int64_t ldh = c.ld_hidden ? c.ld_hidden : c.k, ldw = c.ld_weight ? c.ld_weight : c.k;
  const int64_t lda = c.ld_attn ? c.ld_attn : c.n, ldo = r.in_place ? lda : (c.ld_out ? c.ld_out : c.n);

  // Inputs as the GPU suite makes them: projections of O(1).
  HostTensor hidden = reference::make_tensor(dt, M, c.k, ldh);
  HostTensor weight = reference::make_tensor(wdt, c.n, c.k, ldw);
  HostTensor attn = reference::make_tensor(c.dtype_attn, M, c.n, lda);
  std::vector<float> scales;
  reference::fill_random(hidden, 1.0f, r.seed);
  const float bound = float(6.0 / std::sqrt(double(c.k)));
  if (c.weight_scale == WeightScale::kNone) {
    reference::fill_random(weight, bound, r.seed + 1);
  } else {
    reference::fill_random_fp8(weight, r.seed + 1);
    scales = reference::random_weight_scales(c.weight_scale, c.n, c.k, bound, r.seed + 3);
  }
  reference::fill_random(attn, 2.0f, r.seed + 2);
  const int64_t groups = c.fp8_out() ? c.n / kOutGroup : 0;

  Device &dev = gpu.device();
  const size_t off = r.misalign_bytes, off_ao = off + r.attn_out_misalign;
  DeviceBytes d_hidden(dev, hidden.bytes.size(), off), d_weight(dev, weight.bytes.size(), off);
  DeviceBytes d_attn(dev, attn.bytes.size(), off_ao);
  const size_t out_bytes = size_t(M * ldo) * size_t(dtype_bytes(odt));
  DeviceBytes d_out = r.in_place ? DeviceBytes() : DeviceBytes(dev, out_bytes, off_ao);
  DeviceBytes d_scales = scales.empty() ? DeviceBytes() : DeviceBytes(dev, scales.size() * 4, 0);
  DeviceBytes d_out_scales = groups ? DeviceBytes(dev, size_t(M * groups) * 4, 0) : DeviceBytes();
  if (!d_hidden.base || !d_weight.base || !d_attn.base || (!r.in_place && !d_out.base))
    return internal_error("out of host memory for the emulated GPU's buffers");
  std::memcpy(d_hidden.data(), hidden.bytes.data(), hidden.bytes.size());
  std::memcpy(d_weight.data(), weight.bytes.data(), weight.bytes.size());
  std::memcpy(d_attn.data(), attn.bytes.data(), attn.bytes.size());
  if (!scales.empty()) std::memcpy(d_scales.data(), scales.data(), scales.size() * 4);
  if (!r.in_place) poison(d_out.data(), out_bytes, odt);
  if (groups) poison(d_out_scales.data(), size_t(M * groups) * 4, DType::kF32);
  uint8_t *out_ptr = r.in_place ? d_attn.data() : d_out.data();

  GateRunReport report;
  gpu.set_options(r.options);
  gpu.take_launches();
  const auto t0 = std::chrono::steady_clock::now();
  KernelBinary used;
  if (r.through_runtime) {
    gatejit_runtime_options_t options = GATEJIT_RUNTIME_OPTIONS_INIT;
    options.disable_cache = 1;  // compile_cached keeps the disk cache; the hook hands its binary over
    if (c.template_kind != TemplateKind::kAuto) setenv("GATEJIT_TEMPLATE", template_name(c.template_kind), 1);
    gatejit_runtime_t rt = nullptr;
    const std::string created = status_text(gatejit_runtime_create(&options, &rt));
    unsetenv("GATEJIT_TEMPLATE");
    if (!created.empty()) return device_error("runtime: " + created);
    struct Destroy {
      gatejit_runtime_t rt;
      ~Destroy() { gatejit_runtime_destroy(rt); }
    } destroy{rt};
    JitHook hook;
    hook.fingerprint = compiler::fingerprint();
    hook.compile = [&](const Contract &call) -> StatusOr<KernelBinary> {
      auto kb = compile_cached(call);
      if (kb.ok()) used = *kb;
      return kb;
    };
    GATEJIT_RETURN_IF_ERROR(runtime_set_jit(rt, std::move(hook)));
    gatejit_gate_args_t args = GATEJIT_GATE_ARGS_INIT;
    args.hidden = {d_hidden.data(), c_dtype(dt), M, c.k, ldh};
    args.weight = {d_weight.data(), c_dtype(wdt), c.n, c.k, ldw};
    args.attn = {d_attn.data(), c_dtype(c.dtype_attn), M, c.n, lda};
    args.out = {out_ptr, c_dtype(odt), M, c.n, ldo};
    args.act = c.act == Activation::kSigmoid ? GATEJIT_SIGMOID : GATEJIT_SILU;
    args.rounding = c.rounding == Rounding::kBoundary ? GATEJIT_ROUNDING_BOUNDARY : GATEJIT_ROUNDING_FUSED;
    args.device_kind = GATEJIT_DEVICE_HIP;
    if (!scales.empty()) {
      const auto shape = reference::weight_scale_shape(c.weight_scale, c.n, c.k);
      args.weight_scale = {d_scales.data(), GATEJIT_F32, shape.rows, shape.cols, shape.cols};
    }
    if (groups) args.out_scale = {d_out_scales.data(), GATEJIT_F32, M, groups, groups};
    char *text = nullptr;
    const std::string explained = status_text(gatejit_explain(rt, &args, &text));
    if (!explained.empty()) return device_error("explain: " + explained);
    report.path = text ? text : "";
    gatejit_string_free(text);
    const std::string launched = status_text(gatejit_gate_epilogue(rt, &args));
    if (!launched.empty()) return device_error(launched);
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
    LaunchValues v{d_hidden.data(), d_weight.data(), d_attn.data(), out_ptr, M, c.n, c.k, ldh, ldw, lda, ldo};
    v.weight_scale = scales.empty() ? nullptr : d_scales.data();
    v.out_scale = groups ? d_out_scales.data() : nullptr;
    const std::vector<AbiArg> abi = declared_abi(used);
    LaunchSlots slots = pack_launch_args(abi, v);
    LaunchGrid grid;
    grid.workgroups = used.geometry.launch_grid(c.n, M);
    grid.workgroup_size = {used.geometry.block_x, 1, 1};
    grid.dynamic_lds_bytes = used.geometry.shared_bytes;
    RunStats stats;
    Status s = dev.launch(*module, used.symbol, grid, slots.data(), r.options, &stats);
    if (!s.ok()) return s;
    report.launches.push_back({used.symbol, grid, std::move(stats)});
  }
  report.emulate_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (auto &l : gpu.take_launches()) report.launches.push_back(std::move(l));
  report.kernel = used.symbol;
  report.form = used.code.empty() ? "unknown" : kernel_form(used);

  // Every element against the reference.
  reference::GateProblem p{c.act, c.rounding, &hidden, &weight, &attn, c.weight_scale, scales.empty() ? nullptr : &scales};
  reference::CheckResult check;
  if (groups) {
    HostTensor q = reference::make_tensor(DType::kFP8E4M3, M, c.n, ldo);
    std::memcpy(q.bytes.data(), out_ptr, q.bytes.size());
    std::vector<float> out_scales(size_t(M * groups));
    std::memcpy(out_scales.data(), d_out_scales.data(), out_scales.size() * 4);
    check = reference::check_gate_fp8_out(p, q, out_scales);
  } else {
    HostTensor out = reference::make_tensor(odt, M, c.n, ldo);
    std::memcpy(out.bytes.data(), out_ptr, out.bytes.size());
    check = reference::check_gate(p, out);
  }
  report.checked = check.checked;
  report.exact_required = check.exact_required;
  report.mismatches = check.mismatches;
  report.unwritten = check.unwritten;
  if (!check.first_failure.empty()) report.first_mismatches.push_back(check.first_failure);
  return report;
}

}  // namespace gatejit::emulator
