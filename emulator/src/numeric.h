// Bit-exact conversions between the storage formats the kernels use:
// binary16, bfloat16, and the 8-bit float formats (OCP e4m3 on gfx950,
// e4m3 "fnuz" on gfx942), all round-to-nearest-even on narrowing, as the
// CDNA3/CDNA4 ISA's conversion instructions define them.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace gatejit::emulator {

inline float as_f32(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
inline uint32_t f32_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

inline uint64_t f64_bits(double d) {
  uint64_t b;
  std::memcpy(&b, &d, 8);
  return b;
}

inline float bf16_to_f32(uint16_t h) { return as_f32(uint32_t(h) << 16); }

// f32 -> bf16, round to nearest even; NaN stays a quiet NaN of its sign.
inline uint16_t f32_to_bf16(float f) {
  const uint32_t b = f32_bits(f);
  if ((b & 0x7fffffffu) > 0x7f800000u) return uint16_t((b >> 16) | 0x40);
  return uint16_t((b + 0x7fffu + ((b >> 16) & 1)) >> 16);
}

inline float f16_to_f32(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  if (exp == 0) {
    const float v = std::ldexp(float(man), -24);
    return sign ? -v : v;
  }
  if (exp == 31) return as_f32(sign | 0x7f800000u | (man << 13));
  return as_f32(sign | ((exp + 112) << 23) | (man << 13));
}

// f64 -> f16, round to nearest even, with subnormals; overflow to infinity.
inline uint16_t f64_to_f16(double x) {
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  if (std::isnan(x)) {
    const uint32_t b = f32_bits(float(x));
    return uint16_t(sign | 0x7e00 | ((b >> 13) & 0x1ff));
  }
  if (std::isinf(x)) return uint16_t(sign | 0x7c00);
  const double v = std::fabs(x);
  if (v >= 65520.0) return uint16_t(sign | 0x7c00);
  // Scale so that the f16 quantum is 1 and round with the double's RNE.
  int e;
  std::frexp(v, &e);  // v = m * 2^e, m in [0.5, 1)
  const int exp16 = std::max(e - 1, -14);  // binary exponent of the f16 result
  const double q = std::nearbyint(std::ldexp(v, 10 - exp16));  // mantissa with the implicit bit
  const double r = std::ldexp(q, exp16 - 10);
  if (r == 0) return sign;
  int re;
  std::frexp(r, &re);
  const int rexp = re - 1;
  if (rexp < -14) return uint16_t(sign | uint16_t(std::ldexp(r, 24)));  // subnormal
  const uint32_t man = uint32_t(std::ldexp(r, 10 - rexp)) & 0x3ff;
  return uint16_t(sign | uint16_t((rexp + 15) << 10) | man);
}
inline uint16_t f32_to_f16(float f) { return f64_to_f16(double(f)); }

// 8-bit floats: `bias` 7 with NaN 0x7f/0xff and no infinity (OCP e4m3),
// or bias 8 with NaN 0x80 only and no negative zero (e4m3 fnuz).
inline float fp8_e4m3_to_f32(uint8_t b, bool fnuz) {
  if (fnuz) {
    if (b == 0x80) return std::nanf("");
  } else if ((b & 0x7f) == 0x7f) {
    return b & 0x80 ? -std::nanf("") : std::nanf("");
  }
  const int bias = fnuz ? 8 : 7;
  const int exp = (b >> 3) & 0xf, man = b & 7;
  const float v = exp == 0 ? std::ldexp(float(man), 1 - bias - 3) : std::ldexp(float(8 + man), exp - bias - 3);
  return b & 0x80 ? -v : v;
}

// f32 -> e4m3, round to nearest even; `saturate` clamps to the largest
// finite value (448 OCP, 240 fnuz) instead of producing NaN.
inline uint8_t f32_to_fp8_e4m3(float f, bool fnuz, bool saturate) {
  const uint8_t nan = fnuz ? 0x80 : 0x7f;
  if (std::isnan(f)) return fnuz ? 0x80 : uint8_t(nan | (std::signbit(f) ? 0x80 : 0));
  const uint8_t sign = std::signbit(f) ? 0x80 : 0;
  const double max = fnuz ? 240.0 : 448.0;
  double v = std::fabs(double(f));
  const int bias = fnuz ? 8 : 7;
  if (std::isinf(f)) return saturate ? uint8_t(sign | (fnuz ? 0x7f : 0x7e)) : uint8_t(nan | (fnuz ? 0 : sign));
  int e;
  std::frexp(v, &e);
  const int exp8 = std::max(e - 1, 1 - bias);
  const double q = std::nearbyint(std::ldexp(v, 3 - exp8));
  double r = std::ldexp(q, exp8 - 3);
  if (r > max) {
    if (saturate) r = max;
    else return uint8_t(nan | (fnuz ? 0 : sign));
  }
  if (r == 0) return fnuz ? 0 : sign;
  int re;
  std::frexp(r, &re);
  const int rexp = re - 1;
  if (rexp < 1 - bias) return uint8_t(sign | uint8_t(std::ldexp(r, bias - 1 + 3)));  // subnormal
  const uint32_t man = uint32_t(std::ldexp(r, 3 - rexp)) & 7;
  return uint8_t(sign | uint8_t((rexp + bias) << 3) | man);
}

}  // namespace gatejit::emulator
