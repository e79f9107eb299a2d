#include "gate_reference.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <sstream>
#include <stdexcept>
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
    case DType::kFP8E4M3: return e4m3_to_f32(f32_to_e4m3(f));  // never a rounding boundary today
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
  // Row n's scales: one for the row (per channel; 1 without scales), or one
  // per 128-wide block of K.
  float row_scale = 1.0f;
  const float *block_scales = nullptr;
  if (p.weight_scale == WeightScale::kPerChannel) row_scale = (*p.scales)[size_t(n)];
  if (p.weight_scale == WeightScale::kBlock128)
    block_scales = p.scales->data() + (n / kScaleBlock) * ((h.cols + kScaleBlock - 1) / kScaleBlock);
  double acc = 0, sq = 0, abs_sum = 0;
  for (int64_t k = 0; k < h.cols; ++k) {
    // Exact in fp64: at most 11 + 11 (or 11 + 4 + 24) significant bits.
    const double s = block_scales ? block_scales[k / kScaleBlock] : row_scale;
    const double t = double(h.at(m, k)) * double(w.at(n, k)) * s;
    acc += t;
    sq += acc * acc;
    abs_sum += std::fabs(t);
  }
  *proj_out = acc;
  // fp32 accumulation error, random-walk estimate over the partial sums
  // (the GPU sums in a shallower tree, so this is generous for gemv).
  double acc_tol = 6 * kEps32 * std::sqrt(sq) + 2 * kEps32 * std::fabs(acc) + 1e-30;
  // Scaled weights: fl32(decode(w) * s) per element, then a product with h
  // no longer exact in fp32 (two roundings of each term), or the scale applied
  // to an fp32 sum (per channel) or to each K block's partial sum (one
  // rounding of each partial, at most sum |h w s|): both within this.
  if (p.weight_scale != WeightScale::kNone) acc_tol += 2 * kEps32 * abs_sum;
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

uint8_t f32_to_e4m3(float f) {
  const uint8_t sign = uint8_t((bits_of(f) >> 24) & 0x80);
  if (std::isnan(f)) return uint8_t(sign | 0x7f);
  const double a = std::fabs(double(f));
  if (a >= 448) return uint8_t(sign | 0x7e);  // saturate: out of range and infinity (satfinite)
  // nearbyint rounds to nearest even (the default rounding mode); the scaled
  // values are exact, so the quantum count's parity is the code's.
  if (a < std::ldexp(1.0, -6))  // subnormal: quanta of 2^-9; 8 quanta is 0x08, the smallest normal
    return uint8_t(sign | uint8_t(std::nearbyint(std::ldexp(a, 9))));
  int e;
  std::frexp(a, &e);  // a in [2^(e-1), 2^e)
  const int q = int(std::nearbyint(std::ldexp(a, 3 - (e - 1))));  // 8..16 eighths; 16 carries into the exponent
  return uint8_t(sign | (((e - 1 + 7) << 3) + q - 8));            // a < 448: at most 0x7e
}

float e4m3_to_f32(uint8_t b) {
  const int e = (b >> 3) & 0xf, m = b & 7;
  float v;
  if ((b & 0x7f) == 0x7f) v = std::numeric_limits<float>::quiet_NaN();
  else if (e == 0) v = std::ldexp(float(m), -9);
  else v = std::ldexp(float(8 + m), e - 10);  // (1 + m/8) x 2^(e-7)
  return (b & 0x80) ? -v : v;
}

namespace {
const std::array<float, 256> &e4m3_table() {
  static const std::array<float, 256> table = [] {
    std::array<float, 256> t{};
    for (int b = 0; b < 256; ++b) t[size_t(b)] = e4m3_to_f32(uint8_t(b));
    return t;
  }();
  return table;
}
}  // namespace

float HostTensor::at(int64_t r, int64_t c) const {
  const size_t i = size_t(r * ld + c);
  switch (dtype) {
    case DType::kF32: {
      float f;
      std::memcpy(&f, bytes.data() + 4 * i, 4);
      return f;
    }
    case DType::kFP8E4M3: return e4m3_table()[bytes[i]];
    case DType::kBF16:
    case DType::kF16: break;
  }
  uint16_t v;
  std::memcpy(&v, bytes.data() + 2 * i, 2);
  return dtype == DType::kBF16 ? bf16_to_f32(v) : f16_to_f32(v);
}

void HostTensor::set(int64_t r, int64_t c, float v) {
  const size_t i = size_t(r * ld + c);
  switch (dtype) {
    case DType::kF32: std::memcpy(bytes.data() + 4 * i, &v, 4); return;
    case DType::kFP8E4M3: bytes[i] = f32_to_e4m3(v); return;
    case DType::kBF16:
    case DType::kF16: break;
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
  t.bytes.assign(size_t((rows - 1) * ld + cols) * t.element_bytes(), 0);
  return t;
}

namespace {

// splitmix64: the next 64 random bits of stream `s`.
uint64_t next_random(uint64_t &s) {
  s += 0x9e3779b97f4a7c15ull;
  uint64_t z = s;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
float unit_of(uint64_t z) { return float(z >> 40) / float(1 << 24); }  // [0, 1)

// Sets every element of t to value(z), z 64 random bits: rows in parallel,
// each from its own splitmix64 stream.
template <class Value>
void fill_rows(HostTensor &t, uint64_t seed, const Value &value) {
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::atomic<int64_t> next{0};
  auto work = [&] {
    for (int64_t r; (r = next++) < t.rows;) {
      uint64_t s = seed ^ (uint64_t(r) * 0x9e3779b97f4a7c15ull);
      for (int64_t c = 0; c < t.cols; ++c) t.set(r, c, value(next_random(s)));
    }
  };
  std::vector<std::thread> pool;
  for (unsigned i = 0; i < threads; ++i) pool.emplace_back(work);
  for (auto &th : pool) th.join();
}

// fill_random_fp8's magnitudes: 3/4 uniform in [0, 448] (mean square
// 448^2 / 3), 1/4 log-uniform over [2^-11, 448], R = log2(448) + 11 octaves
// (mean square 448^2 / (2 R ln 2)): RMS 448 x sqrt(0.75 / 3 + 0.25 / (2 R ln 2)).
// Below 2^-10 they round to zero (about 1.3% of all elements).
constexpr double kFp8LogOctaves = 19.807354922057604;  // log2(448) + 11
constexpr double kFp8RandomRms = 228.05;

}  // namespace

void fill_random(HostTensor &t, float scale, uint64_t seed) {
  fill_rows(t, seed, [scale](uint64_t z) { return scale * (2.0f * unit_of(z) - 1.0f); });
}

void fill_random_fp8(HostTensor &t, uint64_t seed) {
  if (t.dtype != DType::kFP8E4M3) throw std::invalid_argument("fill_random_fp8: the tensor is not fp8_e4m3");
  fill_rows(t, seed, [](uint64_t z) {
    const float u = unit_of(z);
    if (z & 3) return 448.0f * (2.0f * u - 1.0f);  // the low bits: independent of u's high ones
    const float mag = float(448.0 * std::exp2(-kFp8LogOctaves * double(u)));
    return (z & 4) ? -mag : mag;
  });
}

ScaleShape weight_scale_shape(WeightScale kind, int64_t n, int64_t k) {
  switch (kind) {
    case WeightScale::kNone: return {0, 0};
    case WeightScale::kPerChannel: return {n, 1};
    case WeightScale::kBlock128: return {(n + kScaleBlock - 1) / kScaleBlock, (k + kScaleBlock - 1) / kScaleBlock};
  }
  return {0, 0};
}

std::vector<float> random_weight_scales(WeightScale kind, int64_t n, int64_t k, float bound, uint64_t seed) {
  const ScaleShape shape = weight_scale_shape(kind, n, k);
  // 2^u, u uniform in [-1, 1], has RMS sqrt(E[4^u]) = sqrt(3.75 / (2 ln 4)).
  const double spread_rms = std::sqrt(3.75 / (2 * std::log(4.0)));
  const double base = double(bound) / std::sqrt(3.0) / (kFp8RandomRms * spread_rms);
  std::vector<float> scales(size_t(shape.rows * shape.cols));
  uint64_t s = seed;
  for (float &v : scales) v = float(base * std::exp2(2.0 * unit_of(next_random(s)) - 1.0));
  return scales;
}

namespace {

// The e4m3 value of y under scale s. Monotonic in y (a division by s > 0, a
// clamp, rounding to nearest), so the values of an interval of y are those
// between its ends' (an interval may hold thousands of 16-bit values where
// a tiny projection makes the activation's interval wide).
float quantise_ref(double y, float s) {
  const float q = std::clamp(float(y) / s, -kFp8Max, kFp8Max);
  return e4m3_to_f32(f32_to_e4m3(q));
}

}  // namespace

float out_group_scale(float amax) { return std::max(amax, kOutScaleEps) / kFp8Max; }

CheckResult check_gate_fp8_out(const GateProblem &p, const HostTensor &q, const std::vector<float> &scales) {
  const int64_t M = p.hidden->rows, N = p.weight->rows, G = N / kOutGroup;
  if (N % kOutGroup != 0 || int64_t(scales.size()) != M * G || q.rows != M || q.cols != N ||
      q.dtype != DType::kFP8E4M3)
    throw std::invalid_argument("check_gate_fp8_out: needs an [M, N] fp8 out, N a multiple of 128, and M x N / 128 scales");
  const DType d = p.hidden->dtype;
  CheckResult result;
  std::atomic<int64_t> next{0}, exact{0}, bad{0}, unwritten{0};
  std::mutex first_mu;
  auto fail = [&](const std::string &what) {
    if (bad++ == 0) {
      std::lock_guard<std::mutex> lock(first_mu);
      result.first_failure = what;
    }
  };
  auto work = [&] {
    for (int64_t i; (i = next++) < M * G;) {
      const int64_t m = i / G, g = i % G;
      std::vector<std::pair<double, double>> ys(kOutGroup);
      double amax_lo = 0, amax_hi = 0;
      for (int64_t j = 0; j < kOutGroup; ++j) {
        double proj = 0;
        const Interval ref = reference_interval(p, m, g * kOutGroup + j, &proj);
        ys[size_t(j)] = {ref.lo, ref.hi};
        const double lo_abs = ref.lo <= 0 && ref.hi >= 0 ? 0 : std::min(std::fabs(ref.lo), std::fabs(ref.hi));
        amax_lo = std::max(amax_lo, lo_abs);
        amax_hi = std::max(amax_hi, std::max(std::fabs(ref.lo), std::fabs(ref.hi)));
      }
      const float s = scales[size_t(i)];
      std::ostringstream os;
      os.precision(9);
      if (std::isnan(s)) {
        ++unwritten;
        os << "out_scale[" << m << ", " << g << "] left as the NaN poison";
        fail(os.str());
        continue;
      }
      // The scale is monotonic in the group's largest |y|: it lies between
      // the scales of the smallest and the largest possible maximum (both
      // dtype values), and is exactly one where the maximum is known.
      const bool scale_unique = amax_lo == amax_hi;
      const float s_lo = out_group_scale(float(amax_lo)), s_hi = out_group_scale(float(amax_hi));
      if (!(s >= s_lo && s <= s_hi)) {
        os << "out_scale[" << m << ", " << g << "] = " << s << " is not max(amax, 1e-10) / 448 for the group's "
           << "largest |y| in [" << amax_lo << ", " << amax_hi << "] (that gives [" << s_lo << ", " << s_hi << "])";
        fail(os.str());
        continue;
      }
      for (int64_t j = 0; j < kOutGroup; ++j) {
        const int64_t n = g * kOutGroup + j;
        const uint8_t byte = q.bytes[size_t(m * q.ld + n)];
        if ((byte & 0x7f) == 0x7f) {
          ++unwritten;
          fail("out[" + std::to_string(m) + ", " + std::to_string(n) + "] left as the NaN poison");
          continue;
        }
        const float got = e4m3_to_f32(byte);
        const auto [lo, hi] = ys[size_t(j)];
        const float q_lo = quantise_ref(lo, s), q_hi = quantise_ref(hi, s);
        if (scale_unique && lo == hi) ++exact;
        if (!(got >= q_lo && got <= q_hi)) {
          std::ostringstream e;
          e.precision(9);
          e << "out[" << m << ", " << n << "] = " << got << " (0x" << std::hex << int(byte) << std::dec
            << ") is not e4m3(y / " << s << ") for y in [" << lo << ", " << hi << "] (that gives [" << q_lo << ", "
            << q_hi << "])";
          fail(e.str());
        }
      }
    }
  };
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(work);
  for (auto &th : pool) th.join();
  result.checked = M * N + M * G;
  result.exact_required = exact;
  result.mismatches = bad;
  result.unwritten = unwritten;
  return result;
}

CheckResult check_gate(const GateProblem &p, const HostTensor &out) {
  const int64_t M = p.hidden->rows, N = p.weight->rows;
  if (p.weight_scale != WeightScale::kNone) {
    const ScaleShape shape = weight_scale_shape(p.weight_scale, N, p.hidden->cols);
    if (!p.scales || int64_t(p.scales->size()) != shape.rows * shape.cols)
      throw std::invalid_argument(std::string("check_gate: weight_scale ") + weight_scale_name(p.weight_scale) +
                                  " needs " + std::to_string(shape.rows * shape.cols) + " scales, got " +
                                  (p.scales ? std::to_string(p.scales->size()) : std::string("none")));
  }
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
