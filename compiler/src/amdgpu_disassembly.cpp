#include "amdgpu_disassembly.h"

#include <mutex>

#include "llvm/MC/MCAsmInfo.h"
#include "llvm/MC/MCContext.h"
#include "llvm/MC/MCDisassembler/MCDisassembler.h"
#include "llvm/MC/MCInst.h"
#include "llvm/MC/MCInstPrinter.h"
#include "llvm/MC/MCInstrAnalysis.h"
#include "llvm/MC/MCInstrInfo.h"
#include "llvm/MC/MCRegisterInfo.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/MCTargetOptions.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

namespace gatejit::compiler {
namespace {

void init_amdgpu_mc_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUDisassembler();
  });
}

}  // namespace

StatusOr<std::vector<DecodedWord>> decode_amdgpu(llvm::ArrayRef<uint8_t> bytes, uint64_t address,
                                                 const std::string &cpu) {
  init_amdgpu_mc_once();
  const llvm::Triple triple("amdgcn-amd-amdhsa");
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) return internal_error("no AMDGPU MC target: " + error);
  std::unique_ptr<llvm::MCRegisterInfo> mri(target->createMCRegInfo(triple));
  llvm::MCTargetOptions mc_options;
  std::unique_ptr<llvm::MCAsmInfo> mai(target->createMCAsmInfo(*mri, triple, mc_options));
  std::unique_ptr<llvm::MCSubtargetInfo> sti(target->createMCSubtargetInfo(triple, cpu, ""));
  std::unique_ptr<llvm::MCInstrInfo> mii(target->createMCInstrInfo());
  if (!mri || !mai || !sti || !mii) return internal_error("cannot set up the AMDGPU disassembler for " + cpu);
  llvm::MCContext ctx(triple, mai.get(), mri.get(), sti.get());
  std::unique_ptr<llvm::MCDisassembler> dis(target->createMCDisassembler(*sti, ctx));
  std::unique_ptr<llvm::MCInstPrinter> printer(
      target->createMCInstPrinter(triple, mai->getAssemblerDialect(), *mai, *mii, *mri));
  std::unique_ptr<llvm::MCInstrAnalysis> analysis(target->createMCInstrAnalysis(mii.get()));
  if (!dis || !printer || !analysis) return internal_error("cannot create the AMDGPU disassembler for " + cpu);

  std::vector<DecodedWord> out;
  uint64_t offset = 0;
  while (offset < bytes.size()) {
    DecodedWord w;
    w.address = address + offset;
    llvm::MCInst inst;
    uint64_t size = 0;
    auto status = dis->getInstruction(inst, size, bytes.slice(offset), w.address, llvm::nulls());
    if (status != llvm::MCDisassembler::Success || size == 0) {
      w.size = 4;  // not an instruction (data or padding)
      out.push_back(std::move(w));
      offset += 4;
      continue;
    }
    std::string text;
    llvm::raw_string_ostream os(text);
    printer->printInst(&inst, w.address, "", *sti, os);
    os.flush();
    const size_t b = text.find_first_not_of(" \t");
    w.text = b == std::string::npos ? text : text.substr(b);
    uint64_t branch_target = 0;
    if (analysis->isBranch(inst) && analysis->evaluateBranch(inst, w.address, size, branch_target))
      w.branch_target = int64_t(branch_target);
    w.size = uint32_t(size);
    w.decoded = true;
    out.push_back(std::move(w));
    offset += size;
  }
  return out;
}

StatusOr<Disassembly> disassemble_amdgpu(const llvm::object::ObjectFile &obj, const std::string &cpu) {
  Disassembly out;
  for (const llvm::object::SectionRef &section : obj.sections()) {
    if (!section.isText()) continue;
    llvm::Expected<llvm::StringRef> contents = section.getContents();
    if (!contents) {
      llvm::consumeError(contents.takeError());
      continue;
    }
    llvm::ArrayRef<uint8_t> bytes(reinterpret_cast<const uint8_t *>(contents->data()), contents->size());
    auto words = decode_amdgpu(bytes, section.getAddress(), cpu);
    if (!words.ok()) return words.status();
    for (DecodedWord &w : *words) {
      if (!w.decoded) {
        ++out.undecodable_words;
        continue;
      }
      DisassembledInstruction d;
      d.address = w.address;
      d.branch_target = w.branch_target;
      const size_t e = w.text.find_first_of(" \t");
      d.mnemonic = w.text.substr(0, e);
      if (e != std::string::npos) {
        const size_t o = w.text.find_first_not_of(" \t", e);
        if (o != std::string::npos) d.operands = w.text.substr(o);
      }
      out.instructions.push_back(std::move(d));
    }
  }
  return out;
}

}  // namespace gatejit::compiler
