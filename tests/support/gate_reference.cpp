#include "gate_reference.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <mutex>
#include <sstream>
#include <thread>

namespace gatejit::reference {
namespace {

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

constexpr double kEps32 = 1.0 / (1 << 24);
// fp32 exp2 (approximate on both GPUs), divide and multiply: a few ulps.
constexpr double kActRelTol = 1.0 / (1 << 20);

double round_to(double x, DType d) {
  const float f = float(x);  // RNE to f32 first; ties are inside the intervals
  switch (d) {
    case DType::kBF16: return bf16_to_f32(f32_to_bf16(f));
    case DType::kF16: return f16_to_f32(f32_to_f16(f));
    case DType::kF32: return f;
  }
  return f;
}

struct Interval {
  double lo, hi;
};

Interval widen(double v, double tol) { return {v - tol, v + tol}; }
Interval round_interval(Interval i, DType d) { return {round_to(i.lo, d), round_to(i.hi, d)}; }

double act_of(double x, Activation a) {
  const double s = 1.0 / (1.0 + std::exp(-x));
  return a == Activation::kSigmoid ? s : x * s;
}

Interval act_interval(Interval x, Activation a) {
  const double v[3] = {act_of(x.lo, a), act_of(0.5 * (x.lo + x.hi), a), act_of(x.hi, a)};
  double lo = *std::min_element(v, v + 3), hi = *std::max_element(v, v + 3);
  const double tol = std::max(std::fabs(lo), std::fabs(hi)) * kActRelTol + 1e-37;
  return {lo - tol, hi + tol};
}

Interval mul_interval(Interval g, double attn, double rel_tol) {
  double a = g.lo * attn, b = g.hi * attn;
  if (a > b) std::swap(a, b);
  const double tol = std::max(std::fabs(a), std::fabs(b)) * rel_tol;
  return {a - tol, b + tol};
}

// The final value's interval for output element (m, n).
Interval reference_interval(const GateProblem &p, int64_t m, int64_t n, double *proj_out) {
  const HostTensor &h = *p.hidden, &w = *p.weight, &at = *p.attn;
  double acc = 0, sq = 0;
  for (int64_t k = 0; k < h.cols; ++k) {
    acc += double(h.at(m, k)) * double(w.at(n, k));
    sq += acc * acc;
  }
  *proj_out = acc;
  // fp32 accumulation error, random-walk estimate over the partial sums
  // (the GPU sums in a shallower tree, so this is generous for gemv).
  const double acc_tol = 6 * kEps32 * std::sqrt(sq) + 2 * kEps32 * std::fabs(acc) + 1e-30;
  const DType d = p.hidden->dtype;
  const double attn = at.at(m, n);
  Interval x = widen(acc, acc_tol);
  if (p.rounding == Rounding::kBoundary) {
    x = round_interval(x, d);                 // projection -> dtype
    Interval g = round_interval(act_interval(x, p.act), d);  // activation -> dtype
    // Product of two 16-bit values is exact in fp32; for f32 storage allow one ulp.
    return round_interval(mul_interval(g, attn, d == DType::kF32 ? kEps32 : 0.0), d);
  }
  Interval g = act_interval(x, p.act);        // fused: fp32 throughout
  return round_interval(mul_interval(g, attn, 2 * kEps32), d);
}

}  // namespace

uint16_t f32_to_bf16(float f) {
  uint32_t u = bits_of(f);
  if ((u & 0x7fffffff) > 0x7f800000) return uint16_t((u >> 16) | 0x40);  // quiet NaN
  u += 0x7fff + ((u >> 16) & 1);
  return uint16_t(u >> 16);
}
float bf16_to_f32(uint16_t b) { return float_of(uint32_t(b) << 16); }

uint16_t f32_to_f16(float f) {
  const uint32_t x = bits_of(f);
  const uint32_t sign = (x >> 16) & 0x8000;
  const int32_t exp = int32_t((x >> 23) & 0xff);
  uint32_t mant = x & 0x7fffff;
  if (exp == 255) return uint16_t(sign | 0x7c00 | (mant ? 0x200 : 0));
  const int32_t e = exp - 127 + 15;
  if (e >= 31) return uint16_t(sign | 0x7c00);
  if (e <= 0) {  // subnormal half (or zero)
    if (e < -10) return uint16_t(sign);
    mant |= 0x800000;
    const int shift = 14 - e;
    uint32_t half = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return uint16_t(sign | half);
  }
  uint32_t half = (uint32_t(e) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (half & 1))) ++half;  // a carry rounds up the exponent: right
  return uint16_t(sign | half);
}

float f16_to_f32(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  if (exp == 0) {
    const float v = std::ldexp(float(mant), -24);
    return sign ? -v : v;
  }
  if (exp == 31) return float_of(sign | 0x7f800000 | (mant << 13));
  return float_of(sign | ((exp + 112) << 23) | (mant << 13));
}

float HostTensor::at(int64_t r, int64_t c) const {
  const size_t i = size_t(r * ld + c);
  if (dtype == DType::kF32) {
    float f;
    std::memcpy(&f, bytes.data() + 4 * i, 4);
    return f;
  }
  uint16_t v;
  std::memcpy(&v, bytes.data() + 2 * i, 2);
  return dtype == DType::kBF16 ? bf16_to_f32(v) : f16_to_f32(v);
}

void HostTensor::set(int64_t r, int64_t c, float v) {
  const size_t i = size_t(r * ld + c);
  if (dtype == DType::kF32) {
    std::memcpy(bytes.data() + 4 * i, &v, 4);
    return;
  }
  const uint16_t b = dtype == DType::kBF16 ? f32_to_bf16(v) : f32_to_f16(v);
  std::memcpy(bytes.data() + 2 * i, &b, 2);
}

HostTensor make_tensor(DType dtype, int64_t rows, int64_t cols, int64_t ld) {
  HostTensor t;
  t.dtype = dtype;
  t.rows = rows;
  t.cols = cols;
  t.ld = ld;
  t.bytes.assign(size_t((rows - 1) * ld + cols) * size_t(dtype_bytes(dtype)), 0);
  return t;
}

void fill_random(HostTensor &t, float scale, uint64_t seed) {
  // Rows in parallel, each from its own splitmix64 stream.
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::atomic<int64_t> next{0};
  auto work = [&] {
    for (int64_t r; (r = next++) < t.rows;) {
      uint64_t s = seed ^ (uint64_t(r) * 0x9e3779b97f4a7c15ull);
      for (int64_t c = 0; c < t.cols; ++c) {
        s += 0x9e3779b97f4a7c15ull;
        uint64_t z = s;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        const float u = float(z >> 40) / float(1 << 24);  // [0, 1)
        t.set(r, c, scale * (2.0f * u - 1.0f));
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned i = 0; i < threads; ++i) pool.emplace_back(work);
  for (auto &th : pool) th.join();
}

CheckResult check_gate(const GateProblem &p, const HostTensor &out) {
  const int64_t M = p.hidden->rows, N = p.weight->rows;
  CheckResult result;
  std::atomic<int64_t> next{0}, exact{0}, bad{0}, unwritten{0};
  std::mutex first_mu;
  auto work = [&] {
    for (int64_t i; (i = next++) < M * N;) {
      const int64_t m = i / N, n = i % N;
      double proj = 0;
      const Interval ref = reference_interval(p, m, n, &proj);
      const double got = out.at(m, n);
      if (ref.lo == ref.hi) ++exact;
      if (std::isnan(got)) ++unwritten;
      if (!(got >= ref.lo && got <= ref.hi)) {
        if (bad++ == 0) {
          std::lock_guard<std::mutex> lock(first_mu);
          std::ostringstream os;
          os.precision(9);
          os << "out[" << m << ", " << n << "] = " << got << " not in [" << ref.lo << ", " << ref.hi
             << "] (fp64 projection " << proj << ", attn " << p.attn->at(m, n) << ")";
          result.first_failure = os.str();
        }
      }
    }
  };
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(work);
  for (auto &th : pool) th.join();
  result.checked = M * N;
  result.exact_required = exact;
  result.mismatches = bad;
  result.unwritten = unwritten;
  return result;
}

}  // namespace gatejit::reference
