#include "code_facts.h"

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "amdgpu_disassembly.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/MemoryBuffer.h"

namespace gatejit::compiler {
namespace {

// One instruction as the replay sees it.
struct Step {
  enum Kind { kOther, kLoad, kStore, kAsyncCopy, kCommitGroup, kWaitCount, kUse } kind = kOther;
  int64_t bytes = 0;               // per lane (loads, stores, copies); a TMA stage: 1 (its size is the plan's)
  int64_t keep = 0;                // kWaitCount: entries left outstanding
  std::vector<std::string> regs;   // kLoad (PTX): registers written; kUse: registers read
  std::vector<std::string> defs;    // kUse (PTX): registers written
  std::vector<std::string> address; // kLoad (PTX): registers of the address
  int64_t branch_to = -1;          // index of a branch's target step
  bool unconditional = false;      // a branch that never falls through
  bool ends = false;               // the program ends here (ret, exit, s_endpgm)
  bool counts_in_order = false;    // AMD: the load/store sits in the vmcnt queue
  bool ordering_point = false;     // PTX: no load moves across it (stores, barriers, fences, loop headers)
  bool meeting = false;            // a global atomic or device-scope access: workgroups meet (K split, fp8 out's bands)
  bool fallback_mark = false;      // @element_wise_fallback: the template marks that path (fallback_mark_*.mlir)
  bool product = false;            // a matrix or packed-dot product (v_mfma, v_dot2, mma, wgmma): what the stream feeds
};

// What the replay keeps outstanding: loads and stores in issue order (AMD's
// vmcnt queue) or loads and committed copy groups (PTX). `epoch`: the
// round trips completed when it was issued.
struct Entry {
  int64_t bytes;
  bool load;
  std::vector<std::string> regs;
  int64_t epoch = 0;
  bool main = false;  // issued in the main region
  bool copy = false;       // an async copy (a TMA stage, a PTX copy group, an LDS-DMA load)
  bool tail_copy = false;  // ... issued by a pipeline peeled after the main loop
};

struct RegionStats {
  int64_t loads = 0, load_bytes = 0, round_trips = 0, single_load_waits = 0, async_copies = 0;
  int64_t max_in_flight = 0;
  int64_t load_waits = 0;            // waits that retired a load
  double in_flight_at_wait_sum = 0;  // load bytes outstanding before each of them
};

// Replays waits as a chain of round trips: a wait costs one when it needs
// an entry issued since the last round trip completed; entries issued
// before that returned during it (they return about in order).
// PTX (`hoist_loads`): ptxas schedules loads ahead of their uses up to the
// next ordering point (a store, barrier, fence or loop header; branches
// around a few instructions it predicates), so a load issued after a wait
// but before the next ordering point rides on that wait's round trip.
class Replay {
 public:
  explicit Replay(bool hoist_loads) : hoist_loads_(hoist_loads) {}
  void run(const std::vector<Step> &steps, const std::vector<size_t> &order, RegionStats &s, bool main = false) {
    main_ = main;
    ++segment_;  // no load moves into or out of a region (a loop's entry or exit)
    for (size_t i : order) step(steps[i], s);
  }
  int64_t epoch() const { return epoch_; }
  // Replays `order` as a pipeline peeled after the loop: until the copies
  // it issues (from step `from` of it on, the last of them, every one) have
  // retired. Waits that retire only copies are `streamed`'s; a wait that
  // retires any other load is `s`'s, as the tail's own. Returns the steps
  // taken, or nothing where those copies never retire (a TMA barrier's wait
  // keeps one in flight): then nothing is the pipeline's.
  std::optional<size_t> run_peeled(const std::vector<Step> &steps, const std::vector<size_t> &order, size_t from,
                                   RegionStats &streamed, RegionStats &s) {
    main_ = false;
    peel_tail_ = &s;
    ++segment_;
    std::optional<size_t> taken;
    for (size_t k = 0; k < order.size() && !taken; ++k) {
      peeling_ = true;
      step(steps[order[k]], streamed);
      if (k >= from && pending_copy_bytes_ == 0 &&
          std::none_of(queue_.begin(), queue_.end(), [](const Entry &e) { return e.tail_copy; }))
        taken = k + 1;
    }
    peeling_ = false;
    peel_tail_ = nullptr;
    return taken;
  }
  // The round trips completed when the last main-region entry returned.
  int64_t main_done_epoch() const { return main_done_epoch_; }
  // Waits that retired main-region loads, wherever they stood.
  const RegionStats &main_waits() const { return main_waits_; }

 private:
  bool hoist_loads_;  // (not const: run_peeled is undone by assigning a copy back)
  std::deque<Entry> queue_;
  int64_t epoch_ = 0;
  int64_t segment_ = 0;
  int64_t hoisted_segment_ = -1;  // the segment whose later loads ride on the last round trip
  bool main_ = false;
  int64_t main_done_epoch_ = 0;
  RegionStats main_waits_;
  std::set<std::string> load_derived_;  // registers holding (values computed from) loaded data
  int64_t pending_copy_bytes_ = 0;  // PTX cp.async chunks not yet committed
  bool peeling_ = false;             // run_peeled: copies pushed are the peeled pipeline's
  RegionStats *peel_tail_ = nullptr;  // run_peeled: where a wait for another load counts

  int64_t loads_outstanding() const {
    return std::count_if(queue_.begin(), queue_.end(), [](const Entry &e) { return e.load; });
  }
  // Retires the oldest `count` entries: one wait.
  void retire(size_t count, RegionStats &s) {
    if (count == 0) return;
    int64_t loads = 0, bytes = 0;
    for (const Entry &e : queue_) {
      loads += e.load;
      bytes += e.load ? e.bytes : 0;
    }
    bool fresh = false, retired_main = false, retired_load = false, retired_other = false;
    for (size_t i = 0; i < count; ++i) {
      fresh |= queue_.front().epoch == epoch_;
      retired_main |= queue_.front().main;
      retired_load |= queue_.front().load;
      retired_other |= queue_.front().load && !queue_.front().copy;
      queue_.pop_front();
    }
    RegionStats &charged = peel_tail_ && retired_other ? *peel_tail_ : s;
    // A wait that retires only stores and atomics (AMD's vmcnt queue holds
    // both) is a meeting's release or arrival: the model charges those as
    // the meeting's round trips (perf_model.cpp), as on PTX, where they
    // never enter the queue.
    if (fresh && retired_load) {
      ++epoch_;
      hoisted_segment_ = segment_;
      ++charged.round_trips;
    }
    if (retired_main) main_done_epoch_ = epoch_;
    if (!retired_load) return;
    for (RegionStats *t : {&charged, retired_main ? &main_waits_ : nullptr}) {
      if (!t) continue;
      ++t->load_waits;
      t->in_flight_at_wait_sum += double(bytes);
      if (loads == 1 && fresh) ++t->single_load_waits;
    }
  }
  void push(int64_t bytes, bool load, std::vector<std::string> regs, RegionStats &s,
            const std::vector<std::string> &address = {}, bool copy = false) {
    // A load rides on the last round trip when the assembler can issue it
    // before that wait: same segment, and an address not computed from data
    // the wait brought.
    bool rides = hoist_loads_ && load && segment_ == hoisted_segment_;
    for (const std::string &r : address) rides = rides && !load_derived_.count(r);
    if (hoist_loads_)
      for (const std::string &r : regs) load_derived_.insert(r);
    queue_.push_back({bytes, load, std::move(regs), rides ? epoch_ - 1 : epoch_, main_, copy, copy && peeling_});
    s.max_in_flight = std::max(s.max_in_flight, loads_outstanding());
  }
  void step(const Step &st, RegionStats &s) {
    if (st.ordering_point) ++segment_;
    switch (st.kind) {
      case Step::kLoad:
        push(st.bytes, true, st.regs, s, st.address);
        ++s.loads;
        s.load_bytes += st.bytes;
        break;
      case Step::kStore:
        if (st.counts_in_order) push(st.bytes, false, {}, s);
        break;
      case Step::kAsyncCopy:
        ++s.async_copies;
        s.load_bytes += st.bytes;
        if (st.counts_in_order) push(st.bytes, true, {}, s, {}, true);
        else pending_copy_bytes_ += st.bytes;
        break;
      case Step::kCommitGroup:
        if (pending_copy_bytes_ > 0) push(pending_copy_bytes_, true, {}, s, {}, true);
        pending_copy_bytes_ = 0;
        break;
      case Step::kWaitCount:
        if (int64_t(queue_.size()) > st.keep) retire(queue_.size() - size_t(st.keep), s);
        break;
      case Step::kUse: {
        if (hoist_loads_ && !st.defs.empty()) {
          bool derived = false;
          for (const std::string &r : st.regs) derived |= load_derived_.count(r) > 0;
          for (const std::string &r : st.defs) derived ? (void)load_derived_.insert(r) : (void)load_derived_.erase(r);
        }
        // The newest outstanding load this instruction reads: it and every
        // older entry have returned.
        size_t through = 0;
        for (size_t i = 0; i < queue_.size(); ++i)
          for (const std::string &r : queue_[i].regs)
            if (std::find(st.regs.begin(), st.regs.end(), r) != st.regs.end()) through = i + 1;
        retire(through, s);
        break;
      }
      case Step::kOther: break;
    }
  }
};

// Basic blocks and their natural loops.
struct Cfg {
  std::vector<size_t> begin, end;            // [begin, end) step ranges, in text order
  std::vector<std::vector<size_t>> succ, pred;
  std::vector<size_t> block_of;              // step -> block
};

Cfg build_cfg(const std::vector<Step> &steps) {
  std::vector<bool> leader(steps.size() + 1, false);
  leader[0] = true;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].branch_to >= 0) leader[size_t(steps[i].branch_to)] = true;
    if (steps[i].branch_to >= 0 || steps[i].ends) leader[i + 1] = true;
  }
  Cfg g;
  g.block_of.resize(steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    if (leader[i]) {
      g.begin.push_back(i);
      g.end.push_back(i);
    }
    g.block_of[i] = g.begin.size() - 1;
    g.end.back() = i + 1;
  }
  const size_t n = g.begin.size();
  g.succ.resize(n);
  g.pred.resize(n);
  for (size_t b = 0; b < n; ++b) {
    const Step &last = steps[g.end[b] - 1];
    if (last.branch_to >= 0) g.succ[b].push_back(g.block_of[size_t(last.branch_to)]);
    if (!last.ends && !last.unconditional && b + 1 < n) g.succ[b].push_back(b + 1);
    for (size_t t : g.succ[b]) g.pred[t].push_back(b);
  }
  return g;
}

// Every natural loop (header, body blocks) from the back edges of a
// depth-first walk from the entry.
std::vector<std::pair<size_t, std::set<size_t>>> natural_loops(const Cfg &g) {
  const size_t n = g.begin.size();
  std::vector<int> state(n, 0);  // 0 new, 1 on the stack, 2 done
  std::vector<std::pair<size_t, size_t>> back_edges;
  std::vector<std::pair<size_t, size_t>> stack = {{0, 0}};
  state[0] = 1;
  while (!stack.empty()) {
    auto &[b, next] = stack.back();
    if (next < g.succ[b].size()) {
      const size_t t = g.succ[b][next++];
      if (state[t] == 1) back_edges.push_back({b, t});
      else if (state[t] == 0) {
        state[t] = 1;
        stack.push_back({t, 0});
      }
    } else {
      state[b] = 2;
      stack.pop_back();
    }
  }
  std::vector<std::pair<size_t, std::set<size_t>>> loops;
  for (const auto &[latch, header] : back_edges) {
    std::set<size_t> body = {header, latch};
    std::vector<size_t> work = {latch};
    while (!work.empty()) {
      const size_t b = work.back();
      work.pop_back();
      if (b == header) continue;
      for (size_t p : g.pred[b])
        if (body.insert(p).second) work.push_back(p);
    }
    loops.push_back({header, std::move(body)});
  }
  return loops;
}

// Blocks a launch reaches without running marked code: from the entry, not
// through a block holding a fallback mark (nor into one). The template marks
// the element-wise epilogue in the block of its attn loads, from which alone
// its stores are reached, so what is left is the path of a launch with attn
// and out on 16 bytes (its own blocks and those both paths share); with no
// mark, every block.
std::vector<bool> reached_unmarked(const std::vector<Step> &steps, const Cfg &g) {
  const size_t n = g.begin.size();
  std::vector<bool> marked(n, false), reached(n, false);
  for (size_t b = 0; b < n; ++b)
    for (size_t i = g.begin[b]; i < g.end[b]; ++i) marked[b] = marked[b] || steps[i].fallback_mark;
  std::vector<size_t> work;
  if (n > 0 && !marked[0]) reached[0] = true, work.push_back(0);
  while (!work.empty()) {
    const size_t b = work.back();
    work.pop_back();
    for (size_t t : g.succ[b])
      if (!marked[t] && !reached[t]) reached[t] = true, work.push_back(t);
  }
  return reached;
}

// The main loop: among the innermost loops that copy to workgroup memory,
// the one with the most copies; else the one with the most 16-byte loads
// (ties: the larger). A loop around such a loop is not a candidate: a
// persistent grid's loop over tiles holds the K loop and its prologue's
// copies. Without one, the straight-line code up to the last 16-byte
// load is the main region.
struct Region {
  bool loop = false;
  std::vector<size_t> prologue, body, tail;  // step indices, in text order
};
Region main_region(const std::vector<Step> &steps) {
  const Cfg g = build_cfg(steps);
  Region best;
  std::tuple<int64_t, int64_t, size_t> best_key{0, 0, 0};
  const auto loops = natural_loops(g);
  std::vector<std::tuple<int64_t, int64_t, size_t>> keys;
  for (const auto &[header, blocks] : loops) {
    int64_t copies = 0, wide = 0;
    size_t size = 0;
    for (size_t b : blocks)
      for (size_t i = g.begin[b]; i < g.end[b]; ++i) {
        copies += steps[i].kind == Step::kAsyncCopy;
        wide += steps[i].kind == Step::kLoad && steps[i].bytes >= 16;
        ++size;
      }
    keys.push_back({copies, wide, size});
  }
  auto qualifies = [&](size_t l) { return std::get<0>(keys[l]) > 0 || std::get<1>(keys[l]) > 0; };
  const std::vector<bool> aligned = reached_unmarked(steps, g);
  for (size_t l = 0; l < loops.size(); ++l) {
    const auto &[header, blocks] = loops[l];
    const auto &key = keys[l];
    bool encloses_candidate = false;
    for (size_t o = 0; o < loops.size() && !encloses_candidate; ++o)
      encloses_candidate = o != l && loops[o].first != header && blocks.count(loops[o].first) && qualifies(o);
    if (!qualifies(l) || encloses_candidate || key <= best_key) continue;
    best_key = key;
    best = Region{true, {}, {}, {}};
    for (size_t b : blocks)
      for (size_t i = g.begin[b]; i < g.end[b]; ++i) best.body.push_back(i);
    std::sort(best.body.begin(), best.body.end());
    // The tail: every block reachable from the loop's exits (LLVM may place
    // it before the loop in the text), short of the header of a loop around
    // it (a persistent grid's next tile begins there: that is the prologue
    // again, not the tail); the rest is the prologue.
    std::vector<bool> stop(g.begin.size(), false);
    for (const auto &[outer_header, outer_blocks] : loops)
      if (outer_header != header && outer_blocks.count(header)) stop[outer_header] = true;
    std::vector<bool> in_tail(g.begin.size(), false);
    std::vector<size_t> work;
    auto reach = [&](size_t t) {
      if (!blocks.count(t) && !in_tail[t] && !stop[t]) in_tail[t] = true, work.push_back(t);
    };
    for (size_t b : blocks)
      for (size_t t : g.succ[b]) reach(t);
    while (!work.empty()) {
      const size_t b = work.back();
      work.pop_back();
      for (size_t t : g.succ[b]) reach(t);
    }
    for (size_t b = 0; b < g.begin.size(); ++b) {
      if (blocks.count(b) || (in_tail[b] && !aligned[b])) continue;
      for (size_t i = g.begin[b]; i < g.end[b]; ++i) (in_tail[b] ? best.tail : best.prologue).push_back(i);
    }
  }
  if (best.loop) return best;
  // Straight-line code: what follows the workgroups' first meeting (an
  // arrival) reads what others wrote, a tail however wide its loads.
  // And a load issued after the last product feeds none: it is the
  // epilogue's (attn loaded after the block's reduction), a round trip of
  // the tail however wide (it had once ended the main region, and its
  // round trip was lost).
  size_t limit = steps.size();
  for (size_t i = 0; i < steps.size() && limit == steps.size(); ++i)
    if (steps[i].meeting) limit = i;
  size_t last_product = limit;
  for (size_t i = 0; i < limit; ++i)
    if (steps[i].product) last_product = i;
  if (last_product < limit) limit = last_product;
  size_t end = 0;
  for (size_t i = 0; i < limit; ++i)
    if ((steps[i].kind == Step::kLoad || steps[i].kind == Step::kAsyncCopy) && steps[i].bytes >= 16) end = i + 1;
  Region straight;
  for (size_t i = 0; i < steps.size(); ++i) (i < end ? straight.body : straight.tail).push_back(i);
  return straight;
}

// Enough iterations for any pipeline the templates build to reach its
// steady state (mma_tiled keeps at most 8 stages ahead).
constexpr int kWarmIterations = 8;
// Iterations the steady state is averaged over: a whole number of every
// pipeline depth up to 4 (and 6).
constexpr int kSteadyIterations = 12;

CodeFacts replay(std::vector<Step> steps, const std::string &format, bool hoist_loads) {
  CodeFacts f;
  f.format = format;
  const Region r = main_region(steps);
  f.loop_found = r.loop;
  f.loop_instructions = int64_t(r.body.size());
  if (hoist_loads) {
    const Cfg g = build_cfg(steps);
    for (const auto &[header, blocks] : natural_loops(g)) steps[g.begin[header]].ordering_point = true;
  }
  Replay rp(hoist_loads);
  RegionStats warm, loop, tail;
  rp.run(steps, r.prologue, warm);
  // First iterations: fill what a pipelined loop carries (stages ahead).
  if (r.loop)
    for (int i = 0; i < kWarmIterations; ++i) rp.run(steps, r.body, warm);
  const int64_t epoch_before = rp.epoch();
  const int iterations = r.loop ? kSteadyIterations : 1;
  for (int i = 0; i < iterations; ++i) rp.run(steps, r.body, loop, true);  // steady state (straight-line: once)
  // A pipeline peeled after the loop (mma_tiled's DRAIN: its last ring,
  // copies, waits and products of the last tiles) streams on: the waits
  // that retire only copies, up to the one that retires the last copy it
  // issues, bring the stream's own bytes (the streaming terms count them),
  // so they are not the tail's; a wait there for any other load is. A
  // loop that leaves copies in flight and waits for them after it (the
  // repeats of REFILL_ALWAYS) issues none there: that wait stays the
  // tail's. (Where the tail also issued copies, a wait retiring both would
  // count as the stream's: no template's tail does both.)
  std::vector<size_t> tail_steps = r.tail;
  if (r.loop) {
    size_t last_copy = tail_steps.size();
    for (size_t k = 0; k < tail_steps.size(); ++k)
      if (steps[tail_steps[k]].kind == Step::kAsyncCopy) last_copy = k;
    if (last_copy < tail_steps.size()) {
      const Replay before = rp;
      RegionStats streamed;
      if (const std::optional<size_t> taken = rp.run_peeled(steps, tail_steps, last_copy, streamed, tail))
        tail_steps.erase(tail_steps.begin(), tail_steps.begin() + std::ptrdiff_t(*taken));
      else
        rp = before, tail = RegionStats{};  // not a peeled pipeline: the whole tail is the tail
    }
  }
  rp.run(steps, tail_steps, tail);
  RegionStats in_flight = loop;
  if (!r.loop) {
    // Straight-line code waits for its last loads after the last of them:
    // the round trips until its last load returned, and the waits that
    // retired its loads, are the region's.
    const int64_t moved = std::max<int64_t>(0, rp.main_done_epoch() - epoch_before - loop.round_trips);
    loop.round_trips += moved;
    tail.round_trips = std::max<int64_t>(0, tail.round_trips - moved);
    // (Waits after the region's last load drain a stream that is all in
    // flight: a last load waited for alone there is no chain, so single-load
    // waits are the region's own.)
    in_flight = rp.main_waits();
  }
  const double per = 1.0 / iterations;
  f.loop_global_loads = loop.loads * per;
  f.loop_load_bytes = loop.load_bytes * per;
  f.loop_round_trips = loop.round_trips * per;
  f.loop_single_load_waits = loop.single_load_waits * per;
  f.loop_async_copies = loop.async_copies * per;
  f.max_loads_in_flight = loop.max_in_flight;
  f.bytes_in_flight_at_wait = in_flight.load_waits ? in_flight.in_flight_at_wait_sum / double(in_flight.load_waits)
                                                   : loop.load_bytes * per;
  f.tail_round_trips = tail.round_trips;
  for (const Step &s : steps) {
    if (s.kind == Step::kLoad && s.bytes < 4) ++f.narrow_global_loads;
    if (s.kind == Step::kStore && s.bytes < 4) ++f.narrow_global_stores;
    if (s.kind == Step::kStore && s.bytes >= 8) ++f.wide_global_stores;
  }
  return f;
}

// ---- AMDGPU ----

int64_t amdgpu_access_bytes(const std::string &m) {
  static const std::pair<const char *, int64_t> kSuffixes[] = {
      {"dwordx4", 16}, {"dwordx3", 12}, {"dwordx2", 8}, {"dword", 4}, {"b128", 16}, {"b96", 12}, {"b64", 8},
      {"b32", 4},      {"short", 2},    {"b16", 2},     {"byte", 1},  {"b8", 1}};
  for (const auto &[suffix, bytes] : kSuffixes)
    if (m.find(suffix) != std::string::npos) return bytes;
  return 4;
}

Step amdgpu_step(const DisassembledInstruction &i) {
  Step s;
  const std::string &m = i.mnemonic;
  const bool vmem = m.rfind("global_", 0) == 0 || m.rfind("buffer_", 0) == 0 || m.rfind("flat_", 0) == 0;
  // A load or store at device scope (sc1: past the XCD's L2) is the poll
  // meeting's (split_poll.mlir); only it, fences and atomics carry sc1.
  const bool device_scope = i.operands.find(" sc1") != std::string::npos;
  if (vmem && m.find("_lds_") != std::string::npos) {
    s.kind = Step::kAsyncCopy;
    s.bytes = amdgpu_access_bytes(m);
    s.counts_in_order = true;
  } else if (vmem && m.find("_load") != std::string::npos) {
    s.kind = Step::kLoad;
    s.bytes = amdgpu_access_bytes(m);
    s.meeting = device_scope;
  } else if (vmem && (m.find("_store") != std::string::npos || m.find("_atomic") != std::string::npos)) {
    s.kind = Step::kStore;
    s.bytes = amdgpu_access_bytes(m);
    s.counts_in_order = true;
    s.meeting = m.find("_atomic") != std::string::npos || device_scope;
  } else if (m == "s_waitcnt") {
    static const std::regex vmcnt(R"(vmcnt\((\d+)\))");
    std::smatch match;
    if (std::regex_search(i.operands, match, vmcnt)) {
      s.kind = Step::kWaitCount;
      s.keep = std::stoll(match[1]);
    }
  } else if (m == "s_nop" && i.operands.substr(0, i.operands.find_first_of(" \t")) == "15") {
    s.fallback_mark = true;  // fallback_mark_amdgcn.mlir (LLVM's own hazard nops are s_nop 0-7)
  } else if (m == "s_endpgm") {
    s.ends = true;  // stores still in flight complete after the wave; not a wait it makes
  } else if (m == "s_setpc_b64") {
    s.ends = true;  // an indirect jump: no known successor
  }
  s.product = m.rfind("v_mfma", 0) == 0 || m.rfind("v_dot2", 0) == 0;
  s.unconditional = m == "s_branch";
  return s;
}

StatusOr<CodeFacts> hsaco_facts(std::span<const uint8_t> bytes, const std::string &cpu) {
  auto buffer = llvm::MemoryBuffer::getMemBuffer(
      llvm::StringRef(reinterpret_cast<const char *>(bytes.data()), bytes.size()), "code-object", false);
  auto obj = llvm::object::ObjectFile::createELFObjectFile(buffer->getMemBufferRef());
  if (!obj) return corrupt("not a valid ELF code object: " + llvm::toString(obj.takeError()));
  auto dis = disassemble_amdgpu(**obj, cpu);
  if (!dis.ok()) return dis.status();
  std::vector<Step> steps;
  std::map<uint64_t, size_t> index_of;
  for (size_t k = 0; k < dis->instructions.size(); ++k) index_of[dis->instructions[k].address] = k;
  for (const DisassembledInstruction &i : dis->instructions) {
    Step s = amdgpu_step(i);
    if (i.branch_target >= 0)
      if (auto it = index_of.find(uint64_t(i.branch_target)); it != index_of.end()) s.branch_to = int64_t(it->second);
    steps.push_back(std::move(s));
  }
  return replay(std::move(steps), "hsaco", false);
}

// ---- PTX ----

int64_t ptx_type_bytes(const std::string &op) {
  int64_t lanes = op.find(".v4") != std::string::npos ? 4 : op.find(".v2") != std::string::npos ? 2 : 1;
  static const std::pair<const char *, int64_t> kTypes[] = {
      {".b128", 16}, {".b64", 8}, {".u64", 8}, {".s64", 8}, {".f64", 8}, {".b32", 4}, {".u32", 4}, {".s32", 4},
      {".f32", 4},   {".b16", 2}, {".u16", 2}, {".s16", 2}, {".f16", 2}, {".bf16", 2}, {".b8", 1}, {".u8", 1}, {".s8", 1}};
  for (const auto &[type, bytes] : kTypes)
    if (op.size() >= std::string_view(type).size() && op.rfind(type) == op.size() - std::string_view(type).size())
      return lanes * bytes;
  return lanes * 4;
}

std::vector<std::string> ptx_registers(const std::string &text) {
  static const std::regex reg(R"(%[A-Za-z_]+[0-9]+)");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), reg); it != std::sregex_iterator(); ++it)
    out.push_back(it->str());
  return out;
}

StatusOr<CodeFacts> ptx_facts(std::span<const uint8_t> bytes) {
  std::istringstream in(std::string(bytes.begin(), bytes.end()));
  std::string line;
  std::vector<Step> steps;
  std::vector<std::string> branch_label;  // per step: the label it branches to
  std::map<std::string, size_t> label_at;
  static const std::regex label_def(R"(^\s*(\$[\w.$]+):)");
  static const std::regex bra(R"(\bbra(\.uni)?\s+(\$[\w.$]+)\s*;)");
  static const std::regex wait_group(R"(cp\.async\.wait_group\s+(\d+))");
  static const std::regex expect_tx(R"(expect_tx[^,]*,\s*\[[^\]]*\],\s*(\d+))");
  std::smatch m;
  bool in_body = false;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, label_def)) {
      label_at[m[1]] = steps.size();
      continue;
    }
    const size_t b = line.find_first_not_of(" \t");
    if (b == std::string::npos) continue;
    std::string t = line.substr(b);
    if (t.rfind(".entry", 0) == 0 || t.rfind(".visible .entry", 0) == 0) in_body = true;
    if (in_body && t.rfind("// gatejit.element_wise_fallback", 0) == 0) {  // fallback_mark_nvptx.mlir
      Step mark;
      mark.fallback_mark = true;
      branch_label.push_back("");
      steps.push_back(std::move(mark));
      continue;
    }
    if (!in_body || t.rfind("//", 0) == 0 || t[0] == '.' || t[0] == '{' || t[0] == '}' || t.back() != ';') continue;
    const bool guarded = t[0] == '@';
    if (guarded) t = t.substr(t.find_first_of(" \t") + 1);  // predicate guard
    const std::string op = t.substr(0, t.find_first_of(" \t;"));
    const std::string args = t.size() > op.size() ? t.substr(op.size()) : "";
    Step s;
    std::string target;
    // The poll meeting's relaxed device-scope accesses (split_poll.mlir) are
    // global loads and stores too: ld.relaxed.gpu.global, st.relaxed...
    const bool relaxed_global = (op.rfind("ld.relaxed.", 0) == 0 || op.rfind("st.relaxed.", 0) == 0) &&
                                op.find(".global") != std::string::npos;
    if (op.rfind("ld.global", 0) == 0 || (relaxed_global && op[0] == 'l')) {
      s.kind = Step::kLoad;
      s.bytes = ptx_type_bytes(op);
      const size_t bracket = args.find(", [");
      s.regs = ptx_registers(args.substr(0, bracket));
      if (bracket != std::string::npos) s.address = ptx_registers(args.substr(bracket));
    } else if (op.rfind("st.global", 0) == 0 || (relaxed_global && op[0] == 's')) {
      s.kind = Step::kStore;
      s.bytes = ptx_type_bytes(op);
    } else if (op.rfind("cp.async.bulk.tensor", 0) == 0) {
      s.kind = Step::kAsyncCopy;  // bytes: the expect_tx of its barrier
    } else if (op.rfind("cp.async.commit_group", 0) == 0) {
      s.kind = Step::kCommitGroup;
    } else if (op.rfind("cp.async.wait_group", 0) == 0 && std::regex_search(t, m, wait_group)) {
      s.kind = Step::kWaitCount;
      s.keep = std::stoll(m[1]);
    } else if (op.rfind("cp.async.wait_all", 0) == 0) {
      s.kind = Step::kWaitCount;
    } else if (op.rfind("cp.async", 0) == 0) {
      s.kind = Step::kAsyncCopy;
      const size_t comma = args.rfind(',');
      s.bytes = comma == std::string::npos ? 16 : std::atoll(args.c_str() + comma + 1);
    } else if (op.rfind("mbarrier.arrive.expect_tx", 0) == 0) {
      // A TMA stage: its bytes when written as a number; else a marker
      // (the plan knows the stage's size).
      s.kind = Step::kAsyncCopy;
      s.bytes = std::regex_search(t, m, expect_tx) ? std::stoll(m[1]) : 1;
      s.counts_in_order = true;
    } else if (op.find("mbarrier.try_wait") != std::string::npos) {
      s.kind = Step::kWaitCount;  // the oldest stage landed
      s.keep = -1;
    } else {
      if (std::regex_search(t, m, bra)) target = m[2];
      s.kind = Step::kUse;
      // Operands read: all but an ordinary instruction's first (its result,
      // a register or a {vector} of them); a store's first is its address.
      const size_t first = args.find_first_not_of(" \t");
      const size_t close = first != std::string::npos && args[first] == '{' ? args.find('}', first) : first;
      const size_t comma = close == std::string::npos ? std::string::npos : args.find(',', close);
      s.regs = ptx_registers(comma == std::string::npos || op.rfind("st.", 0) == 0 ? args : args.substr(comma));
      if (comma != std::string::npos && op.rfind("st.", 0) != 0) s.defs = ptx_registers(args.substr(0, comma));
    }
    s.ordering_point = s.kind == Step::kStore || s.kind == Step::kWaitCount || op.rfind("atom", 0) == 0 ||
                       op.rfind("red.", 0) == 0 || op.rfind("bar", 0) == 0 || op.rfind("fence", 0) == 0 ||
                       op.rfind("membar", 0) == 0;
    // (Scope and semantics may come before the state space: atom.acq_rel.gpu.global.)
    // (And the poll meeting's relaxed loads and stores: split_poll.mlir.)
    s.meeting = (op.rfind("atom.", 0) == 0 || op.rfind("red.", 0) == 0 || op.rfind("ld.relaxed.", 0) == 0 ||
                 op.rfind("st.relaxed.", 0) == 0) &&
                op.find(".shared") == std::string::npos;
    s.product = op.rfind("mma.sync", 0) == 0 || op.rfind("wgmma.mma_async", 0) == 0;
    s.unconditional = !target.empty() && !guarded;
    s.ends = !guarded && (op == "ret" || op == "exit");
    branch_label.push_back(target);
    steps.push_back(std::move(s));
  }
  if (steps.empty()) return corrupt("PTX text has no instructions");
  for (size_t i = 0; i < steps.size(); ++i)
    if (!branch_label[i].empty())
      if (auto it = label_at.find(branch_label[i]); it != label_at.end()) steps[i].branch_to = int64_t(it->second);
  // TMA: the copy instruction carries no size; the barrier's expect_tx
  // stands for the stage.
  for (Step &s : steps)
    if (s.kind == Step::kAsyncCopy && s.bytes == 0) s.kind = Step::kOther;
  // An mbarrier wait: the oldest stage landed. The stages the TMA form
  // keeps in flight are the plan's (perf_model.cpp); here one stays.
  bool tma = false;
  for (Step &s : steps) {
    tma |= s.kind == Step::kAsyncCopy && s.counts_in_order;
    if (s.kind == Step::kWaitCount && s.keep < 0) s.keep = 1;
  }
  CodeFacts f = replay(std::move(steps), "ptx", true);
  f.tensor_memory_copies = tma;
  return f;
}

}  // namespace

StatusOr<CodeFacts> read_code_facts(std::span<const uint8_t> bytes, const std::string &cpu) {
  if (bytes.size() >= 4 && bytes[0] == 0x7f && bytes[1] == 'E' && bytes[2] == 'L' && bytes[3] == 'F')
    return hsaco_facts(bytes, cpu);
  return ptx_facts(bytes);
}

nlohmann::json code_facts_json(const CodeFacts &f) {
  return {{"format", f.format},
          {"loop_found", f.loop_found},
          {"loop_instructions", f.loop_instructions},
          {"loop_global_loads", f.loop_global_loads},
          {"loop_load_bytes_per_lane", f.loop_load_bytes},
          {"loop_round_trips", f.loop_round_trips},
          {"loop_single_load_waits", f.loop_single_load_waits},
          {"loop_async_copies", f.loop_async_copies},
          {"tensor_memory_copies", f.tensor_memory_copies},
          {"max_loads_in_flight", f.max_loads_in_flight},
          {"bytes_in_flight_at_wait_per_lane", f.bytes_in_flight_at_wait},
          {"tail_round_trips", f.tail_round_trips},
          {"narrow_global_loads", f.narrow_global_loads},
          {"narrow_global_stores", f.narrow_global_stores},
          {"wide_global_stores", f.wide_global_stores}};
}

}  // namespace gatejit::compiler
