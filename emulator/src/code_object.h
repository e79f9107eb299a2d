// A gfx9 code object (HSA code object v5 ELF) as the emulator needs it: the
// loadable image, the text to decode, and per kernel its descriptor and its
// argument layout from the AMDGPU metadata note.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "gatejit/contract.h"
#include "gatejit/emulator/emulator.h"
#include "gatejit/status.h"

namespace gatejit::emulator {

// The kernel descriptor's fields (LLVM AMDGPUUsage, "Kernel Descriptor";
// llvm/Support/AMDHSAKernelDescriptor.h), decoded.
struct KernelDescriptor {
  uint32_t group_segment_bytes = 0;
  uint32_t private_segment_bytes = 0;
  uint32_t kernarg_bytes = 0;
  uint64_t entry_offset = 0;  // of the entry point within the image
  uint32_t vgprs = 0;         // unified VGPR + AGPR file per lane
  uint32_t accum_offset = 0;  // first AGPR in the unified file (GFX90A+)
  uint32_t user_sgprs = 0;
  bool private_segment_buffer = false, dispatch_ptr = false, queue_ptr = false, kernarg_ptr = false;
  bool dispatch_id = false, flat_scratch_init = false, private_segment_size = false;
  uint32_t kernarg_preload_length = 0;
  bool workgroup_id[3] = {false, false, false};
  bool workgroup_info = false;
  bool private_segment_wave_offset = false;  // COMPUTE_PGM_RSRC2.ENABLE_PRIVATE_SEGMENT
  uint32_t workitem_id_dims = 1;             // VGPR workitem IDs: 1 (x), 2 (x, y), 3
  uint32_t float_round_32 = 0, float_round_16_64 = 0;
  uint32_t float_denorm_32 = 3, float_denorm_16_64 = 3;
  bool dx10_clamp = true, ieee_mode = true;
};

struct CodeObjectKernel {
  KernelInfo info;
  KernelDescriptor kd;
};

struct CodeObject {
  Target target = Target::kGfx950;
  std::vector<uint8_t> file;       // the ELF as given
  uint64_t image_bytes = 0;        // extent of the PT_LOAD segments
  struct Segment {
    uint64_t vaddr, file_offset, file_bytes, mem_bytes;
  };
  std::vector<Segment> segments;
  uint64_t text_vaddr = 0, text_bytes = 0;
  // Dynamic relocations to apply at the load address (R_AMDGPU_RELATIVE64 /
  // ABS64 resolved to image offsets here).
  struct Relocation {
    uint64_t offset;
    uint64_t addend;  // image offset the 64-bit slot must point at
  };
  std::vector<Relocation> relocations;
  std::map<std::string, CodeObjectKernel> kernels;
};

// Parses and checks a code object for `expected` (gfx950 or gfx942).
StatusOr<CodeObject> parse_code_object(std::span<const uint8_t> bytes);

}  // namespace gatejit::emulator
