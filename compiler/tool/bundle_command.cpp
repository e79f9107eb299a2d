// gatejit bundle extract BUNDLE -o DIR: every kernel of a bundle written out as
// the plain code object LLVM's and the vendors' tools read (AMDGPU: an HSA
// code object, .hsaco; NVPTX: PTX text, .ptx), named
// <target>-<template>-<first 12 hex digits of the contract key>, plus
// index.tsv: one line per file with its kernel symbol and canonical contract.
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <memory>

#include "bundle.h"
#include "commands.h"
#include "file_io.h"
#include "gatejit/target_info.h"

namespace gatejit::tool {
namespace {

// "template=mma" out of the canonical contract text; "kernel" if absent.
std::string template_of(const std::string &contract_text) {
  const std::string tag = " template=";
  const size_t at = contract_text.find(tag);
  if (at == std::string::npos) return "kernel";
  const size_t start = at + tag.size();
  return contract_text.substr(start, contract_text.find(' ', start) - start);
}

int run_extract(const std::string &bundle_path, const std::string &out_dir) {
  auto bundle = Bundle::open(bundle_path);
  if (!bundle.ok()) return fail(bundle.status());
  if (::mkdir(out_dir.c_str(), 0755) != 0 && errno != EEXIST)
    return fail(io_error(out_dir + ": cannot create the output folder: " + std::strerror(errno)));
  std::string index = "file\tsymbol\tcontract\n";
  size_t written = 0;
  for (const BundleEntryInfo &e : (*bundle)->entries()) {
    auto kb = (*bundle)->find(e.key);
    if (!kb.ok()) return fail(kb.status());
    const TargetInfo &t = target_info(kb->target);
    const std::string name = std::string(t.name) + "-" + template_of(kb->contract_text) + "-" + kb->key.substr(0, 12) +
                             "." + binary_format_name(kb->format);
    if (Status s = write_file_atomic(out_dir + "/" + name, kb->code, 0644); !s.ok()) return fail(s);
    index += name + "\t" + kb->symbol + "\t" + kb->contract_text + "\n";
    ++written;
  }
  const std::string index_path = out_dir + "/index.tsv";
  if (Status s = write_file_atomic(index_path, {reinterpret_cast<const uint8_t *>(index.data()), index.size()}, 0644);
      !s.ok())
    return fail(s);
  std::cout << "extracted " << written << " code objects from " << bundle_path << " into " << out_dir
            << " (index: " << index_path << ")\n";
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
