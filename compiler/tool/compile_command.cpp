// gatejit compile / inspect / ir.
#include <fmt/format.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <iostream>

#include "bundle.h"
#include "code_object_report.h"
#include "commands.h"
#include "contract_flags.h"
#include "cache_toolchain.h"
#include "disk_cache.h"
#include "file_io.h"
#include "gatejit/compiler/compiler.h"
#include "plan/form_choice.h"
#include "input_echo.h"
#include "input_limits.h"
#include "json_input.h"

namespace gatejit::tool {

int fail(const Status &s) {
  std::fprintf(stderr, "gatejit: error: %s\n", bounded_message(s.message()).c_str());
  return 1;
}

namespace {

struct CompileArgs {
  ContractFlags flags;
  std::string output;
  bool json = false;
  bool no_cache = false;
};

// Compiles through the disk cache; `how` says whether it was a hit.
StatusOr<KernelBinary> compile_cached(const Contract &contract, bool no_cache, std::string &how) {
  auto normalized = normalize(contract);
  if (!normalized.ok()) return normalized.status();
  auto compile = [&]() -> StatusOr<KernelBinary> {
    auto compiled = compiler::compile(*normalized);
    if (!compiled.ok()) return compiled.status();
    return std::move(compiled->binary);
  };
  if (no_cache) {
    how = "cache: not used (--no-cache)";
    return compile();
  }
  auto choice = compiler::choose_template(*normalized);
  if (!choice.ok()) return choice.status();
  auto options = options_from_env();
  if (!options.ok()) return options.status();
  auto cache = DiskCache::open(*options);
  if (!cache.ok()) {
    how = "cache: unavailable (" + cache.status().message() + ")";
    return compile();
  }
  const std::string key = contract_key(compiler::keyed_contract(*normalized, *choice));
  const std::string toolchain = compiler::fingerprint();
  if (options->read_only) {  // load from the cache, never write it
    auto kb = (*cache)->get(cache_key(key, toolchain), key, toolchain);
    if (kb.ok()) {
      how = "cache: hit (" + options->dir + ", read-only)";
      return kb;
    }
    how = "cache: miss (read-only: compiled, not stored)";
    return compile();
  }
  bool hit = false;
  Status stored;
  auto kb = (*cache)->get_or_compile(cache_key(key, toolchain), key, toolchain, compile, &hit, &stored);
  if (!kb.ok()) return kb;
  // Like the runtime's JIT: name the toolchain, so a runtime without the compiler reads the entry.
  if (hit || stored.ok())
    if (Status s = record_toolchain(**cache, toolchain); !s.ok()) std::cerr << "gatejit: warning: " << s.message() << "\n";
  const std::string dir = escape_input(options->dir);
  if (hit) how = "cache: hit (" + dir + ")";
  else if (stored.ok()) how = "cache: miss, compiled and stored (" + dir + ")";
  else how = "cache: miss, compiled, NOT stored (" + stored.message() + ")";
  return kb;
}

// A kernel's stored report (from a cache or bundle entry: a file), parsed
// with the input bounds; null when it is not a JSON object.
nlohmann::json stored_report(const std::string &text) {
  auto r = parse_json_input(text, "report");
  return r.ok() && r->is_object() ? *r : nlohmann::json();
}

// format_report() expects the fields' usual types; a hostile file can give
// others. One error line instead of an uncaught exception.
StatusOr<std::string> format_checked(const nlohmann::json &report, const std::string &what) {
  try {
    return compiler::format_report(report);
  } catch (const std::exception &e) {
    return corrupt(what + ": the report has a field of an unexpected type (" + escape_input(e.what(), 200) + ")");
  }
}

int run_compile(const CompileArgs &a) {
  auto contract = a.flags.contract();
  if (!contract.ok()) return fail(contract.status());
  std::string how;
  auto kb = compile_cached(*contract, a.no_cache, how);
  if (!kb.ok()) return fail(kb.status());
  if (!a.output.empty()) {
    Status s = write_file_atomic(a.output, kb->code, 0644);
    if (!s.ok()) return fail(s);
  }
  nlohmann::json report = stored_report(kb->report_json);
  if (report.is_null()) return fail(corrupt("the kernel's report is not a valid JSON object"));
  report["cache"] = how;
  if (a.json) {
    std::cout << report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return 0;
  }
  auto text = format_checked(report, "the kernel's report");
  if (!text.ok()) return fail(text.status());
  std::cout << fmt::format("gatejit compile: {} ({}, {} bytes{})\n", kb->symbol, binary_format_name(kb->format),
                           kb->code.size(), a.output.empty() ? "" : " -> " + escape_input(a.output));
  std::cout << "  " << how << "\n" << *text;
  return 0;
}

// One stored kernel (a bundle entry or a cache entry) as JSON.
nlohmann::json stored_kernel_json(const KernelBinary &kb) {
  return {{"key", kb.key}, {"contract", kb.contract_text}, {"symbol", kb.symbol}, {"target", target_name(kb.target)},
          {"toolchain", kb.toolchain}, {"code_bytes", kb.code.size()}, {"report", stored_report(kb.report_json)}};
}

// The same as text; `where` names it in errors.
Status print_stored_kernel(const KernelBinary &kb, const std::string &where) {
  auto text = format_checked(stored_report(kb.report_json), where);
  if (!text.ok()) return text.status();
  std::cout << fmt::format("{} {} {} ({} bytes)\n", kb.key, target_name(kb.target), escape_input(kb.symbol),
                           kb.code.size());
  std::cout << "  contract " << escape_input(kb.contract_text) << "\n" << *text;
  return Status::Ok();
}

void print_json(const nlohmann::json &j) {
  std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

int inspect_bundle(std::vector<uint8_t> bytes, const std::string &path, bool json) {
  auto bundle = Bundle::from_bytes(std::move(bytes), path);
  if (!bundle.ok()) return fail(bundle.status());
  nlohmann::json out = nlohmann::json::array();
  for (const auto &e : (*bundle)->entries()) {
    auto kb = (*bundle)->find(e.key);
    if (!kb.ok()) return fail(kb.status());
    if (json) out.push_back(stored_kernel_json(*kb));
    else if (Status s = print_stored_kernel(*kb, "bundle " + escape_input(path) + ": entry " + e.key); !s.ok())
      return fail(s);
  }
  if (json) print_json(out);
  else std::cout << escape_input(path) << ": " << (*bundle)->size() << " kernels\n";
  return 0;
}

// A disk-cache entry (<cache>/v1/<xx>/<key>.gjk): one encoded KernelBinary,
// checksum-verified by the decoder.
int inspect_cache_entry(const std::vector<uint8_t> &bytes, const std::string &path, bool json) {
  auto kb = decode_kernel_binary(bytes);
  if (!kb.ok()) return fail(Status(kb.status().code(), escape_input(path) + ": " + kb.status().message()));
  if (json) {
    print_json(stored_kernel_json(*kb));
    return 0;
  }
  if (Status s = print_stored_kernel(*kb, "cache entry " + escape_input(path)); !s.ok()) return fail(s);
  std::cout << "  toolchain " << escape_input(kb->toolchain) << "\n";
  return 0;
}

int run_inspect(const std::string &path, bool json) {
  auto fd = open_regular_file(AT_FDCWD, path, path, /*no_follow=*/false);
  if (!fd.ok()) return fail(fd.status());
  // The first bytes say which bound applies: a bundle's or a code object's.
  char magic[8] = {};
  const bool full = ::pread(fd->get(), magic, sizeof magic, 0) == ssize_t(sizeof magic);
  const bool bundle = full && std::memcmp(magic, "GJBUNDLE", sizeof magic) == 0;
  const bool cache_entry = full && std::memcmp(magic, "GJKB", 4) == 0;
  auto bytes = read_bounded(fd->get(), bundle ? limits::kBundleBytes : limits::kCodeObjectBytes, path);
  if (!bytes.ok()) return fail(bytes.status());
  if (bundle) return inspect_bundle(std::move(*bytes), path, json);
  if (cache_entry) return inspect_cache_entry(*bytes, path, json);
  auto report = compiler::read_code_object_report(*bytes);
  if (!report.ok()) return fail(Status(report.status().code(), escape_input(path) + ": " + report.status().message()));
  if (json) {
    print_json(*report);
    return 0;
  }
  auto text = format_checked(*report, escape_input(path));
  if (!text.ok()) return fail(text.status());
  std::cout << escape_input(path) << ":\n" << *text;
  return 0;
}

}  // namespace

Runner add_compile_command(CLI::App &app) {
  auto a = std::make_shared<CompileArgs>();
  auto *cmd = app.add_subcommand("compile", "compile a contract into a code object and print its report");
  a->flags.add_to(cmd);
  cmd->add_option("-o,--output", a->output, "write the code object (hsaco, or PTX for sm_90) here");
  cmd->add_flag("--json", a->json, "print the report as JSON");
  cmd->add_flag("--no-cache", a->no_cache, "compile without the disk cache");
  return [a] { return run_compile(*a); };
}

Runner add_inspect_command(CLI::App &app) {
  auto path = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto *cmd = app.add_subcommand("inspect", "print the report of a code object (hsaco, PTX), of every kernel in a bundle, or of a disk-cache entry (.gjk)");
  cmd->add_option("file", *path, "code object (.hsaco, .ptx), bundle (.gjb) or cache entry (.gjk)")->required();
  cmd->add_flag("--json", *json, "print as JSON");
  return [path, json] { return run_inspect(*path, *json); };
}

Runner add_ir_command(CLI::App &app) {
  auto flags = std::make_shared<ContractFlags>();
  auto stage = std::make_shared<std::string>("gpu");
  auto *cmd = app.add_subcommand("ir", "print the IR of one pipeline stage");
  flags->add_to(cmd);
  cmd->add_option("--stage", *stage, "template | gpu | llvm | isa");
  return [flags, stage] {
    auto parsed = compiler::parse_stage(*stage);
    if (!parsed.ok()) return fail(parsed.status());
    auto contract = flags->contract();
    if (!contract.ok()) return fail(contract.status());
    auto text = compiler::emit_stage(*contract, *parsed);
    if (!text.ok()) return fail(text.status());
    std::cout << *text;
    return 0;
  };
}

}  // namespace gatejit::tool
