// Running a launch: the waves' initial state as the HSA dispatch sets it up
// (LLVM AMDGPUUsage, "Initial Kernel Execution State"), the scheduler that
// interleaves every resident wave, the barrier, and the checks' bookkeeping.
#include "launch.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdio>
#include <random>

#include "op_table.h"
#include "valu.h"

namespace gatejit::emulator {

void fail(const std::string &message) { throw EmuError(message); }

ZeroedPages::ZeroedPages(size_t bytes) : n_(bytes) {
  if (!bytes) return;
  p_ = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p_ == MAP_FAILED) {
    p_ = nullptr, n_ = 0;
    throw std::bad_alloc();
  }
  if (bytes >= (size_t(2) << 20)) madvise(p_, bytes, MADV_HUGEPAGE);
}

ZeroedPages::~ZeroedPages() {
  if (p_) munmap(p_, n_);
}

std::string operand_text(const Operand &o) {
  const char *prefix = o.kind == OpKind::kVgpr ? "v" : o.kind == OpKind::kAgpr ? "a" : "s";
  if (o.count == 1) return prefix + std::to_string(o.reg);
  return std::string(prefix) + "[" + std::to_string(o.reg) + ":" + std::to_string(o.reg + o.count - 1) + "]";
}

std::string wave_name(const Wave &w) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "wave %u of workgroup (%u, %u, %u)", w.id_in_group, w.wg->id[0], w.wg->id[1],
                w.wg->id[2]);
  return buf;
}

static std::string inst_where(const Launch &l, uint32_t index) {
  const Inst &in = l.program->insts[index];
  char buf[48];
  std::snprintf(buf, sizeof buf, "PC 0x%llx: ", (unsigned long long)in.address);
  return buf + l.program->texts[in.text_id];
}

// ---- memory ----

uint8_t *global_bytes(Wave &w, uint64_t addr, uint32_t bytes) {
  uint8_t *p = w.launch->memory->find(addr, bytes);
  if (!p) fail("global memory access out of bounds: " + w.launch->memory->describe_miss(addr, bytes));
  return p;
}

Writer writer_of(const Wave &w) {
  const Launch &l = *w.launch;
  return Writer{w.id + 1, l.current_inst ? l.current_inst->index : 0, w.wg->xcd};
}

void check_stale(Wave &w, const StaleRead &s) {
  if (!s.found) return;
  const Launch &l = *w.launch;
  char addr[64];
  std::snprintf(addr, sizeof addr, "0x%llx", (unsigned long long)s.addr);
  std::string writer = "another XCD";
  if (s.writer.wave) {
    const Wave &other = l.waves[s.writer.wave - 1];
    writer = wave_name(other) + " on XCD " + std::to_string(other.wg->xcd) + " (" + inst_where(l, s.writer.inst) + ")";
  }
  const std::string me = wave_name(w) + " on XCD " + std::to_string(w.wg->xcd);
  if (s.unreleased)
    fail("cross-XCD stale read: " + me + " reads byte " + addr + " that " + writer +
         " stored and has not released to memory (no buffer_wbl2 sc1 or sc1 store since), so this XCD cannot see it");
  fail("cross-XCD stale read: " + me + " reads byte " + addr + " from an old copy in its L2: " + writer +
       " has since released a newer value, and no acquire (buffer_inv sc1) or sc1 load fetched it");
}

void global_load(Wave &w, uint64_t addr, void *dst, uint32_t bytes, AccessScope scope) {
  uint8_t *p = global_bytes(w, addr, bytes);
  if (w.launch->xcd) check_stale(w, w.launch->xcd->load(w.wg->xcd, p, addr, dst, bytes, scope));
  else std::memcpy(dst, p, bytes);
}

void global_store(Wave &w, uint64_t addr, const void *src, uint32_t bytes, AccessScope scope) {
  uint8_t *p = global_bytes(w, addr, bytes);
  note_write(w);
  if (w.launch->xcd) w.launch->xcd->store(w.wg->xcd, p, addr, src, bytes, scope, writer_of(w));
  else std::memcpy(p, src, bytes);
}

static void lds_bounds(Wave &w, uint32_t addr, uint32_t bytes) {
  if (uint64_t(addr) + bytes > w.wg->lds_bytes) {
    char buf[128];
    std::snprintf(buf, sizeof buf, "LDS access out of bounds: bytes [0x%x, 0x%x) of a workgroup with %u bytes of LDS",
                  addr, addr + bytes, w.wg->lds_bytes);
    fail(buf);
  }
}

static void race(Wave &w, const Inst &in, uint32_t addr, const char *what, uint32_t other_wave, uint32_t other_inst) {
  const Launch &l = *w.launch;
  char buf[160];
  std::snprintf(buf, sizeof buf, "LDS race at byte 0x%x: %s (%s) ", addr, wave_name(w).c_str(),
                w.launch->program->mnemonics[in.mnemonic_id].c_str());
  std::string m = buf;
  m += what;
  if (other_wave == kManyWaves) m += " by several other waves";
  else
    m += " by wave " + std::to_string(other_wave - 1 - w.wg->first_wave) + " (" + inst_where(l, other_inst) + ")";
  m += " with no s_barrier between";
  fail(m);
}

static void check_dma_pending(Wave &w, const LdsWordShadow &s, uint32_t addr) {
  if (!s.dma_seq || !w.launch->options.check_waits) return;
  const WaitTracker &t = w.launch->trackers[s.write_wave - 1];
  if (s.dma_seq <= t.retired_vm) return;
  char buf[96];
  std::snprintf(buf, sizeof buf, "reads LDS byte 0x%x that an LDS DMA of wave %u still writes: ", addr,
                s.write_wave - 1 - w.wg->first_wave);
  fail(std::string(buf) + "the s_waitcnt vmcnt that retires it (and a barrier, for another wave) is missing");
}

uint8_t *lds_read(Wave &w, const Inst &in, uint32_t addr, uint32_t bytes) {
  lds_bounds(w, addr, bytes);
  if (w.wg->lds_shadow) {
    const uint32_t me = w.id + 1, epoch = w.wg->epoch;
    for (uint32_t a = addr & ~3u; a < addr + bytes; a += 4) {
      LdsWordShadow &s = w.wg->lds_shadow[a >> 2];
      check_dma_pending(w, s, a);
      if (s.write_epoch == epoch && s.write_wave != me && w.launch->options.check_lds_races)
        race(w, in, a, "reads what was written", s.write_wave, s.write_inst);
      if (s.read_epoch != epoch) s.read_epoch = epoch, s.read_wave = me, s.read_inst = uint16_t(in.index);
      else if (s.read_wave != me) s.read_wave = kManyWaves;
    }
  }
  return w.wg->lds + addr;
}

static uint8_t *lds_write_common(Wave &w, const Inst &in, uint32_t addr, uint32_t bytes, uint64_t dma_seq) {
  lds_bounds(w, addr, bytes);
  note_write(w);
  if (w.wg->lds_shadow) {
    const uint32_t me = w.id + 1, epoch = w.wg->epoch;
    const bool races = w.launch->options.check_lds_races;
    for (uint32_t a = addr & ~3u; a < addr + bytes; a += 4) {
      LdsWordShadow &s = w.wg->lds_shadow[a >> 2];
      if (races && s.write_epoch == epoch && s.write_wave != me)
        race(w, in, a, "overwrites what was written", s.write_wave, s.write_inst);
      if (races && s.read_epoch == epoch && s.read_wave != me)
        race(w, in, a, "overwrites what was read", s.read_wave, s.read_inst);
      s.write_epoch = epoch, s.write_wave = me, s.write_inst = uint16_t(in.index);
      s.dma_seq = uint32_t(dma_seq);
    }
  }
  return w.wg->lds + addr;
}

uint8_t *lds_write(Wave &w, const Inst &in, uint32_t addr, uint32_t bytes) {
  return lds_write_common(w, in, addr, bytes, 0);
}

uint8_t *lds_dma_write(Wave &w, const Inst &in, uint32_t addr, uint32_t bytes, uint64_t seq) {
  return lds_write_common(w, in, addr, bytes, seq);
}

uint8_t *lds_atomic(Wave &w, const Inst &in, uint32_t addr, uint32_t bytes) {
  (void)in;
  lds_bounds(w, addr, bytes);
  note_write(w);
  return w.wg->lds + addr;
}

// ---- waits ----

bool WaitTracker::smem_retired(uint64_t seq) const {
  return std::find(smem_outstanding.begin(), smem_outstanding.end(), seq) == smem_outstanding.end();
}

static bool pending(const WaitTracker &t, const WaitTracker::Pending &p) {
  if (!p.seq) return false;
  switch (p.counter) {
    case 1: return p.seq > t.retired_vm;
    case 2: return p.seq > t.retired_lds;
    case 3: return !t.smem_retired(p.seq);
  }
  return false;
}

uint64_t issue_memory(Wave &w, const Inst &in, Counter counter, bool smem, const Operand *dst, uint32_t dst_regs) {
  if (!w.waits) return 0;
  WaitTracker &t = *w.waits;
  const uint64_t seq = t.next_seq++;
  if (counter == Counter::kVm) t.vm.push_back(seq);
  else {
    t.lgkm.push_back(seq);
    t.lgkm_is_smem.push_back(smem);
    if (smem) t.smem_outstanding.push_back(seq);
  }
  ++t.outstanding;
  if (dst && dst->kind != OpKind::kOff && dst->kind != OpKind::kNone) {
    const uint8_t c = counter == Counter::kVm ? 1 : smem ? 3 : 2;
    for (uint32_t k = 0; k < dst_regs; ++k) {
      WaitTracker::Pending &p = dst->kind == OpKind::kSgpr
                                    ? t.sregs[dst->reg + k]
                                    : t.vregs[(dst->kind == OpKind::kAgpr ? w.accum_offset : 0) + dst->reg + k];
      p = {seq, in.index, c};
    }
  }
  return seq;
}

uint64_t issue_lds_dma(Wave &w, const Inst &in) {
  if (!w.waits) return 1;  // a non-zero seq: no check reads it
  const uint64_t seq = issue_memory(w, in, Counter::kVm, false, nullptr, 0);
  WaitTracker &t = *w.waits;
  t.lgkm.push_back(seq);
  t.lgkm_is_smem.push_back(false);
  ++t.outstanding;
  return seq;
}

void wait_counts(Wave &w, uint32_t vmcnt, uint32_t lgkmcnt) {
  if (!w.waits) return;
  WaitTracker &t = *w.waits;
  while (t.vm.size() > vmcnt) {
    t.retired_vm = t.vm.front();
    t.vm.pop_front();
    --t.outstanding;
  }
  // LDS results in order; a scalar load only for sure at lgkmcnt(0).
  while (t.lgkm.size() > lgkmcnt) {
    size_t k = 0;
    while (k < t.lgkm.size() && t.lgkm_is_smem[k]) ++k;
    if (k == t.lgkm.size()) k = 0;  // only scalar loads left: one returned, which is unknown
    if (!t.lgkm_is_smem[k]) t.retired_lds = std::max(t.retired_lds, t.lgkm[k]);
    t.lgkm.erase(t.lgkm.begin() + long(k));
    t.lgkm_is_smem.erase(t.lgkm_is_smem.begin() + long(k));
    --t.outstanding;
  }
  if (lgkmcnt == 0) t.smem_outstanding.clear();
}

// Before an instruction runs: none of its operands may be a register whose
// memory result has not been retired by an s_waitcnt.
static void check_operands(Wave &w, const Inst &in) {
  WaitTracker &t = *w.waits;
  for (int i = 0; i < in.nops; ++i) {
    const Operand &o = in.op[i];
    if (o.kind != OpKind::kVgpr && o.kind != OpKind::kAgpr && o.kind != OpKind::kSgpr) continue;
    for (uint32_t k = 0; k < o.count; ++k) {
      const WaitTracker::Pending &p = o.kind == OpKind::kSgpr
                                          ? t.sregs[o.reg + k]
                                          : t.vregs[(o.kind == OpKind::kAgpr ? w.accum_offset : 0) + o.reg + k];
      if (!pending(t, p)) continue;
      const bool writes = i < in.ndst;
      // A later load into the same registers by the same in-order counter is fine.
      if (writes && in.counter && p.counter == in.counter && p.counter != 3) continue;
      const char *counter = p.counter == 1 ? "vmcnt" : "lgkmcnt";
      Operand one = o;
      one.reg = uint16_t(o.reg + k), one.count = 1;
      fail(std::string(writes ? "writes " : "reads ") + operand_text(one) + " before the s_waitcnt " + counter +
           " that retires the load into it (" + inst_where(*w.launch, p.inst) + ")");
    }
  }
}

// ---- control ----

static void release_barrier_if_complete(Workgroup &g, std::vector<Wave> &waves) {
  if (g.waves_at_barrier == 0 || g.waves_at_barrier < g.waves - g.waves_done) return;
  for (uint32_t i = 0; i < g.waves; ++i) {
    Wave &w = waves[g.first_wave + i];
    if (w.state == Wave::State::kBarrier) w.state = Wave::State::kReady;
  }
  g.waves_at_barrier = 0;
  ++g.epoch;
  ++waves[g.first_wave].launch->write_epoch;
}

void barrier_arrive(Wave &w) {
  w.state = Wave::State::kBarrier;
  ++w.wg->waves_at_barrier;
  release_barrier_if_complete(*w.wg, w.launch->waves);
}

void end_wave(Wave &w) {
  note_write(w);
  w.state = Wave::State::kDone;
  ++w.wg->waves_done;
  release_barrier_if_complete(*w.wg, w.launch->waves);
}

// ---- spin detection ----

static uint64_t state_hash(const Wave &w) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](const uint32_t *p, size_t n) {
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  };
  mix(w.s, kSgprFile);
  mix(w.v, size_t(w.vregs) * 64);
  return h ^ uint64_t(w.scc);
}

void branch_back(Wave &w, const Inst &branch) {
  const Launch &l = *w.launch;
  const uint32_t target = uint32_t(branch.target);
  if (target != w.loop_target || l.write_epoch != w.loop_epoch) {
    w.loop_target = target, w.loop_branch = branch.index, w.loop_epoch = l.write_epoch;
    w.loop_repeats = 0, w.loop_hash = 0;
    return;
  }
  // Look at the wave's state only once the loop has repeated a while with
  // nothing written anywhere, then every 16 turns.
  if (++w.loop_repeats < 64 || (w.loop_repeats & 15)) return;
  const uint64_t h = state_hash(w);
  if (h == w.loop_hash) w.spin_epoch = l.write_epoch;
  w.loop_hash = h;
}

static bool spinning(const Launch &l, const Wave &w) { return w.spin_epoch == l.write_epoch; }

// ---- the scheduler ----

// Runs `w` for up to `budget` instructions or until it stops being ready.
static void run_wave(Launch &l, Wave &w, uint32_t budget) {
  const Inst *insts = l.program->insts.data();
  const uint32_t n = uint32_t(l.program->insts.size());
  const bool check = w.waits != nullptr;
  uint64_t *counts = l.mnemonic_counts.data();
  l.current = &w;
  g_flush_f32 = w.mode.flush_f32;
  uint32_t ran = 0;
  while (ran < budget && w.state == Wave::State::kReady) {
    if (w.pc >= n) fail("the program counter ran past the end of the code");
    const Inst &in = insts[w.pc++];
    l.current_inst = &in;
    ++counts[in.mnemonic_id];
    ++ran;
    if (check && w.waits->outstanding) check_operands(w, in);
    in.fn(w, in);
  }
  w.instructions += ran;
}

Status run_launch(Launch &l, RunStats *stats) {
  std::vector<uint32_t> order(l.waves.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = uint32_t(i);
  if (l.options.order == WaveOrder::kReverse) std::reverse(order.begin(), order.end());
  std::mt19937_64 rng(l.options.seed);
  const uint32_t quantum = std::max<uint32_t>(1, l.options.quantum);
  try {
    size_t live = order.size();
    while (live) {
      if (l.options.order == WaveOrder::kRandom) std::shuffle(order.begin(), order.begin() + long(live), rng);
      bool ran = false;
      for (size_t i = 0; i < live; ++i) {
        Wave &w = l.waves[order[i]];
        if (w.state != Wave::State::kReady) continue;
        // Random order also varies the turn's length, so meetings see many interleavings.
        const uint32_t budget =
            l.options.order == WaveOrder::kRandom ? 1 + uint32_t(rng() % (2 * quantum)) : quantum;
        run_wave(l, w, budget);
        ran = true;
        if (w.instructions > l.options.max_wave_instructions) {
          l.current_inst = &l.program->insts[w.pc < l.program->insts.size() ? w.pc : 0];
          fail("hang: " + wave_name(w) + " ran " + std::to_string(w.instructions) +
               " instructions without finishing (a spin that never ends?); it is at " +
               inst_where(l, l.current_inst->index));
        }
      }
      // Every live wave spins (its loop state repeats and nothing has been
      // written since) or waits at a barrier: nothing can change any more.
      bool any_spin = false, all_stuck = true;
      for (size_t i = 0; i < live && all_stuck; ++i) {
        const Wave &w = l.waves[order[i]];
        if (w.state == Wave::State::kDone || w.state == Wave::State::kBarrier) continue;
        if (spinning(l, w)) any_spin = true;
        else all_stuck = false;
      }
      if (any_spin && all_stuck) {
        size_t spinners = 0;
        const Wave *first = nullptr;
        for (size_t i = 0; i < live; ++i) {
          const Wave &w = l.waves[order[i]];
          if (w.state == Wave::State::kReady && spinning(l, w)) {
            ++spinners;
            if (!first || w.id < first->id) first = &w;
          }
        }
        l.current = nullptr;
        fail("hang: every remaining wave loops without any wave writing memory or LDS (" + std::to_string(spinners) +
             " waves spin); " + wave_name(*first) + " loops at " + inst_where(l, first->loop_target) +
             ", branching back at " + inst_where(l, first->loop_branch));
      }
      // Drop finished waves from the order (keeps the relative order).
      size_t k = 0;
      for (size_t i = 0; i < live; ++i)
        if (l.waves[order[i]].state != Wave::State::kDone) order[k++] = order[i];
      live = k;
      if (live && !ran) {
        std::string who;
        for (size_t i = 0; i < live && i < 4; ++i) who += (i ? ", " : "") + wave_name(l.waves[order[i]]);
        fail("deadlock: every remaining wave waits at an s_barrier that cannot complete (" + who + ")");
      }
    }
  } catch (const EmuError &e) {
    std::string where;
    if (l.current && l.current_inst)
      where = " [" + wave_name(*l.current) + ", " + inst_where(l, l.current_inst->index) + "]";
    return unsupported(std::string(e.what()) + where);
  }
  if (l.xcd) l.xcd->flush_all();
  if (stats) {
    stats->waves = l.waves.size();
    stats->workgroups = l.workgroups.size();
    stats->instructions = 0;
    stats->per_wave.clear();
    for (const Wave &w : l.waves) {
      stats->instructions += w.instructions;
      stats->per_wave.push_back({w.wg->id, w.id_in_group, w.instructions});
    }
    stats->by_mnemonic.clear();
    for (size_t i = 0; i < l.mnemonic_counts.size(); ++i)
      if (l.mnemonic_counts[i]) stats->by_mnemonic.emplace_back(l.program->mnemonics[i], l.mnemonic_counts[i]);
    std::sort(stats->by_mnemonic.begin(), stats->by_mnemonic.end(),
              [](const auto &a, const auto &b) { return a.second > b.second; });
  }
  return Status::Ok();
}

}  // namespace gatejit::emulator
