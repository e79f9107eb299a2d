// The gatejit command line: compile, inspect, ir (and the runtime's cache,
// precompile and explain commands).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>

#include "code_object_report.h"
#include "contract_flags.h"
#include "gatejit/compiler/compiler.h"

namespace gatejit::tool {
namespace {

int fail(const Status &s) {
  std::fprintf(stderr, "gatejit: error: %s\n", s.message().c_str());
  return 1;
}

StatusOr<std::vector<uint8_t>> read_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return io_error(path + ": cannot open the file");
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

Status write_file(const std::string &path, const std::vector<uint8_t> &bytes) {
  // Write beside, then rename: a failed write never leaves a half file at `path`.
  const std::string tmp = path + ".tmp-gatejit";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return io_error(path + ": cannot create the file");
    out.write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
    out.close();
    if (!out) {
      std::remove(tmp.c_str());
      return io_error(path + ": write failed");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return io_error(path + ": cannot rename the finished file into place");
  }
  return Status::Ok();
}

int run_compile(const ContractFlags &flags, const std::string &output, bool json) {
  auto contract = flags.contract();
  if (!contract.ok()) return fail(contract.status());
  auto compiled = compiler::compile(*contract);
  if (!compiled.ok()) return fail(compiled.status());
  if (!output.empty()) {
    Status s = write_file(output, compiled->binary.code);
    if (!s.ok()) return fail(s);
  }
  if (json) std::cout << compiled->report.dump(2) << "\n";
  else {
    std::cout << "gatejit compile: " << compiled->binary.symbol << " ("
              << binary_format_name(compiled->binary.format) << ", " << compiled->binary.code.size() << " bytes"
              << (output.empty() ? "" : " -> " + output) << ")\n";
    std::cout << compiler::format_report(compiled->report);
  }
  return 0;
}

int run_inspect(const std::string &path, bool json) {
  auto bytes = read_file(path);
  if (!bytes.ok()) return fail(bytes.status());
  auto report = compiler::read_code_object_report(*bytes);
  if (!report.ok()) return fail(Status(report.status().code(), path + ": " + report.status().message()));
  if (json) std::cout << report->dump(2) << "\n";
  else std::cout << path << ":\n" << compiler::format_report(*report);
  return 0;
}

int run_ir(const ContractFlags &flags, const std::string &stage_name) {
  auto stage = compiler::parse_stage(stage_name);
  if (!stage.ok()) return fail(stage.status());
  auto contract = flags.contract();
  if (!contract.ok()) return fail(contract.status());
  auto text = compiler::emit_stage(*contract, *stage);
  if (!text.ok()) return fail(text.status());
  std::cout << *text;
  return 0;
}

}  // namespace
}  // namespace gatejit::tool

int main(int argc, char **argv) {
  using namespace gatejit::tool;
  CLI::App app{"gatejit: JIT code generator for fused gate-epilogue GPU kernels"};
  app.require_subcommand(1);

  ContractFlags compile_flags;
  std::string output;
  bool compile_json = false;
  auto *compile = app.add_subcommand("compile", "compile a contract into a code object and print its report");
  compile_flags.add_to(compile);
  compile->add_option("-o,--output", output, "write the code object (hsaco, or PTX for sm_90) here");
  compile->add_flag("--json", compile_json, "print the report as JSON");

  std::string inspect_path;
  bool inspect_json = false;
  auto *inspect = app.add_subcommand("inspect", "print the report of a code object (hsaco or PTX)");
  inspect->add_option("file", inspect_path, "code object")->required();
  inspect->add_flag("--json", inspect_json, "print the report as JSON");

  ContractFlags ir_flags;
  std::string stage = "gpu";
  auto *ir = app.add_subcommand("ir", "print the IR of one pipeline stage");
  ir_flags.add_to(ir);
  ir->add_option("--stage", stage, "template | gpu | llvm | isa");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    return app.exit(e);
  }
  if (*compile) return run_compile(compile_flags, output, compile_json);
  if (*inspect) return run_inspect(inspect_path, inspect_json);
  if (*ir) return run_ir(ir_flags, stage);
  return 1;
}
