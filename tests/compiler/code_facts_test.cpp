// The loop replay of code_facts.cpp on small PTX programs written for each
// rule (lit-style: the input is in the test), and on the real gfx950 code
// objects whose waits the gfx950 gates read.
#include <gtest/gtest.h>

#include <string>

#include "code_facts.h"
#include "compiler_test_support.h"
#include "gatejit/compiler/compiler.h"

namespace gatejit::compiler {
namespace {

CodeFacts ptx_facts_of(const std::string &body) {
  const std::string text = ".version 8.0\n.target sm_90a\n.visible .entry k(\n)\n{\n" + body + "}\n";
  auto f = read_code_facts(std::span(reinterpret_cast<const uint8_t *>(text.data()), text.size()), "");
  EXPECT_TRUE(f.ok()) << f.status().message();
  return f.ok() ? *f : CodeFacts{};
}

TEST(CodeFacts, LoadsIssuedTogetherAreOneRoundTrip) {
  const CodeFacts f = ptx_facts_of(R"(
$L__BB0_1:
	ld.global.nc.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1];
	ld.global.nc.v4.u32 {%r5, %r6, %r7, %r8}, [%rd2];
	ld.global.nc.v4.u32 {%r9, %r10, %r11, %r12}, [%rd3];
	add.s32 %r20, %r12, %r8;
	add.s32 %r21, %r20, %r1;
	@%p1 bra $L__BB0_1;
	ret;
)");
  EXPECT_TRUE(f.loop_found);
  EXPECT_EQ(f.loop_global_loads, 3);
  EXPECT_EQ(f.loop_load_bytes, 48);
  EXPECT_EQ(f.loop_round_trips, 1);  // the first use reads the newest load: all three have returned
  EXPECT_EQ(f.loop_single_load_waits, 0);
  EXPECT_DOUBLE_EQ(f.bytes_in_flight_at_wait, 48);
}

// The poll meeting (split_poll.mlir, v93) on PTX: its relaxed device-scope
// stores end the straight-line main region, as the arrival's atomic does,
// and its relaxed loads are global loads of the tail (one round trip, with
// the attn load issued beside them). Before, `ld.relaxed` was no load at
// all and the tail counted only the attn load.
TEST(CodeFacts, PollMeetingLoadsAreTheTail) {
  const CodeFacts f = ptx_facts_of(R"(
	ld.global.nc.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1];
	ld.global.nc.v4.u32 {%r5, %r6, %r7, %r8}, [%rd2];
	add.s32 %r9, %r1, %r5;
	st.relaxed.gpu.global.b32 [%rd3], %r9;
	ld.relaxed.gpu.global.b32 %r10, [%rd4];
	ld.relaxed.gpu.global.b32 %r11, [%rd5];
	add.s32 %r12, %r10, %r11;
	st.global.b32 [%rd6], %r12;
	ret;
)");
  EXPECT_FALSE(f.loop_found);
  EXPECT_EQ(f.tail_round_trips, 1);
}

// Straight-line code: a wide load issued after the last product feeds no
// product. It is the epilogue's (attn loaded after the block's reduction),
// a round trip of the tail; before v99 it ended the main region, and its
// round trip went uncounted. The same load issued before the products is
// the stream's.
TEST(CodeFacts, WideLoadAfterTheLastProductIsTheTail) {
  // The products of both PTX forms: the fragment mma and the warpgroup's.
  for (const std::string product :
       {"mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, "
        "{%f1, %f2, %f3, %f4};",
        "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%f1, %f2, %f3, %f4}, %rd8, %rd9, 1, 1, 1, 0, 0;"}) {
    SCOPED_TRACE(product.substr(0, product.find(' ')));
    // (The operands staged in shared memory first, as the warpgroup's
    // products read them there: the stream's round trip ends before them.)
    const std::string stream = "\tld.global.nc.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1];\n"
                               "\tld.global.nc.v4.u32 {%r5, %r6, %r7, %r8}, [%rd2];\n"
                               "\tst.shared.v4.u32 [%rd10], {%r1, %r2, %r3, %r4};\n"
                               "\tst.shared.v4.u32 [%rd11], {%r5, %r6, %r7, %r8};\n\tbar.sync 0;\n\t" +
                               product + "\n\tst.shared.f32 [%rd7], %f1;\n\tbar.sync 0;\n";
    const std::string epilogue_load = "\tld.global.nc.v4.u32 {%r9, %r10, %r11, %r12}, [%rd3];\n";
    const std::string finish = "\tadd.s32 %r13, %r9, %r12;\n\tst.global.b32 [%rd6], %r13;\n\tret;\n";
    const CodeFacts after = ptx_facts_of(stream + epilogue_load + finish);
    EXPECT_FALSE(after.loop_found);
    EXPECT_EQ(after.tail_round_trips, 1);
    const CodeFacts before = ptx_facts_of(epilogue_load + stream + finish);
    EXPECT_EQ(before.tail_round_trips, 0);
  }
}

// The assembler issues a load before an earlier load's use when its address
// does not come from loaded data: one round trip.
TEST(CodeFacts, IndependentLoadsRideOneRoundTrip) {
  const CodeFacts f = ptx_facts_of(R"(
$L__BB0_1:
	ld.global.nc.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1];
	add.s32 %r20, %r1, %r2;
	ld.global.nc.v4.u32 {%r5, %r6, %r7, %r8}, [%rd2];
	add.s32 %r21, %r20, %r5;
	@%p1 bra $L__BB0_1;
	ret;
)");
  EXPECT_EQ(f.loop_round_trips, 1);
  EXPECT_EQ(f.loop_single_load_waits, 1);  // the first use finds one load issued
}

// A load whose address is computed from the previous load's data waits a
// round trip of its own: a chain of single waits.
TEST(CodeFacts, DependentLoadsAreAChainOfSingleWaits) {
  const CodeFacts f = ptx_facts_of(R"(
$L__BB0_1:
	ld.global.nc.u32 %r1, [%rd1];
	cvt.u64.u32 %rd2, %r1;
	add.s64 %rd3, %rd4, %rd2;
	ld.global.nc.v4.u32 {%r5, %r6, %r7, %r8}, [%rd3];
	add.s32 %r21, %r5, %r6;
	@%p1 bra $L__BB0_1;
	ret;
)");
  EXPECT_EQ(f.loop_round_trips, 2);
  EXPECT_EQ(f.loop_single_load_waits, 2);
  EXPECT_DOUBLE_EQ(f.bytes_in_flight_at_wait, 10);  // 4 and 16 bytes, one at a time
}

TEST(CodeFacts, EpilogueRoundTripsAndNarrowAccessesAreCounted) {
  const CodeFacts f = ptx_facts_of(R"(
$L__BB0_1:
	ld.global.nc.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1];
	add.s32 %r20, %r1, %r2;
	@%p1 bra $L__BB0_1;
	ld.global.nc.u16 %rs1, [%rd5];
	cvt.f32.bf16 %f1, %rs1;
	st.global.b16 [%rd6], %rs2;
	ld.global.nc.u16 %rs3, [%rd7];
	cvt.f32.bf16 %f2, %rs3;
	ret;
)");
  EXPECT_EQ(f.tail_round_trips, 2);
  EXPECT_EQ(f.narrow_global_loads, 2);
  EXPECT_EQ(f.narrow_global_stores, 1);
}

TEST(CodeFacts, CopyGroupsRetireAtTheirWaits) {
  const CodeFacts f = ptx_facts_of(R"(
$L__BB0_1:
	cp.async.cg.shared.global [%r1], [%rd1], 16;
	cp.async.cg.shared.global [%r2], [%rd2], 16;
	cp.async.commit_group;
	cp.async.wait_group 2;
	bar.sync 0;
	@%p1 bra $L__BB0_1;
	ret;
)");
  EXPECT_EQ(f.loop_async_copies, 2);
  // Three groups of 32 bytes outstanding at the wait in the steady state
  // (two carried from earlier iterations); the one retired was issued two
  // iterations back, so the chain of round trips advances once every three
  // iterations.
  EXPECT_DOUBLE_EQ(f.loop_round_trips, 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(f.bytes_in_flight_at_wait, 96);
}

// v95: a pipeline peeled after the loop (mma_tiled's DRAIN: the last
// ring's copies, waits and reads) streams on, so its waits up to the one
// that retires its last copy are not the tail's; what follows is (here one
// load). A loop that leaves its copies in flight and waits for them after
// it (REFILL_ALWAYS's repeats) issues none there: that wait is the tail's.
TEST(CodeFacts, PeeledPipelineStreamsOnButRepeatsLeftInFlightAreTheTail) {
  const std::string loop = R"(
$L__BB0_1:
	cp.async.cg.shared.global [%r1], [%rd1], 16;
	cp.async.commit_group;
	cp.async.wait_group 2;
	bar.sync 0;
	ld.shared.v4.u32 {%r10, %r11, %r12, %r13}, [%r3];
	@%p1 bra $L__BB0_1;
)";
  const CodeFacts peeled = ptx_facts_of(loop + R"(
	cp.async.cg.shared.global [%r1], [%rd1], 16;
	cp.async.commit_group;
	cp.async.wait_group 1;
	bar.sync 0;
	ld.shared.v4.u32 {%r10, %r11, %r12, %r13}, [%r3];
	cp.async.wait_group 0;
	bar.sync 0;
	ld.shared.v4.u32 {%r10, %r11, %r12, %r13}, [%r4];
	ld.global.nc.v4.u32 {%r20, %r21, %r22, %r23}, [%rd5];
	add.s32 %r30, %r20, %r10;
	ret;
)");
  EXPECT_EQ(peeled.tail_round_trips, 1);  // the global load alone
  const CodeFacts repeats = ptx_facts_of(loop + R"(
	cp.async.wait_group 0;
	bar.sync 0;
	ld.global.nc.v4.u32 {%r20, %r21, %r22, %r23}, [%rd5];
	add.s32 %r30, %r20, %r10;
	ret;
)");
  EXPECT_EQ(repeats.tail_round_trips, 2);  // the copies left in flight, then the load
  // A load the peeled pipeline waits for among its own copies is the
  // tail's, not the stream's.
  const CodeFacts peeled_with_load = ptx_facts_of(loop + R"(
	cp.async.cg.shared.global [%r1], [%rd1], 16;
	cp.async.commit_group;
	ld.global.nc.v4.u32 {%r20, %r21, %r22, %r23}, [%rd5];
	add.s32 %r30, %r20, %r10;
	cp.async.wait_group 0;
	bar.sync 0;
	ld.shared.v4.u32 {%r10, %r11, %r12, %r13}, [%r4];
	ret;
)");
  EXPECT_EQ(peeled_with_load.tail_round_trips, 1);
  // Copies the tail issues but never waits for (a TMA barrier's wait keeps
  // one in flight) make no peeled pipeline: the wait for the loop's copies
  // stays the tail's.
  const CodeFacts never_retired = ptx_facts_of(loop + R"(
	cp.async.wait_group 0;
	bar.sync 0;
	cp.async.cg.shared.global [%r1], [%rd1], 16;
	cp.async.commit_group;
	ret;
)");
  EXPECT_EQ(never_retired.tail_round_trips, 1);
}

// The template marks its element-wise fallback (fallback_mark_*.mlir):
// what only that path runs is left out of the tail, so the tail is the
// staged path's (one round trip for attn here); the blocks both paths share
// stay. Unmarked, the fallback's chain of 2-byte loads counts as well.
TEST(CodeFacts, MarkedFallbackIsLeftOutOfTheTail) {
  const std::string head = R"(
$L__BB0_1:
	ld.global.nc.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1];
	add.s32 %r20, %r1, %r2;
	@%p1 bra $L__BB0_1;
	@%p2 bra $L__BB0_3;
)";
  const std::string fallback = R"(
	ld.global.nc.u16 %rs1, [%rd5];
	cvt.f32.bf16 %f1, %rs1;
	st.global.b16 [%rd6], %rs2;
	ld.global.nc.u16 %rs3, [%rd7];
	cvt.f32.bf16 %f2, %rs3;
	st.global.b16 [%rd8], %rs4;
	bra.uni $L__BB0_4;
$L__BB0_3:
	ld.global.nc.v4.u32 {%r5, %r6, %r7, %r8}, [%rd9];
	add.s32 %r21, %r5, %r8;
	st.global.v4.u32 [%rd10], {%r5, %r6, %r7, %r21};
$L__BB0_4:
	ld.global.nc.u32 %r30, [%rd11];
	add.s32 %r31, %r30, 1;
	ret;
)";
  const CodeFacts marked = ptx_facts_of(head + "\t// begin inline asm\n\t// gatejit.element_wise_fallback\n\t// end inline asm\n" + fallback);
  const CodeFacts unmarked = ptx_facts_of(head + fallback);
  EXPECT_EQ(marked.tail_round_trips, 2);    // the staged path's attn, then the shared block's load
  EXPECT_EQ(unmarked.tail_round_trips, 4);  // and the fallback's two 2-byte loads, one after the other
  // The gate still sees the fallback's narrow accesses.
  EXPECT_EQ(marked.narrow_global_loads, 2);
  EXPECT_EQ(marked.narrow_global_stores, 2);
}

Contract gfx950(int64_t m) {
  Contract c;
  c.target = Target::kGfx950;
  c.m = m;
  c.n = 1536;
  c.k = 7168;
  return c;
}

// The gfx950 gemv's waits read from its ISA. Scheduled for the one wave per
// SIMD its grid places (v38), the M = 16 kernel waits once an iteration
// with several loads outstanding; scheduled for 8 waves (no
// "amdgpu-waves-per-eu"), LLVM waited for each hidden vector alone (issue
// 15's reading). The M = 1 seed structure issues its loads together.
TEST(CodeFacts, Gfx950GemvWaitsAreReadFromTheIsa) {
  auto seed = compile(gfx950(1));
  ASSERT_TRUE(seed.ok()) << seed.status().message();
  const auto &s = seed->report["code_facts"];
  EXPECT_EQ(s["format"], "hsaco");
  EXPECT_EQ(s["loop_single_load_waits"].get<double>(), 0);
  EXPECT_GE(s["max_loads_in_flight"].get<int64_t>(), 8);  // UNROLL 8 steps of weight and hidden
  Contract gemv16 = gfx950(16);
  gemv16.template_kind = TemplateKind::kGemv;  // N = 1536 M = 16 takes the mma's thin grid rows since v84
  auto m16 = compile(gemv16);
  ASSERT_TRUE(m16.ok()) << m16.status().message();
  const auto &f = m16->report["code_facts"];
  EXPECT_TRUE(f["loop_found"].get<bool>());
  EXPECT_EQ(f["loop_single_load_waits"].get<double>(), 0) << f.dump();
  EXPECT_GE(f["max_loads_in_flight"].get<int64_t>(), 12) << f.dump();
  // The epilogue in 8-byte pieces (v47): element accesses that LLVM widens
  // (gfx9's unaligned access mode), none left 2 bytes wide.
  EXPECT_EQ(f["narrow_global_loads"].get<int64_t>(), 0) << f.dump();
  EXPECT_EQ(f["narrow_global_stores"].get<int64_t>(), 0) << f.dump();
  // attn loaded before the main loop (v51; v39-v50: after the sums, its
  // loads issued together, one round trip): the epilogue waits on none.
  EXPECT_EQ(f["tail_round_trips"].get<int64_t>(), 0) << f.dump();
  EXPECT_EQ(s["tail_round_trips"].get<int64_t>(), 0) << s.dump();
}


// The thin grid rows (v83) at gfx950 N = 1536 M = 32 schedule for 8 waves
// a SIMD and load attn in the epilogue, after the block's reduction: one
// round trip after the products, which the replay read as the stream's
// until v99. Loaded before the K loop (attn=2), it rides the stream.
TEST(CodeFacts, Gfx950ThinRowsEpilogueAttnIsARoundTrip) {
  auto thin = compile(gfx950(32));
  ASSERT_TRUE(thin.ok()) << thin.status().message();
  EXPECT_EQ(thin->report["template_file"], "mma");
  EXPECT_EQ(thin->report["grid"][1].get<int64_t>(), 3);  // the thin rows
  EXPECT_EQ(thin->report["code_facts"]["loop_found"].get<bool>(), false);
  EXPECT_EQ(thin->report["code_facts"]["tail_round_trips"].get<int64_t>(), 1) << thin->report["code_facts"].dump();
  testing_support::ScopedMmaTuning early{"attn=2"};
  auto early_attn = compile(gfx950(32));
  ASSERT_TRUE(early_attn.ok()) << early_attn.status().message();
  EXPECT_EQ(early_attn->report["code_facts"]["tail_round_trips"].get<int64_t>(), 0)
      << early_attn->report["code_facts"].dump();
}

// The mma form's epilogue: a wave runs only the accumulator elements it
// finishes (OWN slots), their attn loads issued together, so the replay sees
// one round trip after the K loop (v45; 16 branches of one load each, of
// which a wave took one, read as 16). With the gfx950 K split (M = 17-256:
// grid z 7) the meeting adds the partials' loads, issued together (at most
// one load LLVM issues after the first wait). Since v66 those loads are the
// tail's in straight-line code too (before, the last 16-byte load ended the
// main region, so they hid in it); the release and arrival waits are the
// meeting's own round trips (perf_model.cpp), not the tail's.
TEST(CodeFacts, MmaEpilogueIsOneRoundTripPerWave) {
  Contract sm90 = gfx950(1);
  sm90.target = Target::kSm90;
  sm90.template_kind = TemplateKind::kMma;  // the loader takes the gemv at M = 1 (v51)
  Contract wide_n = gfx950(32);  // N = 12288: the 4-wave structure, no K split, a piece a thread
  wide_n.n = 12288;
  for (const Contract &c : {sm90, wide_n}) {
    auto k = compile(c);
    ASSERT_TRUE(k.ok()) << k.status().message();
    EXPECT_EQ(k->report["template_file"], "mma") << target_name(c.target);
    EXPECT_EQ(k->report["grid"][2].get<int64_t>(), 1);
    EXPECT_LE(k->report["code_facts"]["tail_round_trips"].get<int64_t>(), 1) << k->report["code_facts"].dump();
  }
  // (M = 17-32 take thin grid rows without a split since v83: the split
  // they had is asked for.)
  testing_support::ScopedMmaTuning old_split{"rt=2,mtiles=2,splits=7,mstride=32"};
  for (int64_t m : {17, 32}) {
    auto split = compile(gfx950(m));
    ASSERT_TRUE(split.ok()) << split.status().message();
    EXPECT_GT(split->report["grid"][2].get<int64_t>(), 1);
    EXPECT_LE(split->report["code_facts"]["tail_round_trips"].get<int64_t>(), 2) << split->report["code_facts"].dump();
  }
}

// The tiled form's element-wise fallback carries its mark where the code
// facts need it, on both targets, and only beside a staged path: the tail
// is the staged path's (gfx950 N = 1536 M = 128: the K loop's last stages
// and the partials, attn loaded before the K loop; sm_90 M = 64, whose
// wgmma tiles load attn before the loop too: the partials). With the mark taken out of the same code object (s_nop
// 15 -> s_nop 0; the PTX comment deleted) the fallback's attn loads and
// element stores count again (v90; the code before the mark: 4 and 2).
TEST(CodeFacts, TiledFallbackIsMarkedOutOfTheTail) {
  struct Case {
    Target target;
    int64_t n, k, m, marked, unmarked, marks;
  };
  // N = 1003 (not whole 8-element pieces: EPI_STAGED 0): the element-wise
  // epilogue is the only one, so it carries no mark and the tail is its own
  // (gfx950: 4 with the arrival's atomic, 3 with v94's poll meeting).
  // gfx950 N = 1536 M = 128: 1 / 2 since v95's drain (no wait for repeated
  // copies when the K loop ends; its 11-tile splits drain, N = 1003's 2-tile
  // ones keep the repeats).
  for (const Case &k : {Case{Target::kGfx950, 1536, 7168, 128, 1, 2, 1}, Case{Target::kSm90, 1536, 7168, 64, 1, 2, 1},
                        Case{Target::kGfx950, 1003, 2048, 256, 3, 3, 0}, Case{Target::kSm90, 1003, 2048, 256, 2, 2, 0}}) {
    SCOPED_TRACE("n=" + std::to_string(k.n));
    Contract c = gfx950(k.m);
    c.target = k.target;
    c.n = k.n;
    c.k = k.k;
    auto kernel = compile(c);
    ASSERT_TRUE(kernel.ok()) << kernel.status().message();
    ASSERT_EQ(kernel->report["template_file"], "mma_tiled") << target_name(k.target);
    EXPECT_EQ(kernel->report["code_facts"]["tail_round_trips"].get<int64_t>(), k.marked) << target_name(k.target);
    std::vector<uint8_t> code = kernel->binary.code;
    size_t marks = 0;
    if (k.target == Target::kGfx950) {
      const uint8_t mark[4] = {0x0f, 0x00, 0x80, 0xbf};  // s_nop 15, little-endian
      for (size_t i = 0; i + 4 <= code.size(); i += 4)
        if (std::equal(mark, mark + 4, code.begin() + i)) code[i] = 0, code[i + 1] = 0, ++marks;
    } else {
      std::string text(code.begin(), code.end());
      const std::string mark = "// gatejit.element_wise_fallback";
      for (size_t at; (at = text.find(mark)) != std::string::npos; ++marks) text.erase(at, mark.size());
      code.assign(text.begin(), text.end());
    }
    EXPECT_EQ(marks, size_t(k.marks)) << target_name(k.target);
    auto unmarked = read_code_facts(code, kernel->report.value("cpu", std::string()));
    ASSERT_TRUE(unmarked.ok()) << unmarked.status().message();
    EXPECT_EQ(unmarked->tail_round_trips, k.unmarked) << target_name(k.target);
  }
}

}  // namespace
}  // namespace gatejit::compiler
