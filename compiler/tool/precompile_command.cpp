// gatejit precompile SPEC.json --targets gfx950,gfx942,sm_90 -o kernels.gjb
// gatejit precompile --contracts recorded.jsonl --targets sm_90 -o kernels.gjb
// gatejit precompile --all-generic --targets gfx950,gfx942,sm_90 -o gatejit-generic.gjb
// Compiles every contract of a spec, of a record file (GATEJIT_RECORD:
// contract_record.h) or both, for every target, in parallel, into one
// bundle. A spec is a JSON list of contracts whose "m" may also be a list of
// values or a range {"min": 1, "max": 16}. The generic kernel of every
// (target, dtype, act, rounding) is added too, so the bundle has a fallback;
// --all-generic adds every generic kernel each target allows (the shipped
// bundle: shipped_bundle.h).
// A spec or a record may expand to at most limits::kPrecompileContracts
// contracts (counted once per target).
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "bundle.h"
#include "commands.h"
#include "contract_record.h"
#include "file_io.h"
#include "gatejit/compiler/compiler.h"
#include "gatejit/contract_json.h"
#include "gatejit/template_choice.h"
#include "generic_kernel_set.h"
#include "input_echo.h"
#include "input_limits.h"
#include "json_input.h"

namespace gatejit::tool {
namespace {

struct PrecompileArgs {
  std::string spec;
  std::string contracts;  // a record file (JSON lines)
  bool all_generic = false;
  std::string targets;
  std::string output;
  unsigned jobs = 0;
  bool compress = false;
  bool no_generic = false;
};

// One spec item -> its contracts (m expanded).
StatusOr<std::vector<Contract>> expand_item(nlohmann::json item, size_t index) {
  const std::string where = "spec item " + std::to_string(index) + ": ";
  if (!item.is_object()) return invalid_argument(where + "must be a JSON object");
  std::vector<nlohmann::json> ms;
  if (item.contains("m") && item["m"].is_array()) {
    for (const auto &v : item["m"]) ms.push_back(v);
    if (ms.empty()) return invalid_argument(where + "m = []: give at least one value");
  } else if (item.contains("m") && item["m"].is_object()) {
    const auto &r = item["m"];
    if (!r.contains("min") || !r.contains("max") || !r["min"].is_number_integer() || !r["max"].is_number_integer())
      return invalid_argument(where + "m range must be {\"min\": int, \"max\": int}");
    auto lo_v = json_int64(r["min"], "m range min"), hi_v = json_int64(r["max"], "m range max");
    if (!lo_v.ok()) return invalid_argument(where + lo_v.status().message());
    if (!hi_v.ok()) return invalid_argument(where + hi_v.status().message());
    const int64_t lo = *lo_v, hi = *hi_v;
    if (lo < 1 || hi < lo || hi - lo > 4096)
      return invalid_argument(where + "m range [" + std::to_string(lo) + ", " + std::to_string(hi) +
                              "]: need 1 <= min <= max and at most 4097 values");
    for (int64_t m = lo; m <= hi; ++m) ms.push_back(m);
  } else {
    ms.push_back(item.value("m", nlohmann::json(1)));
  }
  std::vector<Contract> out;
  for (const auto &m : ms) {
    item["m"] = m;
    auto c = contract_from_json(item);
    if (!c.ok()) return invalid_argument(where + c.status().message());
    auto n = normalize(*c);
    if (!n.ok()) return invalid_argument(where + n.status().message());
    out.push_back(*n);
  }
  return out;
}

// The spec's contracts, m expanded.
// A spec or record past the cap is refused before anything compiles, after at
// most one item's expansion past it. `per_contract`: the targets each counts for.
Status check_contract_cap(const std::string &what, size_t count, size_t per_contract, const std::string &where) {
  if (count * per_contract <= limits::kPrecompileContracts) return Status::Ok();
  return invalid_argument(what + ": expands to more than " + std::to_string(limits::kPrecompileContracts) +
                          " contracts (" + where + " goes past; each m value of each item counts "
                          "once per target): split it into several bundles, or give \"m\": \"dynamic\" with "
                          "\"m_max\", one kernel for every M up to it (docs/runtime.md)");
}

StatusOr<std::vector<Contract>> read_spec(const PrecompileArgs &a, size_t per_contract) {
  const std::string what = "spec " + escape_input(a.spec);
  auto bytes = read_file(a.spec, limits::kSpecBytes);
  if (!bytes.ok()) return Status(bytes.status().code(), "spec " + bytes.status().message());
  auto parsed =
      parse_json_input(std::string_view(reinterpret_cast<const char *>(bytes->data()), bytes->size()), what);
  if (!parsed.ok()) return parsed.status();
  const nlohmann::json &spec = *parsed;
  if (!spec.is_array())
    return invalid_argument(what + ": a spec is a JSON list of contracts, not " + describe_json(spec));
  if (spec.empty()) return invalid_argument(what + ": the list is empty; give at least one contract");
  std::vector<Contract> out;
  for (size_t i = 0; i < spec.size(); ++i) {
    auto contracts = expand_item(spec[i], i);
    if (!contracts.ok()) return contracts.status();
    out.insert(out.end(), contracts->begin(), contracts->end());
    GATEJIT_RETURN_IF_ERROR(check_contract_cap(what, out.size(), per_contract, "item " + std::to_string(i)));
  }
  return out;
}

StatusOr<std::vector<Contract>> load_spec(const PrecompileArgs &a) {
  std::vector<Target> targets;
  std::stringstream ts(a.targets);
  for (std::string t; std::getline(ts, t, ',');) {
    auto target = parse_target(t);
    if (!target.ok()) return invalid_argument("--targets: " + target.status().message());
    targets.push_back(*target);
  }
  if (a.all_generic && targets.empty()) return invalid_argument("--all-generic: name the targets with --targets");
  // Keyed by what gets compiled, so duplicates (and generic twins) compile once.
  std::vector<Contract> jobs;
  std::set<std::string> seen;
  auto add = [&](const Contract &c) {
    auto choice = choose_template(c);
    if (!choice.ok()) return choice.status();
    if (seen.insert(contract_key(choice->contract)).second) jobs.push_back(c);
    if (!a.no_generic) {
      Contract g = generic_contract_for(c);
      if (seen.insert(contract_key(g)).second) jobs.push_back(g);
    }
    return Status::Ok();
  };
  // Each contract for each of --targets (its own target without them).
  auto add_for_targets = [&](const std::vector<Contract> &contracts) -> Status {
    for (Contract c : contracts) {
      if (targets.empty()) GATEJIT_RETURN_IF_ERROR(add(c));
      for (Target t : targets) {
        c.target = t;
        if (Status s = validate(c); !s.ok())
          return invalid_argument(std::string("--targets ") + target_name(t) + ": " + canonical_text(c) + ": " +
                                  s.message());
        GATEJIT_RETURN_IF_ERROR(add(c));
      }
    }
    return Status::Ok();
  };
  if (!a.spec.empty()) {
    auto contracts = read_spec(a, std::max<size_t>(1, targets.size()));
    if (!contracts.ok()) return contracts.status();
    GATEJIT_RETURN_IF_ERROR(add_for_targets(*contracts));
  }
  if (!a.contracts.empty()) {
    auto contracts = read_contract_record(a.contracts);
    if (!contracts.ok()) return contracts.status();
    GATEJIT_RETURN_IF_ERROR(check_contract_cap("--contracts " + escape_input(a.contracts), contracts->size(),
                                               std::max<size_t>(1, targets.size()), "the record"));
    GATEJIT_RETURN_IF_ERROR(add_for_targets(*contracts));
  }
  if (a.all_generic)
    for (Target t : targets)
      for (const Contract &g : generic_kernel_contracts(t)) GATEJIT_RETURN_IF_ERROR(add(g));
  return jobs;
}

void draw_progress(size_t done, size_t total) {
  const int width = 40;
  const int filled = total ? int(width * done / total) : width;
  std::fprintf(stderr, "\r[%s%s] %zu/%zu", std::string(filled, '#').c_str(), std::string(width - filled, ' ').c_str(),
               done, total);
  if (done == total) std::fprintf(stderr, "\n");
  std::fflush(stderr);
}

int run_precompile(const PrecompileArgs &a) {
  if (a.spec.empty() && a.contracts.empty() && !a.all_generic) {  // a usage error: exit status 2
    std::fprintf(stderr, "gatejit: error: precompile: nothing to compile: give a spec, --contracts FILE or "
                         "--all-generic\nRun with --help for more information.\n");
    return 2;
  }
  auto jobs = load_spec(a);
  if (!jobs.ok()) return fail(jobs.status());
  const unsigned threads = std::max(1u, std::min<unsigned>(a.jobs ? a.jobs : std::thread::hardware_concurrency(),
                                                           unsigned(jobs->size())));
  const bool tty = isatty(STDERR_FILENO);
  std::vector<StatusOr<compiler::CompiledKernel>> results(jobs->size(), internal_error("not compiled"));
  std::atomic<size_t> next{0}, done{0};
  std::mutex progress_mu;
  auto worker = [&] {
    for (size_t i; (i = next++) < jobs->size();) {
      results[i] = compiler::compile((*jobs)[i]);
      const size_t d = ++done;
      if (tty) {
        std::lock_guard<std::mutex> lock(progress_mu);
        draw_progress(d, jobs->size());
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(worker);
  for (auto &t : pool) t.join();

  BundleWriter writer;
  for (size_t i = 0; i < results.size(); ++i) {
    if (!results[i].ok())
      return fail(Status(results[i].status().code(),
                         canonical_text((*jobs)[i]) + ": " + results[i].status().message()));
    Status s = writer.add(results[i]->binary);
    if (!s.ok()) return fail(s);
  }
  Status s = writer.write(a.output, a.compress);
  if (!s.ok()) return fail(s);
  std::cout << "gatejit precompile: " << writer.size() << " kernels -> " << a.output << " (" << threads
            << " threads)\n";
  return 0;
}

}  // namespace

Runner add_precompile_command(CLI::App &app) {
  auto a = std::make_shared<PrecompileArgs>();
  auto *cmd = app.add_subcommand("precompile", "compile every contract of a spec into one kernel bundle");
  cmd->add_option("spec", a->spec, "JSON list of contracts (\"m\" may be a list or {\"min\",\"max\"})");
  cmd->add_option("--contracts", a->contracts,
                  "recorded contracts, one JSON object a line (GATEJIT_RECORD's file); repeats are skipped");
  cmd->add_flag("--all-generic", a->all_generic,
                "every generic kernel each of --targets allows (the shipped bundle's contents)");
  cmd->add_option("--targets", a->targets, "comma-separated targets; default: each contract's own");
  cmd->add_option("-o,--output", a->output, "bundle file to write")->required();
  cmd->add_option("-j,--jobs", a->jobs, "parallel compiles (default: all cores)");
  cmd->add_flag("--compress", a->compress, "zstd-compress each entry");
  cmd->add_flag("--no-generic", a->no_generic, "do not add the generic fallback kernels");
  return [a] { return run_precompile(*a); };
}

}  // namespace gatejit::tool
