#include "code_object_validate.h"

#include <set>
#include <string>
#include <string_view>

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/TargetParser/TargetParser.h"

namespace gatejit::compiler {
namespace {

// Little-endian fields at checked offsets.
uint64_t le(std::span<const uint8_t> b, size_t off, size_t width) {
  uint64_t v = 0;
  for (size_t i = 0; i < width; ++i) v |= uint64_t(b[off + i]) << (8 * i);
  return v;
}

// [off, off + size) inside [0, limit), without overflow.
bool in_file(uint64_t off, uint64_t size, uint64_t limit) { return off <= limit && size <= limit - off; }

// ---------------------------------------------------------------- msgpack

// A bounded recursive-descent reader over the msgpack subset that kernel
// metadata uses: nil, bool, integers, floats, strings, binary, arrays and
// string-keyed maps. Depth is bounded, so the recursion is too; every count
// is checked against the bytes left before anything is read.
class MsgpackChecker {
 public:
  explicit MsgpackChecker(std::span<const uint8_t> b) : b_(b) {}

  // One whole document: exactly one value spanning every byte.
  Status check_document() {
    Status s = value(0, nullptr);
    if (!s.ok()) return s;
    if (pos_ != b_.size())
      return corrupt("AMDGPU metadata: " + std::to_string(b_.size() - pos_) + " bytes after the msgpack document");
    return Status::Ok();
  }
  const std::string &target() const { return target_; }

 private:
  Status error(const std::string &what) const {
    return corrupt("AMDGPU metadata: " + what + " at byte " + std::to_string(pos_));
  }
  bool take(size_t n, uint64_t &v) {
    if (n > b_.size() - pos_) return false;
    v = 0;
    for (size_t i = 0; i < n; ++i) v = (v << 8) | b_[pos_ + i];  // msgpack is big-endian
    pos_ += n;
    return true;
  }
  // A string of `n` bytes: printable ASCII only (they end up on terminals).
  Status string(uint64_t n, std::string *out) {
    if (n > b_.size() - pos_) return error("string runs past the end");
    for (uint64_t i = 0; i < n; ++i)
      if (b_[pos_ + i] < 0x20 || b_[pos_ + i] > 0x7e) return error("string with a non-printable byte");
    if (out) out->assign(reinterpret_cast<const char *>(b_.data() + pos_), size_t(n));
    pos_ += size_t(n);
    return Status::Ok();
  }
  // str_out: the value must be a string (a map key), copied there.
  Status value(int depth, std::string *str_out) {
    if (depth > kMaxMsgpackDepth) return error("nested deeper than " + std::to_string(kMaxMsgpackDepth) + " levels");
    uint64_t tag = 0, n = 0;
    if (!take(1, tag)) return error("truncated");
    const auto len = [&](size_t width) { return take(width, n); };
    if (str_out && !((tag >= 0xa0 && tag <= 0xbf) || (tag >= 0xd9 && tag <= 0xdb)))
      return error("map key is not a string");
    if (tag <= 0x7f || tag >= 0xe0) return Status::Ok();  // fixint
    if (tag >= 0xa0 && tag <= 0xbf) return string(tag & 0x1f, str_out);
    if (tag >= 0x90 && tag <= 0x9f) return array(tag & 0x0f, depth);
    if (tag >= 0x80 && tag <= 0x8f) return map(tag & 0x0f, depth);
    switch (tag) {
      case 0xc0: case 0xc2: case 0xc3: return Status::Ok();  // nil, false, true
      case 0xcc: case 0xd0: return len(1) ? Status::Ok() : error("truncated integer");
      case 0xcd: case 0xd1: return len(2) ? Status::Ok() : error("truncated integer");
      case 0xce: case 0xd2: case 0xca: return len(4) ? Status::Ok() : error("truncated number");
      case 0xcf: case 0xd3: case 0xcb: return len(8) ? Status::Ok() : error("truncated number");
      case 0xd9: return len(1) ? string(n, str_out) : error("truncated string length");
      case 0xda: return len(2) ? string(n, str_out) : error("truncated string length");
      case 0xdb: return len(4) ? string(n, str_out) : error("truncated string length");
      case 0xc4: case 0xc5: case 0xc6: {
        if (!len(tag == 0xc4 ? 1 : tag == 0xc5 ? 2 : 4)) return error("truncated binary length");
        if (n > b_.size() - pos_) return error("binary runs past the end");
        pos_ += size_t(n);
        return Status::Ok();
      }
      case 0xdc: return len(2) ? array(n, depth) : error("truncated array length");
      case 0xdd: return len(4) ? array(n, depth) : error("truncated array length");
      case 0xde: return len(2) ? map(n, depth) : error("truncated map length");
      case 0xdf: return len(4) ? map(n, depth) : error("truncated map length");
    }
    return error("msgpack type byte " + std::to_string(tag) + " is not used by kernel metadata");
  }
  Status array(uint64_t n, int depth) {
    // Each element takes at least one byte: a count past the bytes left is a lie.
    if (n > b_.size() - pos_) return error("array of " + std::to_string(n) + " elements runs past the end");
    for (uint64_t i = 0; i < n; ++i) {
      Status s = value(depth + 1, nullptr);
      if (!s.ok()) return s;
    }
    return Status::Ok();
  }
  Status map(uint64_t n, int depth) {
    if (n > (b_.size() - pos_) / 2) return error("map of " + std::to_string(n) + " entries runs past the end");
    std::set<std::string> keys;
    for (uint64_t i = 0; i < n; ++i) {
      std::string key;
      Status s = value(depth + 1, &key);
      if (!s.ok()) return s;
      if (!keys.insert(key).second) return error("map key '" + key + "' appears twice");
      // The processor named by the top-level amdhsa.target, checked below.
      if (depth == 0 && key == "amdhsa.target") {
        if (pos_ >= b_.size() || !((b_[pos_] >= 0xa0 && b_[pos_] <= 0xbf) || (b_[pos_] >= 0xd9 && b_[pos_] <= 0xdb)))
          return error("amdhsa.target is not a string");
        s = value(depth + 1, &target_);
      } else {
        s = value(depth + 1, nullptr);
      }
      if (!s.ok()) return s;
    }
    return Status::Ok();
  }

  std::span<const uint8_t> b_;
  size_t pos_ = 0;
  std::string target_;
};

// The processor of a target id "amdgcn-amd-amdhsa--gfx950:xnack-" must be
// one the AMDGPU disassembler supports (GCN3 encoding and later, gfx8 on);
// for another it aborts the process.
Status check_target(const std::string &target_id) {
  if (target_id.empty()) return corrupt("AMDGPU metadata: no amdhsa.target");
  std::string cpu = target_id.substr(target_id.rfind('-') + 1);
  cpu = cpu.substr(0, cpu.find(':'));
  if (llvm::AMDGPU::parseArchAMDGCN(cpu) == llvm::AMDGPU::GK_NONE || llvm::AMDGPU::getIsaVersion(cpu).Major < 8)
    return corrupt("AMDGPU metadata: amdhsa.target '" + target_id + "' does not name an AMDGPU processor of gfx8 or later");
  return Status::Ok();
}

// ---------------------------------------------------------------- ELF

Status check_notes(std::span<const uint8_t> seg, uint64_t align, bool &found_metadata) {
  size_t pos = 0;
  const auto pad = [&](uint64_t n) { return (n + align - 1) / align * align; };
  while (pos < seg.size()) {
    if (seg.size() - pos < 12) return corrupt("ELF note header runs past its segment");
    const uint64_t namesz = le(seg, pos, 4), descsz = le(seg, pos + 4, 4), type = le(seg, pos + 8, 4);
    pos += 12;
    if (pad(namesz) > seg.size() - pos) return corrupt("ELF note name runs past its segment");
    const std::string_view name(reinterpret_cast<const char *>(seg.data() + pos), size_t(namesz));
    pos += size_t(pad(namesz));
    if (pad(descsz) > seg.size() - pos) return corrupt("ELF note description runs past its segment");
    const std::span<const uint8_t> desc = seg.subspan(pos, size_t(descsz));
    pos += size_t(pad(descsz));
    if (name != std::string_view("AMDGPU\0", 7) || type != llvm::ELF::NT_AMDGPU_METADATA) continue;
    if (found_metadata) return corrupt("more than one AMDGPU metadata note");
    found_metadata = true;
    MsgpackChecker checker(desc);
    Status s = checker.check_document();
    if (!s.ok()) return s;
    s = check_target(checker.target());
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace

Status validate_code_object(std::span<const uint8_t> b) {
  using namespace llvm::ELF;
  const uint64_t size = b.size();
  if (size < sizeof(Elf64_Ehdr) || b[EI_MAG0] != 0x7f || b[EI_MAG1] != 'E' || b[EI_MAG2] != 'L' || b[EI_MAG3] != 'F')
    return corrupt("not an ELF file, or shorter than an ELF header");
  if (b[EI_CLASS] != ELFCLASS64 || b[EI_DATA] != ELFDATA2LSB)
    return corrupt("not a 64-bit little-endian ELF file");
  if (le(b, 18, 2) != EM_AMDGPU) return corrupt("ELF machine " + std::to_string(le(b, 18, 2)) + " is not AMDGPU");
  const uint64_t phoff = le(b, 32, 8), shoff = le(b, 40, 8);
  const uint64_t phentsize = le(b, 54, 2), phnum = le(b, 56, 2);
  const uint64_t shentsize = le(b, 58, 2), shnum = le(b, 60, 2), shstrndx = le(b, 62, 2);

  if (phnum == 0) return corrupt("ELF file has no program headers");
  if (phentsize != sizeof(Elf64_Phdr) || !in_file(phoff, phnum * phentsize, size))
    return corrupt("ELF program header table lies outside the file or has the wrong entry size");
  if (shnum == 0 && shoff != 0) return corrupt("ELF extended section numbering is not supported");
  if (shnum && (shentsize != sizeof(Elf64_Shdr) || !in_file(shoff, shnum * shentsize, size)))
    return corrupt("ELF section header table lies outside the file or has the wrong entry size");
  if (shnum && shstrndx >= shnum) return corrupt("ELF section name table index is out of range");

  for (uint64_t i = 0; i < shnum; ++i) {
    const size_t sh = size_t(shoff + i * shentsize);
    const uint64_t type = le(b, sh + 4, 4), off = le(b, sh + 24, 8), sz = le(b, sh + 32, 8);
    const uint64_t link = le(b, sh + 40, 4), align = le(b, sh + 48, 8), entsize = le(b, sh + 56, 8);
    const std::string which = "ELF section " + std::to_string(i);
    if (type != SHT_NOBITS && type != SHT_NULL && !in_file(off, sz, size)) return corrupt(which + " lies outside the file");
    if (align & (align - 1)) return corrupt(which + " alignment is not a power of two");
    if (link >= std::max<uint64_t>(shnum, 1) && type != SHT_NULL) return corrupt(which + " links to a missing section");
    if ((type == SHT_SYMTAB || type == SHT_DYNSYM) && (entsize != sizeof(Elf64_Sym) || sz % sizeof(Elf64_Sym)))
      return corrupt(which + ": symbol table with a wrong entry size");
    if ((type == SHT_RELA && entsize != sizeof(Elf64_Rela)) || (type == SHT_REL && entsize != sizeof(Elf64_Rel)))
      return corrupt(which + ": relocation table with a wrong entry size");
  }
  if (shnum) {  // section names resolve inside the name table
    const size_t strtab = size_t(shoff + shstrndx * shentsize);
    const uint64_t str_size = le(b, strtab + 32, 8);
    for (uint64_t i = 0; i < shnum; ++i)
      if (le(b, size_t(shoff + i * shentsize), 4) >= std::max<uint64_t>(str_size, 1))
        return corrupt("ELF section " + std::to_string(i) + " name lies outside the section name table");
  }

  bool found_metadata = false;
  for (uint64_t i = 0; i < phnum; ++i) {
    const size_t ph = size_t(phoff + i * phentsize);
    const uint64_t type = le(b, ph, 4), off = le(b, ph + 8, 8), filesz = le(b, ph + 32, 8), align = le(b, ph + 48, 8);
    const std::string which = "ELF program header " + std::to_string(i);
    if (!in_file(off, filesz, size)) return corrupt(which + " lies outside the file");
    if (type != PT_NOTE) continue;
    if (align != 0 && align != 4 && align != 8) return corrupt(which + ": note alignment " + std::to_string(align) + " is not 4 or 8");
    Status s = check_notes(b.subspan(size_t(off), size_t(filesz)), align ? align : 4, found_metadata);
    if (!s.ok()) return s;
  }
  if (!found_metadata) return corrupt("code object has no AMDGPU metadata note");
  return Status::Ok();
}

Status validate_ptx_text(std::span<const uint8_t> b) {
  size_t line_start = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    const uint8_t c = b[i];
    if (c == '\n') {
      line_start = i + 1;
      continue;
    }
    if ((c < 0x20 && c != '\t' && c != '\r') || c > 0x7e)
      return corrupt("not PTX text: byte " + std::to_string(i) + " is " + std::to_string(c) +
                     ", not printable ASCII");
    if (i - line_start >= kMaxPtxLineBytes)
      return corrupt("PTX line starting at byte " + std::to_string(line_start) + " is longer than " +
                     std::to_string(kMaxPtxLineBytes) + " bytes");
  }
  return Status::Ok();
}

}  // namespace gatejit::compiler
