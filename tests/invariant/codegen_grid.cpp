#include "codegen_grid.h"

#include <initializer_list>

namespace gatejit::invariant {
namespace {

Contract base(Target t, int64_t m, int64_t n, int64_t k) {
  Contract c;
  c.target = t;
  c.m = m;
  c.n = n;
  c.k = k;
  return c;
}

void set_dtype(Contract &c, DType d) { c.dtype_hidden = c.dtype_weight = c.dtype_attn = c.dtype_out = d; }

}  // namespace

std::vector<GridCase> codegen_grid() {
  std::vector<GridCase> g;
  auto add = [&](const Contract &c, const char *tuning = "") { g.push_back({c, tuning}); };

  // Every form along M: gemv, thin rows, streamed mma with and without a K
  // split (poll and arrival), tiled 64x64 / 128x128 / persistent.
  const std::initializer_list<int64_t> every_m = {1,  2,  4,  8,  15,  16,  17,  24,   32,   40,  48,
                                                  64, 65, 96, 97, 128, 256, 512, 1024, 2048, 4096};
  for (Target t : {Target::kGfx950, Target::kSm90})
    for (int64_t n : {1536, 3072, 12288})
      for (int64_t m : every_m) add(base(t, m, n, 7168));
  for (int64_t m : {1, 8, 16, 32, 64, 128, 512}) add(base(Target::kGfx942, m, 1536, 7168));
  // Shorter K: splits that divide the K tiles differently, and N = 1024 / 2048
  // where the thin rows keep their grid.
  for (Target t : {Target::kGfx950, Target::kSm90})
    for (auto [n, k] : {std::pair<int64_t, int64_t>{1024, 2048}, {2048, 7168}, {1536, 2048}, {4096, 4096}})
      for (int64_t m : {1, 16, 32, 64, 128, 512}) add(base(t, m, n, k));

  // Dtypes, activations and roundings over the forms.
  const std::initializer_list<int64_t> some_m = {1, 8, 32, 64, 128, 512};
  for (Target t : {Target::kGfx950, Target::kSm90})
    for (int64_t m : some_m) {
      Contract a = base(t, m, 1536, 7168);
      set_dtype(a, DType::kF16);
      a.act = Activation::kSilu;
      a.rounding = Rounding::kFused;
      add(a);
      Contract b = base(t, m, 1536, 7168);
      b.rounding = Rounding::kFused;
      add(b);
      Contract s = base(t, m, 3072, 4096);
      s.act = Activation::kSilu;
      add(s);
    }

  // fp8 weights (both scale kinds) and fp8 outs.
  for (Target t : {Target::kGfx950, Target::kSm90})
    for (int64_t m : {1, 8, 16, 64, 512}) {
      for (WeightScale ws : {WeightScale::kPerChannel, WeightScale::kBlock128}) {
        Contract c = base(t, m, 1536, 7168);
        c.dtype_weight = DType::kFP8E4M3;
        c.weight_scale = ws;
        add(c);
      }
      Contract o = base(t, m, 1536, 7168);
      o.dtype_out = DType::kFP8E4M3;
      o.out_scale = OutScale::kPerTokenGroup128;
      add(o);
      Contract both = o;
      both.dtype_weight = DType::kFP8E4M3;
      both.weight_scale = WeightScale::kBlock128;
      add(both);
    }

  // Dynamic M.
  for (Target t : {Target::kGfx950, Target::kSm90, Target::kGfx942})
    for (int64_t m_max : {4, 16, 64, 256, 2048}) {
      Contract c = base(t, 0, 1536, 7168);
      c.m_dynamic = true;
      c.m_max = m_max;
      add(c);
    }

  // Strided and padded rows, narrower alignment, odd shapes.
  for (Target t : {Target::kGfx950, Target::kSm90})
    for (int64_t m : {1, 16, 64, 512}) {
      Contract c = base(t, m, 1536, 7168);
      c.ld_hidden = c.ld_weight = 7168 + 64;
      c.ld_attn = c.ld_out = 1536 + 32;
      add(c);
      Contract a = base(t, m, 1536, 7168);
      a.align = 4;
      add(a);
      add(base(t, m, 1000, 1000));
      add(base(t, m, 1536, 7160));
    }

  // The generic template: every target, each storage dtype, fp8 weights and
  // outs.
  for (Target t : {Target::kGfx950, Target::kSm90, Target::kGfx942})
    for (DType d : {DType::kBF16, DType::kF16, DType::kF32}) {
      Contract c = base(t, 8, 1536, 7168);
      set_dtype(c, d);
      c.template_kind = TemplateKind::kGeneric;
      add(c);
      if (d == DType::kBF16 && t != Target::kGfx942) {  // gfx942 converts only the fnuz fp8 variant
        Contract f = c;
        f.dtype_weight = DType::kFP8E4M3;
        f.weight_scale = WeightScale::kBlock128;
        f.dtype_out = DType::kFP8E4M3;
        f.out_scale = OutScale::kPerTokenGroup128;
        add(f);
        Contract s = c;
        s.act = Activation::kSilu;
        s.rounding = Rounding::kFused;
        add(s);
      }
    }

  // The development override's paths: gfx950's plans mirrored on sm_90, and
  // a few of the switches the sweeps use.
  for (int64_t m : {8, 16, 32, 64, 128, 512, 2048}) add(base(Target::kSm90, m, 1536, 7168), "gfx950_plan=1");
  add(base(Target::kGfx950, 64, 1536, 7168), "poll=0");
  add(base(Target::kSm90, 64, 1536, 7168), "poll=0");
  add(base(Target::kGfx950, 512, 1536, 7168), "tile128=0");
  add(base(Target::kGfx950, 2048, 1536, 7168), "persistent=0");
  add(base(Target::kSm90, 2048, 1536, 7168), "persistent=0");
  add(base(Target::kGfx950, 32, 1536, 7168), "attn=1");
  add(base(Target::kGfx950, 8, 1536, 7168), "rt=2,ksplit=4");
  add(base(Target::kSm90, 512, 1536, 7168), "wgmma=0");
  return g;
}

}  // namespace gatejit::invariant
