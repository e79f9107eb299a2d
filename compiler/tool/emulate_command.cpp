// gatejit emulate <contract flags>: runs the contract's kernel on the
// gfx950/gfx942 emulator (docs/emulator.md) with seeded random inputs,
// checks every output element against the host reference, and prints pass
// or fail, the first mismatching elements, and the dynamic instruction
// counts per wave next to the compiler's static counts. The kernel can also
// come from a file: a code object (its launch shape from the contract's
// plan), a disk-cache entry, or a bundle entry.
#include <algorithm>
#include <cstring>
#include <iostream>
#include <map>

#include <fmt/format.h>

#include "bundle.h"
#include "commands.h"
#include "contract_flags.h"
#include "file_io.h"
#include "gatejit/emulator/gate_run.h"
#include "gatejit/template_choice.h"
#include "input_echo.h"
#include "input_limits.h"
#include "plan/form_choice.h"

namespace gatejit::tool {
namespace {

struct EmulateArgs {
  ContractFlags flags;
  int64_t launch_m = 0;
  std::string order = "rr";
  bool xcd = false;
  uint64_t seed = 1;
  bool in_place = false;
  std::string code;    // a code object or cache entry
  std::string bundle;  // a bundle, with --entry
  std::string entry;
  uint32_t quantum = 64;
  uint64_t max_wave_instructions = 20'000'000;
  bool all_waves = false;
};

StatusOr<emulator::RunOptions> run_options(const EmulateArgs &a) {
  emulator::RunOptions o;
  if (a.order == "rr") o.order = emulator::WaveOrder::kRoundRobin;
  else if (a.order == "reverse") o.order = emulator::WaveOrder::kReverse;
  else if (a.order.rfind("random:", 0) == 0) {
    o.order = emulator::WaveOrder::kRandom;
    const std::string s = a.order.substr(7);
    char *end = nullptr;
    o.seed = std::strtoull(s.c_str(), &end, 10);
    if (s.empty() || *end) return invalid_argument("--order " + quote_input(a.order) + ": random:SEED takes a decimal seed");
  } else {
    return invalid_argument("--order " + quote_input(a.order) + ": allowed are rr, reverse, random:SEED");
  }
  o.cross_xcd = a.xcd;
  o.quantum = a.quantum;
  o.max_wave_instructions = a.max_wave_instructions;
  return o;
}

// The kernel to run when it comes from a file: a bundle entry, a disk-cache
// entry, or a bare code object with the plan's launch shape.
StatusOr<KernelBinary> kernel_from_files(const EmulateArgs &a, const Contract &contract) {
  if (!a.bundle.empty()) {
    auto bytes = read_file(a.bundle, limits::kBundleBytes);
    if (!bytes.ok()) return Status(bytes.status().code(), "--bundle " + bytes.status().message());
    auto bundle = Bundle::from_bytes(std::move(*bytes), a.bundle);
    if (!bundle.ok()) return bundle.status();
    std::string key = a.entry;
    if (key.empty()) {  // the entry the runtime would take for the contract
      auto normalized = normalize(contract);
      if (!normalized.ok()) return normalized.status();
      auto choice = compiler::choose_template(*normalized);
      if (!choice.ok()) return choice.status();
      key = contract_key(compiler::keyed_contract(*normalized, *choice));
    }
    auto kb = (*bundle)->find(key);
    if (!kb.ok()) return Status(kb.status().code(), "--bundle " + escape_input(a.bundle) + ": " + kb.status().message());
    return kb;
  }
  auto bytes = read_file(a.code, limits::kCodeObjectBytes);
  if (!bytes.ok()) return Status(bytes.status().code(), "--code " + bytes.status().message());
  if (auto kb = decode_kernel_binary(*bytes); kb.ok()) return kb;  // a disk-cache entry
  // A bare code object: its launch shape and argument list are the plan's
  // for the contract.
  auto planned = emulator::compile_cached(contract);
  if (!planned.ok()) return planned.status();
  KernelBinary kb = std::move(*planned);
  kb.code = std::move(*bytes);
  return kb;
}

struct Category {
  const char *name;
  bool (*match)(const std::string &);
};
const Category kCategories[] = {
    {"vector memory", [](const std::string &m) { return m.rfind("global_", 0) == 0 || m.rfind("buffer_", 0) == 0; }},
    {"scalar memory", [](const std::string &m) { return m.rfind("s_load", 0) == 0 || m.rfind("s_buffer_load", 0) == 0; }},
    {"LDS", [](const std::string &m) { return m.rfind("ds_", 0) == 0; }},
    {"MFMA", [](const std::string &m) { return m.rfind("v_mfma", 0) == 0; }},
    {"dot products", [](const std::string &m) { return m.rfind("v_dot", 0) == 0; }},
    {"s_waitcnt", [](const std::string &m) { return m == "s_waitcnt"; }},
    {"s_nop", [](const std::string &m) { return m == "s_nop"; }},
};

// "v_add_f32_e32" -> "v_add_f32": the encoding suffix off.
std::string without_encoding(std::string m) {
  for (const char *suffix : {"_e32", "_e64", "_dpp", "_sdwa"}) {
    const size_t n = std::strlen(suffix);
    if (m.size() > n && m.compare(m.size() - n, n, suffix) == 0) return m.substr(0, m.size() - n);
  }
  return m;
}

void print_counts(const emulator::GateRunReport &r, const KernelBinary &kb, bool all_waves) {
  std::vector<uint64_t> per_wave;
  uint64_t total = 0;
  std::map<std::string, uint64_t> dynamic;
  for (const auto &l : r.launches) {
    total += l.stats.instructions;
    for (const auto &w : l.stats.per_wave) per_wave.push_back(w.instructions);
    for (const auto &[m, n] : l.stats.by_mnemonic) dynamic[m] += n;
  }
  if (per_wave.empty()) return;
  const auto [lo, hi] = std::minmax_element(per_wave.begin(), per_wave.end());
  std::cout << fmt::format("dynamic instructions: {} in {} waves; per wave min {}, mean {:.1f}, max {}\n", total,
                           per_wave.size(), *lo, double(total) / double(per_wave.size()), *hi);
  if (all_waves) {
    for (const auto &l : r.launches)
      for (const auto &w : l.stats.per_wave)
        std::cout << fmt::format("  workgroup ({}, {}, {}) wave {}: {}\n", w.workgroup[0], w.workgroup[1],
                                 w.workgroup[2], w.wave, w.instructions);
  }
  // Next to the compiler's static histogram (each instruction of the code
  // object once): docs/emulator.md says why they differ.
  nlohmann::json histogram;
  const auto report = nlohmann::json::parse(kb.report_json, nullptr, false);
  if (!report.is_discarded() && report.contains("instructions")) histogram = report["instructions"].value("histogram", nlohmann::json());
  std::cout << "  by kind (dynamic per wave, mean | static in the code object):\n";
  for (const Category &c : kCategories) {
    uint64_t dyn = 0, stat = 0;
    for (const auto &[m, n] : dynamic)
      if (c.match(without_encoding(m))) dyn += n;
    if (histogram.is_object())
      for (const auto &[m, n] : histogram.items())
        if (c.match(without_encoding(m)) && n.is_number()) stat += n.get<uint64_t>();
    std::cout << fmt::format("    {:<14} {:>10.1f} | {}\n", c.name, double(dyn) / double(per_wave.size()), stat);
  }
}

int run_emulate(const EmulateArgs &a) {
  auto contract = a.flags.contract();
  if (!contract.ok()) return fail(contract.status());
  if (contract->target != Target::kGfx950 && contract->target != Target::kGfx942)
    return fail(invalid_argument(std::string("--target ") + target_name(contract->target) +
                                 ": the emulator runs gfx950 and gfx942"));
  auto options = run_options(a);
  if (!options.ok()) return fail(options.status());
  if (!a.code.empty() && !a.bundle.empty()) return fail(invalid_argument("--code and --bundle: give one of them"));
  if (!a.entry.empty() && a.bundle.empty()) return fail(invalid_argument("--entry names a bundle entry: give --bundle"));
  if (contract->m_dynamic && a.launch_m <= 0)
    return fail(invalid_argument("--launch-m: a dynamic-M contract runs at the M it names (1.." +
                                 std::to_string(contract->m_max) + ")"));
  if (a.launch_m && contract->m_dynamic && a.launch_m > contract->m_max)
    return fail(invalid_argument("--launch-m " + std::to_string(a.launch_m) + ": above the contract's m_max " +
                                 std::to_string(contract->m_max)));
  if (a.launch_m && !contract->m_dynamic && a.launch_m != contract->m)
    return fail(invalid_argument("--launch-m " + std::to_string(a.launch_m) + ": the contract's M is " +
                                 std::to_string(contract->m) + " (give --m dynamic --m_max for another M)"));

  emulator::GateRunRequest r;
  r.contract = *contract;
  r.launch_m = a.launch_m;
  r.in_place = a.in_place;
  r.seed = a.seed;
  r.options = *options;
  KernelBinary from_file;
  if (!a.code.empty() || !a.bundle.empty()) {
    auto kb = kernel_from_files(a, *contract);
    if (!kb.ok()) return fail(kb.status());
    if (kb->target != contract->target)
      return fail(invalid_argument(std::string("the kernel is for ") + target_name(kb->target) + ", the contract for " +
                                   target_name(contract->target)));
    from_file = std::move(*kb);
    r.binary = &from_file;
    r.through_runtime = false;
  } else {
    r.through_runtime = !contract->m_dynamic;
  }
  emulator::EmulatedGpu gpu(contract->target);
  auto report = emulator::run_gate(gpu, r);
  auto normalized = normalize(*contract);
  std::cout << "gatejit emulate: " << (normalized.ok() ? canonical_text(*normalized) : std::string("?")) << "\n";
  if (!report.ok()) {
    std::cout << "result: FAIL (the run stopped)\n";
    return fail(report.status());
  }
  const KernelBinary *kb = r.binary;
  KernelBinary compiled;
  if (!kb) {
    auto c = emulator::compile_cached(*contract);
    if (c.ok()) compiled = std::move(*c);
    kb = &compiled;
  }
  std::cout << "kernel: " << report->kernel << " (" << report->form << "); " << report->path << "\n";
  for (const auto &l : report->launches)
    std::cout << fmt::format("launch: grid [{}, {}, {}] of {} threads, {} bytes of dynamic LDS; order {}{}\n",
                             l.grid.workgroups[0], l.grid.workgroups[1], l.grid.workgroups[2],
                             l.grid.workgroup_size[0] * l.grid.workgroup_size[1] * l.grid.workgroup_size[2],
                             l.grid.dynamic_lds_bytes, a.order, a.xcd ? ", cross-XCD (8 L2s)" : "");
  if (report->passed()) {
    std::cout << fmt::format("result: PASS: {} elements checked against the host reference ({} required bit-exact)\n",
                             report->checked, report->exact_required);
  } else {
    std::cout << fmt::format("result: FAIL: {} of {} elements mismatch, {} unwritten\n", report->mismatches,
                             report->checked, report->unwritten);
    for (const auto &m : report->first_mismatches) std::cout << "  first mismatch: " << m << "\n";
  }
  print_counts(*report, *kb, a.all_waves);
  return report->passed() ? 0 : 1;
}

}  // namespace

Runner add_emulate_command(CLI::App &app) {
  auto a = std::make_shared<EmulateArgs>();
  auto *cmd = app.add_subcommand(
      "emulate",
      "run the contract's gfx950/gfx942 kernel on the emulator with seeded random inputs and check every element "
      "against the host reference (docs/emulator.md)");
  a->flags.add_to(cmd);
  cmd->add_option("--launch-m,--launch_m", a->launch_m, "the call's M: required for --m dynamic (1..m_max); default M");
  cmd->add_option("--order", a->order, "the order waves take their turns: rr | reverse | random:SEED; default rr")
      ->check(CLI::Validator(
          [](std::string &v) -> std::string {
            EmulateArgs probe;
            probe.order = v;
            auto o = run_options(probe);
            return o.ok() ? std::string() : o.status().message();
          },
          "rr|reverse|random:SEED"));
  cmd->add_flag("--xcd", a->xcd, "eight XCD-private L2 caches, workgroups dealt round-robin (memory-model checks)");
  cmd->add_option("--seed", a->seed, "seed of the random inputs; default 1");
  cmd->add_flag("--in-place,--in_place", a->in_place, "out is attn's buffer");
  cmd->add_option("--code", a->code,
                  "run this code object (.hsaco: launch shape from the contract's plan) or disk-cache entry (.gjk)");
  cmd->add_option("--bundle", a->bundle, "run a kernel of this bundle (.gjb): --entry KEY, or the contract's entry");
  cmd->add_option("--entry", a->entry, "the bundle entry's key (32 hex digits)");
  cmd->add_option("--quantum", a->quantum, "instructions a wave runs before the next one's turn; default 64")
      ->check(CLI::Range(1u, 1u << 20));
  cmd->add_option("--max-wave-instructions", a->max_wave_instructions,
                  "a wave that runs more is reported as hung; default 20000000");
  cmd->add_flag("--all-waves", a->all_waves, "print every wave's dynamic instruction count");
  return [a] { return run_emulate(*a); };
}

}  // namespace gatejit::tool
