// What the emulator checks beyond the results (docs/emulator.md), and proof
// that each check can fail:
//  - the K-split meetings (by poll and by arrival, streamed and tiled) and
//    the fp8-out band meeting give the reference's results in every arrival
//    order (round-robin, reverse, seeded random) and in cross-XCD mode, and
//    leave their module state ready for the next launch;
//  - seeded defects, each caught with a message naming the problem: an
//    s_waitcnt removed, a barrier removed between an LDS write and its read,
//    a DPP control changed, the MFMA's A and B lane maps crossed, a K-split
//    meeting without its release (cross-XCD mode), and a meeting whose
//    partials are never stored (a hang).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>

#include "emulate/tuning_scope.h"
#include "gatejit/emulator/gate_run.h"

namespace gatejit::emulator {
namespace {


Contract contract(int64_t m, int64_t n, int64_t k, DType d = DType::kBF16) {
  Contract c;
  c.target = Target::kGfx950;
  c.m = m, c.n = n, c.k = k;
  c.dtype_hidden = c.dtype_weight = c.dtype_attn = c.dtype_out = d;
  return c;
}

struct Meeting {
  const char *name;
  Contract contract;
  const char *tuning;
  const char *form;  // what kernel_form must say
};

std::vector<Meeting> meetings() {
  Contract fp8_out = contract(32, 1536, 2048);
  fp8_out.dtype_out = DType::kFP8E4M3;
  fp8_out.out_scale = OutScale::kPerTokenGroup128;
  // N such that a tile's splits land on different XCDs: workgroups are dealt
  // to the 8 XCDs by linear index, so where grid x * y is a multiple of 8
  // every split of a tile shares one XCD (N = 1536 at these M) and the
  // cross-XCD mode would not reach the meeting.
  return {
      {"streamed_split_poll", contract(64, 1504, 2048), nullptr, "mma 32x32, K split met by poll"},
      {"streamed_split_arrival", contract(64, 1504, 2048, DType::kF16), "poll=0", "mma 32x32, K split met by arrival"},
      {"tiled_split_poll", contract(128, 1472, 1024), nullptr, "mma_tiled 64x64, K split met by poll"},
      {"tiled_split_arrival", contract(128, 1472, 1024), "poll=0", "mma_tiled 64x64, K split met by arrival"},
      {"fp8_out_band", fp8_out, nullptr, "mma"},  // a band's 8 workgroups of 16 columns on 8 XCDs
  };
}

struct Order {
  const char *name;
  WaveOrder order;
  uint64_t seed;
  bool xcd;
};

// gtest prints parameters with these (instead of a byte dump).
void PrintTo(const Meeting &m, std::ostream *os) { *os << m.name; }
void PrintTo(const Order &o, std::ostream *os) { *os << o.name; }

class MeetingOrders : public ::testing::TestWithParam<std::tuple<Meeting, Order>> {};

TEST_P(MeetingOrders, MatchReference) {
  const auto &[meeting, order] = GetParam();
  TuningScope tuning(meeting.tuning);
  EmulatedGpu gpu(Target::kGfx950);
  GateRunRequest r;
  r.contract = meeting.contract;
  r.seed = 77;
  r.options.order = order.order;
  r.options.seed = order.seed;
  r.options.cross_xcd = order.xcd;
  auto report = run_gate(gpu, r);
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->form.rfind(meeting.form, 0), 0u) << report->form;
  EXPECT_TRUE(report->passed()) << report->mismatches << " mismatches of " << report->checked << ": "
                                << (report->first_mismatches.empty() ? "" : report->first_mismatches[0]);
}

INSTANTIATE_TEST_SUITE_P(
    Gfx950, MeetingOrders,
    ::testing::Combine(::testing::ValuesIn(meetings()),
                       ::testing::Values(Order{"rr", WaveOrder::kRoundRobin, 1, false},
                                         Order{"reverse", WaveOrder::kReverse, 1, false},
                                         Order{"random3", WaveOrder::kRandom, 3, false},
                                         Order{"xcd_rr", WaveOrder::kRoundRobin, 1, true},
                                         Order{"xcd_random11", WaveOrder::kRandom, 11, true})),
    [](const auto &info) {
      return std::string(std::get<0>(info.param).name) + "_" + std::get<1>(info.param).name;
    });

// A meeting's module state (the K split's workspace, which reads zero
// between launches; the fp8 out's group counters) is left ready for the
// next launch: three launches of one loaded module, fresh inputs each time.
TEST(ModuleState, MeetingsLeaveTheirStateForTheNextLaunch) {
  for (const Meeting &m : meetings()) {
    SCOPED_TRACE(m.name);
    TuningScope tuning(m.tuning);
    EmulatedGpu gpu(Target::kGfx950);
    GateRunRequest r;
    r.contract = m.contract;
    r.launches = 3;
    r.options.cross_xcd = true;
    auto report = run_gate(gpu, r);
    ASSERT_TRUE(report.ok()) << report.status().message();
    EXPECT_EQ(report->launches.size(), 3u);
    EXPECT_TRUE(report->passed()) << report->mismatches << " mismatches of " << report->checked << ": "
                                  << (report->first_mismatches.empty() ? "" : report->first_mismatches[0]);
  }
}

// ---- seeded defects ----

// Rewrites every instruction of `kb` for which `edit` returns true (it may
// change the bytes it is given), then checks that the disassembly now says
// what `expect` says of at least one instruction.
int seed_defect(KernelBinary &kb, const std::function<bool(const CodeInstruction &, uint8_t *)> &edit,
                const std::function<bool(const std::string &)> &expect) {
  auto insts = disassemble_code_object(kb.code);
  EXPECT_TRUE(insts.ok()) << insts.status().message();
  if (!insts.ok()) return 0;
  int edited = 0;
  for (const CodeInstruction &in : *insts)
    if (edit(in, kb.code.data() + in.file_offset)) ++edited;
  auto after = disassemble_code_object(kb.code);
  EXPECT_TRUE(after.ok());
  bool seen = false;
  for (const CodeInstruction &in : *after) seen = seen || expect(in.text);
  EXPECT_TRUE(seen) << "the seeded defect is not in the code object";
  return edited;
}

bool starts(const std::string &s, const char *prefix) { return s.rfind(prefix, 0) == 0; }

constexpr uint32_t kSNop = 0xbf800000u;  // s_nop 0 (SOPP)

void nop_out(const CodeInstruction &in, uint8_t *bytes) {
  for (uint32_t i = 0; i < in.size; i += 4) std::memcpy(bytes + i, &kSNop, 4);
}

StatusOr<GateRunReport> run_seeded(const KernelBinary &kb, const Contract &c, RunOptions options = {},
                                   int launches = 1) {
  EmulatedGpu gpu(c.target);
  GateRunRequest r;
  r.contract = c;
  r.through_runtime = false;
  r.binary = &kb;
  r.seed = 5;
  r.options = options;
  r.launches = launches;
  return run_gate(gpu, r);
}

TEST(SeededDefects, WaitcntRemovedIsReadBeforeItsWait) {
  auto kb = compile_cached(contract(1, 1536, 7168));
  ASSERT_TRUE(kb.ok()) << kb.status().message();
  int removed = 0;
  seed_defect(
      *kb,
      [&](const CodeInstruction &in, uint8_t *b) {
        if (removed || !starts(in.text, "s_waitcnt vmcnt(")) return false;
        nop_out(in, b);
        return ++removed > 0;
      },
      [](const std::string &t) { return t == "s_nop 0"; });
  ASSERT_EQ(removed, 1);
  auto report = run_seeded(*kb, contract(1, 1536, 7168));
  ASSERT_FALSE(report.ok()) << "the missing wait was not caught";
  EXPECT_NE(report.status().message().find("before the s_waitcnt vmcnt that retires the load into it"),
            std::string::npos)
      << report.status().message();
}

TEST(SeededDefects, UnimplementedInstructionIsNamed) {
  // A v_mov_b32_e32 turned into v_sin_f32_e32 (VOP1 opcode field, bits
  // 16:9), which no gatejit kernel uses and the emulator does not implement.
  auto kb = compile_cached(contract(1, 1536, 7168));
  ASSERT_TRUE(kb.ok()) << kb.status().message();
  int changed = 0;
  seed_defect(
      *kb,
      [&](const CodeInstruction &in, uint8_t *b) {
        if (changed || !starts(in.text, "v_mov_b32_e32") || in.size != 4) return false;
        uint32_t w;
        std::memcpy(&w, b, 4);
        w = (w & ~(0xffu << 9)) | (0x29u << 9);
        std::memcpy(b, &w, 4);
        return ++changed > 0;
      },
      [](const std::string &t) { return starts(t, "v_sin_f32_e32"); });
  ASSERT_EQ(changed, 1);
  auto report = run_seeded(*kb, contract(1, 1536, 7168));
  ASSERT_FALSE(report.ok()) << "the unimplemented instruction ran";
  EXPECT_NE(report.status().message().find("instruction not implemented by the emulator: v_sin_f32_e32 (v_sin_f32_e32 v"),
            std::string::npos)
      << report.status().message();
}

TEST(SeededDefects, BarrierRemovedIsAnLdsRace) {
  auto kb = compile_cached(contract(1, 1536, 7168));
  ASSERT_TRUE(kb.ok()) << kb.status().message();
  const int removed = seed_defect(
      *kb,
      [](const CodeInstruction &in, uint8_t *b) {
        if (in.text != "s_barrier") return false;
        nop_out(in, b);
        return true;
      },
      [](const std::string &t) { return t == "s_nop 0"; });
  ASSERT_GE(removed, 1);
  auto report = run_seeded(*kb, contract(1, 1536, 7168));
  ASSERT_FALSE(report.ok()) << "the missing barrier was not caught";
  EXPECT_NE(report.status().message().find("LDS race"), std::string::npos) << report.status().message();
  EXPECT_NE(report.status().message().find("with no s_barrier between"), std::string::npos);
}

TEST(SeededDefects, DppControlChangedGivesWrongSums) {
  auto kb = compile_cached(contract(1, 1536, 7168));
  ASSERT_TRUE(kb.ok()) << kb.status().message();
  // quad_perm:[1,0,3,2] (0xb1) -> quad_perm:[0,1,2,3] (0xe4): the DPP word's
  // dpp_ctrl field, bits 16:8 of the instruction's second dword.
  const int changed = seed_defect(
      *kb,
      [](const CodeInstruction &in, uint8_t *b) {
        if (in.text.find("quad_perm:[1,0,3,2]") == std::string::npos || in.size != 8) return false;
        uint32_t dpp;
        std::memcpy(&dpp, b + 4, 4);
        dpp = (dpp & ~0x1ff00u) | (0xe4u << 8);
        std::memcpy(b + 4, &dpp, 4);
        return true;
      },
      [](const std::string &t) { return t.find("quad_perm:[0,1,2,3]") != std::string::npos; });
  ASSERT_GE(changed, 1);
  auto report = run_seeded(*kb, contract(1, 1536, 7168));
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_GT(report->mismatches, 0) << "the changed DPP control was not caught";
  ASSERT_FALSE(report->first_mismatches.empty());
  EXPECT_NE(report->first_mismatches[0].find("out["), std::string::npos) << report->first_mismatches[0];
}

TEST(SeededDefects, MfmaLaneMapsCrossedGiveWrongTiles) {
  // A and B swapped in every MFMA: each 16 x 16 product comes out
  // transposed, what a template with its hidden and weight lane maps
  // crossed computes.
  const Contract c = contract(32, 1536, 2048);
  auto kb = compile_cached(c);
  ASSERT_TRUE(kb.ok()) << kb.status().message();
  const int swapped = seed_defect(
      *kb,
      [](const CodeInstruction &in, uint8_t *b) {
        if (!starts(in.text, "v_mfma_f32_16x16x32")) return false;
        uint32_t d1;
        std::memcpy(&d1, b + 4, 4);
        const uint32_t a = d1 & 0x1ff, bb = (d1 >> 9) & 0x1ff;
        d1 = (d1 & ~0x3ffffu) | bb | a << 9;
        std::memcpy(b + 4, &d1, 4);
        return true;
      },
      [](const std::string &t) { return starts(t, "v_mfma_f32_16x16x32"); });
  ASSERT_GE(swapped, 1);
  auto report = run_seeded(*kb, c);
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_GT(report->mismatches, c.m * c.n / 2) << "the crossed lane maps were not caught";
}

TEST(SeededDefects, SplitMeetingWithoutReleaseIsAStaleRead) {
  TuningScope tuning("poll=0");  // the K split met by arrival: plain stores, a release, an atomic
  const Contract c = contract(64, 1504, 2048);  // a tile's splits on different XCDs
  auto kb = compile_cached(c);
  ASSERT_TRUE(kb.ok()) << kb.status().message();
  ASSERT_EQ(kernel_form(*kb), "mma 32x32, K split met by arrival");
  RunOptions xcd;
  xcd.cross_xcd = true;
  {
    auto intact = run_seeded(*kb, c, xcd);  // the meeting as compiled passes in this mode
    ASSERT_TRUE(intact.ok()) << intact.status().message();
    EXPECT_TRUE(intact->passed());
  }
  const int removed = seed_defect(
      *kb,
      [](const CodeInstruction &in, uint8_t *b) {
        if (!starts(in.text, "buffer_wbl2")) return false;
        nop_out(in, b);
        return true;
      },
      [](const std::string &t) { return !starts(t, "buffer_wbl2"); });
  ASSERT_GE(removed, 1);
  auto report = run_seeded(*kb, c, xcd);
  ASSERT_FALSE(report.ok()) << "the missing release was not caught";
  EXPECT_NE(report.status().message().find("cross-XCD stale read"), std::string::npos) << report.status().message();
  EXPECT_NE(report.status().message().find("has not released"), std::string::npos) << report.status().message();
}

TEST(SeededDefects, WorkspaceLeftDirtySpoilsTheNextLaunch) {
  // The K split met by poll, with the last split's zeroing of the words it
  // read removed: the next launch's poll finds the last launch's partials.
  const Contract c = contract(64, 1536, 2048);
  auto kb = compile_cached(c);
  ASSERT_TRUE(kb.ok()) << kb.status().message();
  ASSERT_EQ(kernel_form(*kb), "mma 32x32, K split met by poll");
  const int removed = seed_defect(
      *kb,
      [](const CodeInstruction &in, uint8_t *b) {
        if (!starts(in.text, "global_store_dword v[22:23], v34")) return false;
        nop_out(in, b);
        return true;
      },
      [](const std::string &t) { return t == "s_nop 0"; });
  ASSERT_GE(removed, 1);
  RunOptions last_split_first;  // the polling split takes its turns before the ones it waits for
  last_split_first.order = WaveOrder::kReverse;
  auto report = run_seeded(*kb, c, last_split_first, 2);
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_GT(report->mismatches, 0) << "the workspace left dirty was not caught";
}

TEST(SeededDefects, MeetingThatNeverCompletesIsAHang) {
  // The K split met by poll, with the partials' stores removed: the last
  // split polls forever.
  const Contract c = contract(64, 1536, 2048);
  auto kb = compile_cached(c);
  ASSERT_TRUE(kb.ok()) << kb.status().message();
  ASSERT_EQ(kernel_form(*kb), "mma 32x32, K split met by poll");
  const int removed = seed_defect(
      *kb,
      [](const CodeInstruction &in, uint8_t *b) {
        if (!starts(in.text, "global_store_dword v[0:1]") || in.text.find(" sc1") == std::string::npos) return false;
        nop_out(in, b);
        return true;
      },
      [](const std::string &t) { return t == "s_nop 0"; });
  ASSERT_GE(removed, 1);
  RunOptions options;
  options.max_wave_instructions = 2'000'000;
  auto report = run_seeded(*kb, c, options);
  ASSERT_FALSE(report.ok()) << "the endless poll was not caught";
  const std::string &m = report.status().message();
  EXPECT_NE(m.find("hang:"), std::string::npos) << m;
  EXPECT_NE(m.find("loops at PC 0x"), std::string::npos) << m;
  EXPECT_NE(m.find("global_load_dword"), std::string::npos) << "the hang names the poll: " << m;
}

}  // namespace
}  // namespace gatejit::emulator
