// The matrix-core fragment layouts (compiler/src/mma_layout.cpp) on the host:
// every element of A, B and C is owned by exactly one (lane, slot), and a
// simulation that computes each lane's accumulators only from the fragments
// the hardware would hand it reproduces the matrix product exactly.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "mma_layout.h"

namespace gatejit::compiler {
namespace {

class MmaLayoutTest : public ::testing::TestWithParam<const MmaLayout *> {};

// wgmma's accumulator (every n the template may ask, 8 to 256): each element
// of the 64 x n tile has exactly one (thread, register), and register 4 e + q
// of warp w is the element the template's epilogue takes it for: q of
// mma.sync's C fragment, offset by 16 w hidden rows and 8 e weight rows.
TEST(WgmmaLayout, AccumulatorIsTheMmaSyncFragmentPerWarpAndTile) {
  const MmaLayout &c_frag = nvidia_m16n8k16();
  for (int n = 8; n <= 256; n += 8) {
    std::vector<int> owners(size_t(64 * n), 0);
    for (int thread = 0; thread < 128; ++thread)
      for (int reg = 0; reg < n / 2; ++reg) {
        const Element e = wgmma_m64_accumulator(thread, reg);
        ASSERT_TRUE(e.row >= 0 && e.row < 64 && e.col >= 0 && e.col < n) << "n " << n;
        ++owners[size_t(e.row * n + e.col)];
        const int warp = thread / 32, lane = thread % 32, tile = reg / 4, q = reg % 4;
        const Element in_tile = c_frag.c(lane, q);  // (hidden row, weight row) of the m16n8 C tile
        EXPECT_EQ(e, (Element{16 * warp + in_tile.row, 8 * tile + in_tile.col}))
            << "n " << n << " thread " << thread << " reg " << reg;
      }
    for (int i = 0; i < 64 * n; ++i) ASSERT_EQ(owners[size_t(i)], 1) << "n " << n << " element " << i;
  }
}

void expect_bijection(const MmaLayout &l, int rows, int cols, int per_lane, Element (*map)(int, int),
                      const char *what) {
  std::vector<int> owners(size_t(rows * cols), 0);
  for (int lane = 0; lane < l.lanes; ++lane)
    for (int i = 0; i < per_lane; ++i) {
      const Element e = map(lane, i);
      ASSERT_TRUE(e.row >= 0 && e.row < rows && e.col >= 0 && e.col < cols)
          << what << ": lane " << lane << " slot " << i << " -> (" << e.row << ", " << e.col << ")";
      ++owners[size_t(e.row * cols + e.col)];
    }
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      EXPECT_EQ(owners[size_t(r * cols + c)], 1) << what << " element (" << r << ", " << c << ")";
  EXPECT_EQ(l.lanes * per_lane, rows * cols) << what;
}

TEST_P(MmaLayoutTest, EveryElementHasExactlyOneOwner) {
  const MmaLayout &l = *GetParam();
  expect_bijection(l, l.m, l.k, l.a_per_lane, l.a, "A");
  expect_bijection(l, l.k, l.n, l.b_per_lane, l.b, "B");
  expect_bijection(l, l.m, l.n, l.c_per_lane, l.c, "C");
}

TEST_P(MmaLayoutTest, FragmentSimulationReproducesTheProduct) {
  const MmaLayout &l = *GetParam();
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int> small(-8, 8);  // exact in fp32: the check is bitwise
  std::vector<float> A(size_t(l.m * l.k)), B(size_t(l.k * l.n));
  for (auto &x : A) x = float(small(rng));
  for (auto &x : B) x = float(small(rng));

  // What each lane holds, taken through the layout only.
  std::vector<std::vector<float>> a_frag(size_t(l.lanes)), b_frag(size_t(l.lanes));
  for (int lane = 0; lane < l.lanes; ++lane) {
    for (int i = 0; i < l.a_per_lane; ++i) {
      const Element e = l.a(lane, i);
      a_frag[size_t(lane)].push_back(A[size_t(e.row * l.k + e.col)]);
    }
    for (int i = 0; i < l.b_per_lane; ++i) {
      const Element e = l.b(lane, i);
      b_frag[size_t(lane)].push_back(B[size_t(e.row * l.n + e.col)]);
    }
  }
  // The instruction: D = A * B, computed from the fragments alone (a lane's
  // accumulator needs operand values that other lanes hold: find them by
  // the layout's inverse, as the hardware's operand network does).
  auto a_at = [&](int r, int k) {
    for (int lane = 0; lane < l.lanes; ++lane)
      for (int i = 0; i < l.a_per_lane; ++i)
        if (l.a(lane, i) == Element{r, k}) return a_frag[size_t(lane)][size_t(i)];
    ADD_FAILURE() << "A(" << r << ", " << k << ") held by no lane";
    return 0.0f;
  };
  auto b_at = [&](int k, int c) {
    for (int lane = 0; lane < l.lanes; ++lane)
      for (int i = 0; i < l.b_per_lane; ++i)
        if (l.b(lane, i) == Element{k, c}) return b_frag[size_t(lane)][size_t(i)];
    ADD_FAILURE() << "B(" << k << ", " << c << ") held by no lane";
    return 0.0f;
  };
  for (int lane = 0; lane < l.lanes; ++lane)
    for (int i = 0; i < l.c_per_lane; ++i) {
      const Element e = l.c(lane, i);
      float d = 0, ref = 0;
      for (int k = 0; k < l.k; ++k) {
        d += a_at(e.row, k) * b_at(k, e.col);
        ref += A[size_t(e.row * l.k + k)] * B[size_t(k * l.n + e.col)];
      }
      ASSERT_EQ(d, ref) << "lane " << lane << " accumulator " << i;
    }
}

// The template's load scheme: every lane loads 16-byte runs of its rows, the
// runs are handed to the instructions as the scheme says, and the summed
// accumulators (mapped back through the C layout) equal hidden . weight^T over
// the whole K step, for every element of the tile.
class MmaLoadSchemeTest : public ::testing::TestWithParam<Target> {};

TEST_P(MmaLoadSchemeTest, SchemeReproducesTheTileProduct) {
  const MmaLoadScheme &s = mma_load_scheme(GetParam());
  const MmaLayout &l = *s.layout;
  ASSERT_EQ(s.instructions * l.k, s.kstep);
  const int hidden_rows = l.m, weight_rows = l.n;
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int> small(-8, 8);
  std::vector<float> H(size_t(hidden_rows * s.kstep)), W(size_t(weight_rows * s.kstep));
  for (auto &x : H) x = float(small(rng));
  for (auto &x : W) x = float(small(rng));

  // Loads: 8 consecutive K elements per row; every (row, k) loaded once per operand.
  std::vector<int> h_seen(H.size(), 0), w_seen(W.size(), 0);
  auto h_vec = [&](int lane, int q, int e) {
    return H[size_t(s.h_row(lane, q) * s.kstep + s.k_offset(lane) + e)];
  };
  auto w_vec = [&](int lane, int e) { return W[size_t(s.w_row(lane) * s.kstep + s.k_offset(lane) + e)]; };
  for (int lane = 0; lane < l.lanes; ++lane)
    for (int e = 0; e < 8; ++e) {
      ++w_seen[size_t(s.w_row(lane) * s.kstep + s.k_offset(lane) + e)];
      for (int q = 0; q < s.h_loads; ++q) ++h_seen[size_t(s.h_row(lane, q) * s.kstep + s.k_offset(lane) + e)];
    }
  for (size_t i = 0; i < H.size(); ++i) EXPECT_EQ(h_seen[i], 1) << "hidden element " << i;
  for (size_t i = 0; i < W.size(); ++i) EXPECT_EQ(w_seen[i], 1) << "weight element " << i;

  // Each instruction from the fragments alone, through the layout's inverse.
  std::vector<float> C(size_t(hidden_rows * weight_rows), 0.0f);
  for (int j = 0; j < s.instructions; ++j) {
    std::vector<float> A(size_t(l.m * l.k)), B(size_t(l.k * l.n));
    for (int lane = 0; lane < l.lanes; ++lane) {
      for (int i = 0; i < l.a_per_lane; ++i) {
        const Element e = l.a(lane, i);
        A[size_t(e.row * l.k + e.col)] = h_vec(lane, s.a_load(j, i), s.a_elem(j, i));
      }
      for (int i = 0; i < l.b_per_lane; ++i) {
        const Element e = l.b(lane, i);
        B[size_t(e.row * l.n + e.col)] = w_vec(lane, s.b_elem(j, i));
      }
    }
    for (int r = 0; r < l.m; ++r)
      for (int c = 0; c < l.n; ++c)
        for (int k = 0; k < l.k; ++k) C[size_t(r * l.n + c)] += A[size_t(r * l.k + k)] * B[size_t(k * l.n + c)];
  }
  for (int r = 0; r < hidden_rows; ++r)
    for (int c = 0; c < weight_rows; ++c) {
      float ref = 0;
      for (int k = 0; k < s.kstep; ++k) ref += H[size_t(r * s.kstep + k)] * W[size_t(c * s.kstep + k)];
      ASSERT_EQ(C[size_t(r * l.n + c)], ref) << "hidden row " << r << ", weight row " << c;
    }
}

INSTANTIATE_TEST_SUITE_P(Targets, MmaLoadSchemeTest, ::testing::Values(Target::kSm90, Target::kGfx950),
                         [](const auto &info) { return std::string(target_name(info.param)); });

TEST(MmaLayout, TargetsPickTheirInstruction) {
  EXPECT_EQ(&mma_layout(Target::kSm90), &nvidia_m16n8k16());
  EXPECT_EQ(&mma_layout(Target::kGfx950), &amdgpu_mfma_16x16x32());
  EXPECT_EQ(nvidia_m16n8k16().lanes, target_wave_size(Target::kSm90));
  EXPECT_EQ(amdgpu_mfma_16x16x32().lanes, target_wave_size(Target::kGfx950));
}

INSTANTIATE_TEST_SUITE_P(Layouts, MmaLayoutTest, ::testing::Values(&nvidia_m16n8k16(), &amdgpu_mfma_16x16x32()),
                         [](const auto &info) { return info.param->lanes == 32 ? std::string("sm90_m16n8k16")
                                                                               : std::string("gfx950_16x16x32"); });

}  // namespace
}  // namespace gatejit::compiler
