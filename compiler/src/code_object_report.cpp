#include "code_object_report.h"

#include "code_object_validate.h"

#include <fmt/format.h>

#include <map>
#include <regex>
#include <sstream>

#include "amdgpu_disassembly.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/BinaryFormat/MsgPackDocument.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/MemoryBuffer.h"

namespace gatejit::compiler {
namespace {

nlohmann::json msgpack_to_json(llvm::msgpack::DocNode n) {  // a handle: cheap to copy
  using llvm::msgpack::Type;
  switch (n.getKind()) {
    case Type::Int: return n.getInt();
    case Type::UInt: return n.getUInt();
    case Type::Boolean: return n.getBool();
    case Type::Float: return n.getFloat();
    case Type::String: return n.getString().str();
    case Type::Array: {
      nlohmann::json a = nlohmann::json::array();
      for (auto &e : n.getArray()) a.push_back(msgpack_to_json(e));
      return a;
    }
    case Type::Map: {
      nlohmann::json o = nlohmann::json::object();
      for (auto &[k, v] : n.getMap())
        o[k.getKind() == Type::String ? k.getString().str() : std::to_string(o.size())] = msgpack_to_json(v);
      return o;
    }
    default: return nullptr;
  }
}

StatusOr<nlohmann::json> disassemble_histogram(const llvm::object::ObjectFile &obj, const std::string &cpu) {
  auto dis = disassemble_amdgpu(obj, cpu);
  if (!dis.ok()) return dis.status();
  std::map<std::string, int> histogram;
  for (const DisassembledInstruction &i : dis->instructions) ++histogram[i.mnemonic];
  nlohmann::json j = {{"total", dis->instructions.size()},
                      {"undecodable_words", dis->undecodable_words},
                      {"histogram", histogram}};
  return j;
}

StatusOr<nlohmann::json> hsaco_report(std::span<const uint8_t> bytes) {
  auto buffer = llvm::MemoryBuffer::getMemBuffer(
      llvm::StringRef(reinterpret_cast<const char *>(bytes.data()), bytes.size()), "code-object", false);
  auto obj_or = llvm::object::ObjectFile::createELFObjectFile(buffer->getMemBufferRef());
  if (!obj_or) return corrupt("not a valid ELF code object: " + llvm::toString(obj_or.takeError()));
  auto *elf = llvm::dyn_cast<llvm::object::ELF64LEObjectFile>(obj_or->get());
  if (!elf) return corrupt("code object is not a 64-bit little-endian ELF");
  const auto &file = elf->getELFFile();

  nlohmann::json metadata;
  auto phdrs = file.program_headers();
  if (!phdrs) return corrupt("code object has no program headers: " + llvm::toString(phdrs.takeError()));
  for (const auto &ph : *phdrs) {
    if (ph.p_type != llvm::ELF::PT_NOTE) continue;
    llvm::Error err = llvm::Error::success();
    for (const auto &note : file.notes(ph, err)) {
      if (note.getName() != "AMDGPU" || note.getType() != llvm::ELF::NT_AMDGPU_METADATA) continue;
      llvm::ArrayRef<uint8_t> desc = note.getDesc(ph.p_align ? ph.p_align : 4);
      llvm::msgpack::Document doc;
      if (!doc.readFromBlob(llvm::StringRef(reinterpret_cast<const char *>(desc.data()), desc.size()), false))
        return corrupt("AMDGPU metadata note is not valid msgpack");
      metadata = msgpack_to_json(doc.getRoot());
    }
    if (err) return corrupt("bad ELF note: " + llvm::toString(std::move(err)));
  }
  if (!metadata.is_object() || !metadata.contains("amdhsa.kernels") || metadata["amdhsa.kernels"].empty())
    return corrupt("code object has no amdhsa.kernels metadata");

  const std::string target_id = metadata.value("amdhsa.target", "");
  std::string cpu = target_id.substr(target_id.rfind('-') + 1);
  cpu = cpu.substr(0, cpu.find(':'));
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto &k : metadata["amdhsa.kernels"]) {
    // The kernel's own arguments (not the hidden ones the runtime appends):
    // their sizes, to set beside the ABI its binary declares.
    nlohmann::json arg_bytes = nlohmann::json::array();
    for (const auto &a : k.value(".args", nlohmann::json::array()))
      if (!a.value(".value_kind", "").starts_with("hidden_")) arg_bytes.push_back(a.value(".size", 0));
    kernels.push_back({
        {"arg_bytes", arg_bytes},
        {"symbol", k.value(".symbol", "")},
        {"name", k.value(".name", "")},
        {"wave_size", k.value(".wavefront_size", 0)},
        {"sgpr_count", k.value(".sgpr_count", 0)},
        {"vgpr_count", k.value(".vgpr_count", 0)},
        {"agpr_count", k.value(".agpr_count", 0)},
        {"sgpr_spill_count", k.value(".sgpr_spill_count", 0)},
        {"vgpr_spill_count", k.value(".vgpr_spill_count", 0)},
        {"lds_bytes", k.value(".group_segment_fixed_size", 0)},
        {"scratch_bytes", k.value(".private_segment_fixed_size", 0)},
        {"kernarg_bytes", k.value(".kernarg_segment_size", 0)},
        {"max_flat_workgroup_size", k.value(".max_flat_workgroup_size", 0)},
        {"uses_dynamic_stack", k.value(".uses_dynamic_stack", false)},
    });
  }
  auto histogram = disassemble_histogram(*elf, cpu);
  if (!histogram.ok()) return histogram.status();
  nlohmann::json r = {{"format", "hsaco"}, {"target_id", target_id}, {"cpu", cpu}, {"kernels", kernels},
                      {"instructions", *histogram}, {"code_object_bytes", bytes.size()}};
  return r;
}

StatusOr<nlohmann::json> ptx_report(std::span<const uint8_t> bytes) {
  const std::string text(bytes.begin(), bytes.end());
  std::istringstream in(text);
  std::string line, target, entry;
  std::map<std::string, int> histogram, registers;
  int64_t shared_bytes = 0;
  int total = 0;
  std::string reqntid, maxntid;
  const std::regex reg_decl(R"(^\s*\.reg\s+\.(\w+)\s+%\w+<(\d+)>;)");
  const std::regex shared_decl(R"(\.shared\s.*\[(\d+)\])");
  const std::regex array_param(R"(\.b8\s+\w+\[(\d+)\])");
  const std::regex scalar_param(R"(\.[subf](\d+)\s)");
  bool in_params = false;
  nlohmann::json arg_bytes = nlohmann::json::array();
  std::smatch m;
  while (std::getline(in, line)) {
    const size_t b = line.find_first_not_of(" \t");
    if (b == std::string::npos) continue;
    std::string t = line.substr(b);
    if (t.rfind("//", 0) == 0) continue;
    if (t.rfind(".target", 0) == 0) target = t.substr(8, t.find_first_of(" ,;\n", 8) - 8);
    else if (t.rfind(".visible .entry", 0) == 0 || t.rfind(".entry", 0) == 0) {
      size_t s = t.find(".entry") + 7;
      entry = t.substr(s, t.find('(', s) - s);
      in_params = true;
    } else if (in_params && t[0] == ')') in_params = false;
    else if (in_params && t.rfind(".param", 0) == 0) {
      // ".param .u64 .ptr .align 1 k_param_0," or ".param .align 64 .b8 k_param_11[128]"
      if (std::regex_search(t, m, array_param)) arg_bytes.push_back(std::stoll(m[1]));
      else if (std::regex_search(t, m, scalar_param)) arg_bytes.push_back(std::stoll(m[1]) / 8);
    } else if (t.rfind(".reqntid", 0) == 0) reqntid = t.substr(9);
    else if (t.rfind(".maxntid", 0) == 0) maxntid = t.substr(9);
    else if (std::regex_search(line, m, reg_decl)) registers[m[1]] += std::stoi(m[2]);
    else if (t.find(".shared") != std::string::npos && std::regex_search(line, m, shared_decl))
      shared_bytes += std::stoll(m[1]);
    else if (t[0] != '.' && t[0] != '{' && t[0] != '}' && t[0] != '$' && t.back() == ';') {
      if (t[0] == '@') t = t.substr(t.find_first_of(" \t") + 1);  // predicate guard
      std::string op = t.substr(0, t.find_first_of(" \t;"));
      if (!op.empty()) ++histogram[op], ++total;
    }
  }
  if (entry.empty()) return corrupt("PTX text has no .entry (not a PTX kernel?)");
  int reg_total = 0;
  for (const auto &[type, count] : registers) reg_total += count;
  nlohmann::json kernel = {{"symbol", entry}, {"arg_bytes", arg_bytes}, {"wave_size", 32}, {"registers_declared", registers},
                           {"registers_declared_total", reg_total}, {"shared_bytes", shared_bytes},
                           {"reqntid", reqntid}, {"maxntid", maxntid}};
  nlohmann::json r = {{"format", "ptx"}, {"target_id", target}, {"cpu", target},
                      {"kernels", nlohmann::json::array({kernel})},
                      {"instructions", {{"total", total}, {"histogram", histogram}}},
                      {"code_object_bytes", bytes.size()}};
  return r;
}

}  // namespace

BinaryFormat sniff_format(std::span<const uint8_t> bytes) {
  if (bytes.size() >= 4 && bytes[0] == 0x7f && bytes[1] == 'E' && bytes[2] == 'L' && bytes[3] == 'F')
    return BinaryFormat::kHsaco;
  return BinaryFormat::kPtx;
}

StatusOr<nlohmann::json> read_code_object_report(std::span<const uint8_t> bytes) {
  const bool hsaco = sniff_format(bytes) == BinaryFormat::kHsaco;
  // The readers below only see a file validate_*() accepted (LLVM's would
  // abort on some malformed ones); a field of an unexpected type or size is
  // then an error, not an uncaught throw.
  if (Status valid = hsaco ? validate_code_object(bytes) : validate_ptx_text(bytes); !valid.ok()) return valid;
  try {
    return hsaco ? hsaco_report(bytes) : ptx_report(bytes);
  } catch (const std::exception &e) {
    return corrupt(std::string("a field has an unexpected type or size (") + e.what() + ")");
  }
}

std::string format_model(const nlohmann::json &m) {
  return fmt::format("{:.2f} us predicted ({:.2f}-{:.2f}) on {}, limited by {}; ideal read {:.2f}-{:.2f} us",
                     m.value("predicted_us", 0.0), m["range_us"][0].get<double>(), m["range_us"][1].get<double>(),
                     m.value("device", ""), m.value("limiter", ""), m["ideal_read_us"][0].get<double>(),
                     m["ideal_read_us"][1].get<double>());
}

std::string format_report(const nlohmann::json &r) {
  std::string s;
  auto line = [&](const std::string &k, const std::string &v) { s += fmt::format("  {:<22} {}\n", k, v); };
  auto str = [](const nlohmann::json &v) { return v.is_string() ? v.get<std::string>() : v.dump(); };
  if (r.contains("contract")) line("contract", str(r["contract"]));
  if (r.contains("template")) line("template", str(r["template"]) + " (" + str(r.value("reason", "")) + ")");
  // The form of the template when it is not the kind's own file (mma_tiled).
  if (r.contains("template_file") && r["template_file"] != r.value("template", nlohmann::json()))
    line("template_file", str(r["template_file"]) + ".mlir");
  if (r.contains("tuning")) {
    std::string t;
    for (const auto &[name, v] : r["tuning"].items()) t += (t.empty() ? "" : " ") + name + "=" + str(v);
    line("tuning", t);
  }
  line("format", str(r.value("format", "")));
  line("target", str(r.value("target_id", "")));
  for (const auto &k : r.value("kernels", nlohmann::json::array())) {
    line("kernel", str(k.value("symbol", "")));
    for (const char *f : {"wave_size", "vgpr_count", "sgpr_count", "agpr_count", "vgpr_spill_count",
                          "sgpr_spill_count", "lds_bytes", "scratch_bytes", "kernarg_bytes",
                          "max_flat_workgroup_size", "registers_declared_total", "shared_bytes", "reqntid"})
      if (k.contains(f)) line(f, str(k[f]));
  }
  if (r.contains("workgroup_size")) line("workgroup_size", str(r["workgroup_size"]));
  if (r.contains("grid")) line("grid", str(r["grid"]));
  if (r.contains("dynamic_shared_bytes")) line("dynamic_shared_bytes", str(r["dynamic_shared_bytes"]));
  if (r.contains("tensor_map_boxes")) line("tensor_map_boxes", str(r["tensor_map_boxes"]));
  if (r.contains("compile_ms")) line("compile_ms", fmt::format("{:.1f}", r["compile_ms"].get<double>()));
  line("code_object_bytes", str(r.value("code_object_bytes", 0)));
  if (r.contains("model")) line("model", format_model(r["model"]));
  if (r.contains("gates")) {
    for (const auto &[name, g] : r["gates"].items())
      if (g.value("applies", true))
        line(std::string("gate ") + name, std::string(g.value("passed", false) ? "pass" : "FAIL") + ": " +
                                              str(g.value("detail", "")));
  }
  if (r.contains("instructions")) {
    const auto &ins = r["instructions"];
    line("instructions", str(ins.value("total", 0)));
    std::vector<std::pair<int, std::string>> sorted;
    for (const auto &[op, n] : ins["histogram"].items()) sorted.push_back({n.get<int>(), op});
    std::sort(sorted.rbegin(), sorted.rend());
    for (const auto &[n, op] : sorted) s += fmt::format("    {:>6}  {}\n", n, op);
  }
  return s;
}

}  // namespace gatejit::compiler
