// codegen_digest: compiles the invariant grid (codegen_grid.cpp) and prints
// one line a contract: the digest of its machine code (hsaco: the bytes of
// `.text` and of the kernel descriptor; PTX: the text with the kernel's name
// normalised), its launch geometry and its argument list.
//
//   codegen_digest --write FILE   record the grid (the golden file)
//   codegen_digest --check FILE   compare with it; exit 1 naming each change
//
// A restructuring of the planner or the templates must leave every line as
// it was. The golden file also records the LLVM version it was made with: a
// different LLVM makes different code, so the check then says so and stops.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <elf.h>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "codegen_grid.h"
#include "gatejit/compiler/compiler.h"
#include "gatejit/kernel_abi.h"

namespace gatejit::invariant {
namespace {

std::string hex128(const void *data, size_t size) {
  const XXH128_hash_t h = XXH3_128bits(data, size);
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return buf;
}

struct ElfView {
  const std::vector<uint8_t> &bytes;
  template <typename T>
  const T *at(uint64_t offset) const {
    if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) return nullptr;
    return reinterpret_cast<const T *>(bytes.data() + offset);
  }
};

// `.text` and the kernel descriptor (the `<symbol>.kd` object) of an hsaco.
std::string hsaco_digest(const std::vector<uint8_t> &code, const std::string &symbol) {
  ElfView elf{code};
  const auto *eh = elf.at<Elf64_Ehdr>(0);
  if (eh == nullptr || std::memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0) return "not-elf";
  std::vector<const Elf64_Shdr *> sections;
  for (int i = 0; i < eh->e_shnum; ++i) sections.push_back(elf.at<Elf64_Shdr>(eh->e_shoff + uint64_t(i) * eh->e_shentsize));
  if (std::count(sections.begin(), sections.end(), nullptr) || eh->e_shstrndx >= sections.size()) return "bad-sections";
  const Elf64_Shdr *names = sections[eh->e_shstrndx];
  auto name_of = [&](uint64_t table_offset, uint32_t name) -> std::string {
    const uint64_t at = table_offset + name;
    if (at >= code.size()) return "";
    return std::string(reinterpret_cast<const char *>(code.data() + at), strnlen(reinterpret_cast<const char *>(code.data() + at), code.size() - at));
  };
  std::string text = "none", descriptor = "none";
  for (const Elf64_Shdr *s : sections) {
    if (name_of(names->sh_offset, s->sh_name) == ".text" && s->sh_offset + s->sh_size <= code.size())
      text = hex128(code.data() + s->sh_offset, s->sh_size);
    if (s->sh_type != SHT_SYMTAB || s->sh_link >= sections.size()) continue;
    const Elf64_Shdr *strings = sections[s->sh_link];
    for (uint64_t off = 0; off + sizeof(Elf64_Sym) <= s->sh_size; off += sizeof(Elf64_Sym)) {
      const auto *sym = elf.at<Elf64_Sym>(s->sh_offset + off);
      if (sym == nullptr || name_of(strings->sh_offset, sym->st_name) != symbol + ".kd") continue;
      if (sym->st_shndx >= sections.size()) continue;
      const Elf64_Shdr *home = sections[sym->st_shndx];
      const uint64_t at = home->sh_offset + (sym->st_value - home->sh_addr);
      if (at + sym->st_size <= code.size()) descriptor = hex128(code.data() + at, sym->st_size);
    }
  }
  return "text=" + text + " kd=" + descriptor;
}

std::string ptx_digest(const std::vector<uint8_t> &code, const std::string &symbol) {
  std::string text(code.begin(), code.end());
  for (size_t at = text.find(symbol); !symbol.empty() && at != std::string::npos; at = text.find(symbol, at + 6))
    text.replace(at, symbol.size(), "KERNEL");
  return "ptx=" + hex128(text.data(), text.size());
}

std::string geometry_text(const LaunchGeometry &g) {
  std::ostringstream o;
  o << "block=" << g.block_x << " n_per_block=" << g.n_per_block << " grid_y_is_m=" << g.grid_y_is_m
    << " m_per_block=" << g.m_per_block << " k_blocks=" << g.k_blocks << " shared=" << g.shared_bytes
    << " persistent=" << g.persistent_workgroups << " tma=" << g.tensor_maps.box_k << "/" << g.tensor_maps.weight_rows
    << "/" << g.tensor_maps.hidden_rows;
  return o.str();
}

std::string abi_text(const KernelBinary &kb) {
  std::string s;
  for (const AbiArg &a : declared_abi(kb)) s += std::string(s.empty() ? "" : ",") + abi_kind_name(a.kind) + ":" + abi_value_name(a.value);
  return s;
}

std::string case_name(const GridCase &gc) {
  return canonical_text(gc.contract) + (gc.tuning.empty() ? "" : " tuning=" + gc.tuning);
}

// Which form a case took, for the coverage summary: the kernel template,
// with the tiled shape and the K split's meeting where there is one.
std::string form_of(const nlohmann::json &report) {
  std::string form = report.value("template_file", "?");
  const nlohmann::json &t = report.value("tuning", nlohmann::json::object());
  if (t.contains("BM")) form += " " + std::to_string(t.value("BM", 0)) + "x" + std::to_string(t.value("BN", 0));
  if (t.value("PERSISTENT_WORKGROUPS", 0) > 0) form += " persistent";
  if (t.value("SPLITS", 1) > 1) form += t.value("SPLIT_POLL", 0) ? " split-poll" : " split-arrival";
  if (t.contains("GROWS") || t.contains("THIN_ROWS")) form += " rows";
  return form;
}

std::string digest_line(const GridCase &gc, std::string *form) {
  auto r = compiler::compile(gc.contract);
  if (!r.ok()) return "error: " + r.status().to_string();
  *form = std::string(target_name(gc.contract.target)) + " " + form_of(r->report);
  const KernelBinary &kb = r->binary;
  const std::string code = target_is_amdgpu(kb.target) ? hsaco_digest(kb.code, kb.symbol) : ptx_digest(kb.code, kb.symbol);
  return code + "\t" + geometry_text(kb.geometry) + "\tabi=" + abi_text(kb);
}

// The grid's lines, compiled on every core; cases of one override at a time
// (the override is read from the environment).
std::map<std::string, std::string> digest_grid(unsigned threads, std::map<std::string, int> &forms) {
  const std::vector<GridCase> grid = codegen_grid();
  std::map<std::string, std::vector<const GridCase *>> by_tuning;
  for (const GridCase &gc : grid) by_tuning[gc.tuning].push_back(&gc);
  std::map<std::string, std::string> lines;
  std::mutex mu;
  for (const auto &[tuning, cases] : by_tuning) {
    if (tuning.empty()) unsetenv("GATEJIT_MMA_TUNING");
    else setenv("GATEJIT_MMA_TUNING", tuning.c_str(), 1);
    std::atomic<size_t> next{0};
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&] {
        for (size_t i; (i = next++) < cases.size();) {
          std::string form;
          std::string line = digest_line(*cases[i], &form);
          std::lock_guard<std::mutex> lock(mu);
          ++forms[form];
          lines[case_name(*cases[i])] = std::move(line);
        }
      });
    for (std::thread &t : pool) t.join();
  }
  unsetenv("GATEJIT_MMA_TUNING");
  return lines;
}

// "# llvm 22.1.3": the LLVM part of the compiler's fingerprint.
std::string llvm_line() {
  const std::string fp = compiler::fingerprint();
  const size_t at = fp.find("/llvm-");
  const size_t end = at == std::string::npos ? at : fp.find('/', at + 1);
  return "# llvm " + (at == std::string::npos ? std::string("unknown") : fp.substr(at + 6, end - at - 6));
}

int run(int argc, char **argv) {
  if (argc != 3 || (std::strcmp(argv[1], "--write") != 0 && std::strcmp(argv[1], "--check") != 0)) {
    std::cerr << "usage: codegen_digest --write|--check FILE\n";
    return 2;
  }
  const bool write = std::strcmp(argv[1], "--write") == 0;
  const std::string kLlvmLine = llvm_line();
  std::map<std::string, std::string> golden;
  if (!write) {
    std::ifstream in(argv[2]);
    if (!in) {
      std::cerr << "codegen_digest: cannot read " << argv[2] << "\n";
      return 2;
    }
    std::string line, llvm;
    while (std::getline(in, line)) {
      if (line.rfind("# llvm ", 0) == 0) llvm = line;
      if (line.empty() || line[0] == '#') continue;
      const size_t tab = line.find('\t');
      golden[line.substr(0, tab)] = tab == std::string::npos ? "" : line.substr(tab + 1);
    }
    if (llvm != kLlvmLine) {
      std::cerr << "codegen_digest: the golden file was made with '" << llvm.substr(2) << "', this build has '"
                << kLlvmLine.substr(2) << "': machine code is not comparable across LLVM versions. "
                << "Regenerate it at the parent commit with --write, then check the change against it.\n";
      return 1;
    }
  }
  const unsigned threads = std::max(1u, std::min(4u, std::thread::hardware_concurrency()));
  std::map<std::string, int> forms;
  const std::map<std::string, std::string> lines = digest_grid(threads, forms);
  std::cout << "codegen_digest: forms covered\n";
  for (const auto &[form, count] : forms) std::cout << "  " << count << "\t" << form << "\n";
  if (write) {
    for (const auto &[name, line] : lines)
      if (line.rfind("error:", 0) == 0) {
        std::cerr << "codegen_digest: the grid's contract " << name << " does not compile: " << line << "\n";
        return 1;
      }
    std::ofstream out(argv[2]);
    out << "# The invariant grid's machine code (tests/invariant/codegen_digest.cpp).\n"
        << "# Regenerate: build/tests/invariant/codegen_digest --write tests/invariant/codegen_golden.tsv\n"
        << kLlvmLine << "\n";
    for (const auto &[name, line] : lines) out << name << "\t" << line << "\n";
    std::cout << "codegen_digest: wrote " << lines.size() << " contracts to " << argv[2] << "\n";
    return out ? 0 : 1;
  }
  size_t changed = 0, same = 0;
  for (const auto &[name, line] : lines) {
    auto it = golden.find(name);
    if (it == golden.end()) {
      std::cout << "NEW     " << name << "\n        " << line << "\n";
      ++changed;
    } else if (it->second != line) {
      std::cout << "CHANGED " << name << "\n  was   " << it->second << "\n  now   " << line << "\n";
      ++changed;
    } else {
      ++same;
    }
  }
  for (const auto &[name, line] : golden)
    if (!lines.count(name)) {
      std::cout << "GONE    " << name << "\n";
      ++changed;
    }
  std::cout << "codegen_digest: " << same << " of " << lines.size() << " contracts identical, " << changed
            << " changed\n";
  return changed == 0 ? 0 : 1;
}

}  // namespace
}  // namespace gatejit::invariant

int main(int argc, char **argv) { return gatejit::invariant::run(argc, argv); }
