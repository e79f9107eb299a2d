// gatejit bundle extract BUNDLE -o DIR: every kernel of a bundle written out as
// the plain code object LLVM's and the vendors' tools read (AMDGPU: an HSA
// code object, .hsaco; NVPTX: PTX text, .ptx), named
// <target>-<template>-<first 12 hex digits of the contract key>, plus
// index.tsv: one line per file with its kernel symbol and canonical contract.
// Names and index lines come from validated fields only (bundle_extract.h);
// a bundle with any entry that fails is refused before anything is written.
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <memory>

#include "bundle.h"
#include "bundle_extract.h"
#include "commands.h"
#include "file_io.h"
#include "input_echo.h"

namespace gatejit::tool {
namespace {

int run_extract(const std::string &bundle_path, const std::string &out_dir) {
  auto bundle = Bundle::open(bundle_path);
  if (!bundle.ok()) return fail(bundle.status());
  auto plan = plan_extract(**bundle);
  if (!plan.ok()) return fail(plan.status());
  if (::mkdir(out_dir.c_str(), 0755) != 0 && errno != EEXIST)
    return fail(io_error(escape_input(out_dir) + ": cannot create the output folder: " + std::strerror(errno)));
  // Every target checked before the first write: a symlink, FIFO or folder
  // where a file goes refuses the extraction, with nothing written.
  const std::string index_path = out_dir + "/index.tsv";
  for (const ExtractedFile &f : plan->files)
    if (Status s = check_replaceable(out_dir + "/" + f.name); !s.ok()) return fail(s);
  if (Status s = check_replaceable(index_path); !s.ok()) return fail(s);
  // Each file whole or not at all (temporary file + rename); the index last,
  // so it only ever lists files that were written.
  for (const ExtractedFile &f : plan->files)
    if (Status s = write_file_atomic(out_dir + "/" + f.name, f.code, 0644); !s.ok()) return fail(s);
  const std::string &index = plan->index_tsv;
  if (Status s = write_file_atomic(index_path, {reinterpret_cast<const uint8_t *>(index.data()), index.size()}, 0644);
      !s.ok())
    return fail(s);
  std::cout << "extracted " << plan->files.size() << " code objects from " << escape_input(bundle_path) << " into "
            << escape_input(out_dir) << " (index: " << escape_input(index_path) << ")\n";
  return 0;
}

}  // namespace

Runner add_bundle_command(CLI::App &app) {
  auto *cmd = app.add_subcommand("bundle", "work with kernel bundles");
  cmd->require_subcommand(1);
  auto *extract = cmd->add_subcommand(
      "extract", "write every kernel of a bundle out as a plain code object (.hsaco for AMDGPU, .ptx for NVPTX)");
  auto bundle = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  extract->add_option("bundle", *bundle, "the bundle file (.gjb)")->required();
  extract->add_option("-o,--output", *out, "folder to write into (created if missing)")->required();
  return [bundle, out] { return run_extract(*bundle, *out); };
}

}  // namespace gatejit::tool
