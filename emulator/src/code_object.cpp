#include "code_object.h"

#include <algorithm>

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/BinaryFormat/MsgPackDocument.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/AMDHSAKernelDescriptor.h"
#include "llvm/Support/MemoryBuffer.h"

namespace gatejit::emulator {
namespace {

using Elf = llvm::object::ELF64LE;

template <typename T>
std::string err_text(llvm::Expected<T> &e) {
  return llvm::toString(e.takeError());
}

uint32_t bits(uint32_t word, int shift, int width) { return (word >> shift) & ((1u << width) - 1); }

// The descriptor's fields as AMDGPUUsage's "Kernel Descriptor" table defines
// them for GFX90A/GFX942/GFX950 (wave64, unified VGPR file: granule 8).
KernelDescriptor decode_descriptor(const llvm::amdhsa::kernel_descriptor_t &kd, uint64_t kd_offset) {
  KernelDescriptor d;
  d.group_segment_bytes = kd.group_segment_fixed_size;
  d.private_segment_bytes = kd.private_segment_fixed_size;
  d.kernarg_bytes = kd.kernarg_size;
  d.entry_offset = uint64_t(int64_t(kd_offset) + kd.kernel_code_entry_byte_offset);
  const uint32_t r1 = kd.compute_pgm_rsrc1, r2 = kd.compute_pgm_rsrc2, r3 = kd.compute_pgm_rsrc3;
  d.vgprs = (bits(r1, 0, 6) + 1) * 8;
  d.accum_offset = (bits(r3, 0, 6) + 1) * 4;
  d.float_round_32 = bits(r1, 12, 2);
  d.float_round_16_64 = bits(r1, 14, 2);
  d.float_denorm_32 = bits(r1, 16, 2);
  d.float_denorm_16_64 = bits(r1, 18, 2);
  d.dx10_clamp = bits(r1, 21, 1);
  d.ieee_mode = bits(r1, 23, 1);
  d.private_segment_wave_offset = bits(r2, 0, 1);
  d.user_sgprs = bits(r2, 1, 5);
  for (int i = 0; i < 3; ++i) d.workgroup_id[i] = bits(r2, 7 + i, 1);
  d.workgroup_info = bits(r2, 10, 1);
  d.workitem_id_dims = bits(r2, 11, 2) + 1;
  const uint16_t p = kd.kernel_code_properties;
  d.private_segment_buffer = p & 1;
  d.dispatch_ptr = p & 2;
  d.queue_ptr = p & 4;
  d.kernarg_ptr = p & 8;
  d.dispatch_id = p & 16;
  d.flat_scratch_init = p & 32;
  d.private_segment_size = p & 64;
  d.kernarg_preload_length = kd.kernarg_preload & 0x7f;
  return d;
}

llvm::msgpack::DocNode *find(llvm::msgpack::MapDocNode &map, const char *key) {
  for (auto &[k, v] : map)
    if (k.isString() && k.getString() == key) return &v;
  return nullptr;
}

uint64_t uint_of(const llvm::msgpack::DocNode *n) {
  if (!n) return 0;
  if (n->getKind() == llvm::msgpack::Type::UInt) return n->getUInt();
  if (n->getKind() == llvm::msgpack::Type::Int) return uint64_t(n->getInt());
  return 0;
}

std::string string_of(const llvm::msgpack::DocNode *n) {
  return n && n->isString() ? n->getString().str() : std::string();
}

// The kernels' argument lists and sizes from the NT_AMDGPU_METADATA note
// (AMDGPUUsage, "Code Object V5 Metadata").
Status read_metadata(llvm::StringRef blob, CodeObject &co, std::map<std::string, KernelInfo> &out) {
  llvm::msgpack::Document doc;
  if (!doc.readFromBlob(blob, false)) return corrupt("code object: its AMDGPU metadata note does not parse");
  if (!doc.getRoot().isMap()) return corrupt("code object: its AMDGPU metadata is not a map");
  auto &root = doc.getRoot().getMap();
  auto *kernels = find(root, "amdhsa.kernels");
  if (!kernels || !kernels->isArray()) return corrupt("code object: metadata has no amdhsa.kernels");
  for (auto &k : kernels->getArray()) {
    if (!k.isMap()) continue;
    auto &km = k.getMap();
    KernelInfo info;
    info.name = string_of(find(km, ".name"));
    info.kernarg_bytes = uint32_t(uint_of(find(km, ".kernarg_segment_size")));
    info.group_segment_bytes = uint32_t(uint_of(find(km, ".group_segment_fixed_size")));
    info.private_segment_bytes = uint32_t(uint_of(find(km, ".private_segment_fixed_size")));
    info.sgprs = uint32_t(uint_of(find(km, ".sgpr_count")));
    info.vgprs = uint32_t(uint_of(find(km, ".vgpr_count")));
    info.agprs = uint32_t(uint_of(find(km, ".agpr_count")));
    info.max_workgroup_size = uint32_t(uint_of(find(km, ".max_flat_workgroup_size")));
    if (uint_of(find(km, ".wavefront_size")) != 64)
      return unsupported("kernel " + info.name + ": wavefront_size is not 64 (the emulator runs wave64 only)");
    if (auto *args = find(km, ".args"); args && args->isArray()) {
      for (auto &a : args->getArray()) {
        if (!a.isMap()) continue;
        KernelInfo::Arg arg;
        arg.offset = uint32_t(uint_of(find(a.getMap(), ".offset")));
        arg.size = uint32_t(uint_of(find(a.getMap(), ".size")));
        arg.kind = string_of(find(a.getMap(), ".value_kind"));
        if (arg.kind.rfind("hidden_", 0) != 0) ++info.explicit_args;
        info.args.push_back(arg);
      }
    }
    out[info.name] = info;
  }
  (void)co;
  return Status::Ok();
}

}  // namespace

StatusOr<CodeObject> parse_code_object(std::span<const uint8_t> bytes) {
  CodeObject co;
  co.file.assign(bytes.begin(), bytes.end());
  llvm::StringRef data(reinterpret_cast<const char *>(co.file.data()), co.file.size());
  auto file = Elf::Ehdr{};
  (void)file;
  auto elf = llvm::object::ELFFile<Elf>::create(data);
  if (!elf) return corrupt("code object is not a 64-bit ELF: " + err_text(elf));
  const auto &hdr = elf->getHeader();
  if (hdr.e_machine != llvm::ELF::EM_AMDGPU) return corrupt("code object is not an AMDGPU ELF (e_machine)");
  const unsigned mach = hdr.e_flags & llvm::ELF::EF_AMDGPU_MACH;
  if (mach == llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX950) co.target = Target::kGfx950;
  else if (mach == llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX942) co.target = Target::kGfx942;
  else
    return unsupported("code object is for AMDGPU machine 0x" + llvm::utohexstr(mach) +
                       "; the emulator runs gfx950 and gfx942");

  auto phdrs = elf->program_headers();
  if (!phdrs) return corrupt("code object: program headers: " + err_text(phdrs));
  for (const auto &ph : *phdrs) {
    if (ph.p_type != llvm::ELF::PT_LOAD) continue;
    if (ph.p_offset + ph.p_filesz > co.file.size()) return corrupt("code object: a segment lies past the file's end");
    co.segments.push_back({ph.p_vaddr, ph.p_offset, ph.p_filesz, ph.p_memsz});
    co.image_bytes = std::max<uint64_t>(co.image_bytes, ph.p_vaddr + ph.p_memsz);
  }
  if (co.segments.empty()) return corrupt("code object has no loadable segment");

  auto sections = elf->sections();
  if (!sections) return corrupt("code object: sections: " + err_text(sections));
  std::map<std::string, KernelInfo> infos;
  std::map<std::string, uint64_t> symbols;  // name -> value (image offset)
  for (const auto &sec : *sections) {
    auto name = elf->getSectionName(sec);
    if (!name) return corrupt("code object: section name: " + err_text(name));
    if (*name == ".text") {
      co.text_vaddr = sec.sh_addr;
      co.text_bytes = sec.sh_size;
    }
    if (sec.sh_type == llvm::ELF::SHT_NOTE) {
      llvm::Error e = llvm::Error::success();
      for (auto note : elf->notes(sec, e)) {
        if (note.getName() == "AMDGPU" && note.getType() == llvm::ELF::NT_AMDGPU_METADATA) {
          auto desc = note.getDesc(sec.sh_addralign ? sec.sh_addralign : 4);
          llvm::StringRef blob(reinterpret_cast<const char *>(desc.data()), desc.size());
          GATEJIT_RETURN_IF_ERROR(read_metadata(blob, co, infos));
        }
      }
      if (e) return corrupt("code object: notes: " + llvm::toString(std::move(e)));
    }
    if (sec.sh_type == llvm::ELF::SHT_SYMTAB || sec.sh_type == llvm::ELF::SHT_DYNSYM) {
      auto syms = elf->symbols(&sec);
      if (!syms) continue;
      auto strtab = elf->getStringTableForSymtab(sec);
      if (!strtab) continue;
      for (const auto &s : *syms) {
        auto n = s.getName(*strtab);
        if (n && !n->empty()) symbols[n->str()] = s.st_value;
      }
    }
    if (sec.sh_type == llvm::ELF::SHT_RELA) {
      auto relas = elf->relas(sec);
      if (!relas) return corrupt("code object: relocations: " + err_text(relas));
      auto symtab = elf->getSection(sec.sh_link);
      for (const auto &r : *relas) {
        const uint32_t type = r.getType(false);
        if (type == llvm::ELF::R_AMDGPU_RELATIVE64) {
          co.relocations.push_back({r.r_offset, uint64_t(r.r_addend)});
        } else if (type == llvm::ELF::R_AMDGPU_ABS64 && symtab) {
          auto sym = elf->getRelocationSymbol(r, *symtab);
          if (!sym || !*sym || (*sym)->st_shndx == llvm::ELF::SHN_UNDEF)
            return unsupported("code object: an ABS64 relocation against an undefined symbol");
          co.relocations.push_back({r.r_offset, (*sym)->st_value + uint64_t(r.r_addend)});
        } else if (type != llvm::ELF::R_AMDGPU_NONE) {
          return unsupported("code object: dynamic relocation type " + std::to_string(type) +
                             " (the emulator applies RELATIVE64 and ABS64)");
        }
      }
    }
  }
  if (co.text_bytes == 0) return corrupt("code object has no .text");
  for (auto &[name, info] : infos) {
    auto kd_sym = symbols.find(name + ".kd");
    if (kd_sym == symbols.end()) return corrupt("code object: kernel " + name + " has no descriptor symbol " + name + ".kd");
    const uint64_t kd_at = kd_sym->second;
    // The descriptor's bytes, found through the segment that maps it.
    const uint8_t *kd_bytes = nullptr;
    for (const auto &s : co.segments)
      if (kd_at >= s.vaddr && kd_at + 64 <= s.vaddr + s.file_bytes) kd_bytes = co.file.data() + s.file_offset + (kd_at - s.vaddr);
    if (!kd_bytes) return corrupt("code object: kernel descriptor of " + name + " lies outside the file's segments");
    llvm::amdhsa::kernel_descriptor_t raw;
    std::memcpy(&raw, kd_bytes, sizeof raw);
    CodeObjectKernel k;
    k.info = info;
    k.kd = decode_descriptor(raw, kd_at);
    if (k.kd.entry_offset < co.text_vaddr || k.kd.entry_offset >= co.text_vaddr + co.text_bytes)
      return corrupt("code object: the entry point of " + name + " lies outside .text");
    if (k.kd.float_round_32 != 0 || k.kd.float_round_16_64 != 0)
      return unsupported("kernel " + name + ": float_round_mode is not round-to-nearest-even (the emulator runs RNE only)");
    if (k.kd.private_segment_buffer)
      return unsupported("kernel " + name + ": enable_sgpr_private_segment_buffer is set (not on gfx942/gfx950)");
    co.kernels[name] = k;
  }
  if (co.kernels.empty()) return corrupt("code object declares no kernel in its metadata");
  return co;
}

}  // namespace gatejit::emulator
