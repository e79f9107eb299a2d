// One launch in flight: its workgroups and waves, the program, memory, and
// the checks' bookkeeping (outstanding memory results per wave, the LDS
// shadow for the race check).
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <utility>
#include <string>
#include <vector>

#include "code_object.h"
#include "gatejit/emulator/emulator.h"
#include "machine.h"
#include "memory.h"
#include "op_table.h"
#include "program.h"

namespace gatejit::emulator {

// Who last wrote and read one 4-byte LDS word, and in which barrier epoch
// (waves as launch index + 1; 0 none). An LDS DMA's write (dma_seq != 0)
// stays pending until the writing wave's vmcnt retires that sequence number.
struct LdsWordShadow {
  uint32_t write_wave, write_epoch;
  uint32_t read_wave, read_epoch;
  uint32_t dma_seq;
  uint16_t write_inst, read_inst;
};
inline constexpr uint32_t kManyWaves = 0xffffffffu;

// Zeroed memory from the kernel, in huge pages where it is large: a launch
// has many waves' registers and workgroups' LDS, and only what is touched
// costs anything.
class ZeroedPages {
 public:
  ZeroedPages() = default;
  explicit ZeroedPages(size_t bytes);
  ZeroedPages(ZeroedPages &&o) noexcept : p_(o.p_), n_(o.n_) { o.p_ = nullptr, o.n_ = 0; }
  ZeroedPages &operator=(ZeroedPages &&o) noexcept {
    std::swap(p_, o.p_), std::swap(n_, o.n_);
    return *this;
  }
  ~ZeroedPages();
  template <class T = uint8_t>
  T *data() const { return static_cast<T *>(p_); }
  size_t size() const { return n_; }

 private:
  void *p_ = nullptr;
  size_t n_ = 0;
};

struct Workgroup {
  std::array<uint32_t, 3> id{};
  uint32_t linear = 0;
  int xcd = 0;
  uint8_t *lds = nullptr;
  uint32_t lds_bytes = 0;
  LdsWordShadow *lds_shadow = nullptr;  // null unless a check needs it
  uint32_t waves = 0, waves_done = 0, waves_at_barrier = 0;
  uint32_t first_wave = 0;  // index of its wave 0 in the launch
  uint32_t epoch = 1;       // barrier generation
};

// The outstanding memory results of one wave (CDNA3 ISA, "Data Dependency
// Resolution": vmcnt and lgkmcnt). Vector memory results return in issue
// order; LDS results in order among themselves; scalar memory results in
// any order, so only lgkmcnt(0) retires one for sure.
struct WaitTracker {
  struct Pending {
    uint64_t seq = 0;     // 0: nothing pending
    uint32_t inst = 0;    // the instruction that writes it
    uint8_t counter = 0;  // 1 vm, 2 lds, 3 smem
  };
  std::vector<Pending> vregs;  // per unified register
  Pending sregs[kSgprFile];
  std::deque<uint64_t> vm, lgkm;      // seqs of outstanding operations, in issue order
  std::deque<bool> lgkm_is_smem;
  uint64_t next_seq = 1;
  uint64_t retired_vm = 0, retired_lds = 0;
  std::vector<uint64_t> smem_outstanding;
  uint32_t outstanding = 0;  // vm.size() + lgkm.size()
  bool smem_retired(uint64_t seq) const;
};

struct Launch {
  const Program *program = nullptr;
  const CodeObjectKernel *kernel = nullptr;
  Target target = Target::kGfx950;
  GlobalMemory *memory = nullptr;
  XcdCaches *xcd = nullptr;  // cross-XCD mode
  RunOptions options;
  LaunchGrid grid;
  uint64_t kernarg_address = 0, dispatch_packet_address = 0;
  uint32_t lds_bytes = 0;
  std::vector<Workgroup> workgroups;
  std::vector<Wave> waves;
  std::vector<WaitTracker> trackers;
  ZeroedPages register_file, scratch, lds, lds_shadow;  // every wave's and workgroup's, in one piece each
  std::vector<uint64_t> mnemonic_counts;
  Wave *current = nullptr;
  const Inst *current_inst = nullptr;
  // Counts every write any wave makes (memory, LDS, atomics) and every
  // barrier release and wave end: a wave whose loop repeats its state with
  // this unchanged, while every other wave does the same, loops forever.
  uint64_t write_epoch = 0;
};

// ---- memory access for the handlers ----

// The host bytes of a global access, or an error naming the address.
uint8_t *global_bytes(Wave &w, uint64_t addr, uint32_t bytes);
void global_load(Wave &w, uint64_t addr, void *dst, uint32_t bytes, AccessScope scope);
void global_store(Wave &w, uint64_t addr, const void *src, uint32_t bytes, AccessScope scope);
// Cross-XCD mode: who is storing (for the stale-read report), and the report.
Writer writer_of(const Wave &w);
void check_stale(Wave &w, const StaleRead &s);

// LDS: the bytes of [addr, addr + bytes) of the wave's workgroup, checked
// against its size, and (race check) recorded as read or written.
uint8_t *lds_read(Wave &w, const Inst &in, uint32_t addr, uint32_t bytes);
uint8_t *lds_write(Wave &w, const Inst &in, uint32_t addr, uint32_t bytes);
uint8_t *lds_atomic(Wave &w, const Inst &in, uint32_t addr, uint32_t bytes);
// An LDS DMA write (global_load_lds_*), pending until `seq` retires.
uint8_t *lds_dma_write(Wave &w, const Inst &in, uint32_t addr, uint32_t bytes, uint64_t seq);

// ---- the wait check ----

// Called by a memory handler as it issues: the counter it is counted by and
// the registers its result lands in (none for stores). Returns the op's seq.
uint64_t issue_memory(Wave &w, const Inst &in, Counter counter, bool smem, const Operand *dst, uint32_t dst_regs);
// An LDS DMA load (global_load_lds_*, buffer_load ... lds): counted by vmcnt,
// which retires its LDS bytes, and also by lgkmcnt as an in-order LDS access,
// as LLVM's waitcnt insertion counts it (FLATInstructions.td: the LDS DMA
// pseudos set LGKM_CNT; the ISA's FLAT chapter lists global instructions
// under VM_CNT only, docs/emulator.md). Returns the vm seq.
uint64_t issue_lds_dma(Wave &w, const Inst &in);
// s_waitcnt.
void wait_counts(Wave &w, uint32_t vmcnt, uint32_t lgkmcnt);

// ---- control ----
// A taken branch back to `target` (the spin detection's hook).
void branch_back(Wave &w, const Inst &branch);
inline void note_write(Wave &w) { ++w.launch->write_epoch; }
void barrier_arrive(Wave &w);
void end_wave(Wave &w);

std::string wave_name(const Wave &w);

// Runs every wave to its end (or the first error).
Status run_launch(Launch &l, RunStats *stats);

}  // namespace gatejit::emulator
