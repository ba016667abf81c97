// Works as follows.  x^y = exp(y ln x).  ln x: x = m 2^e with m in
// [sqrt(1/2), sqrt(2)), ln m = 2 atanh(s) with s = (m-1)/(m+1), |s| < 0.172,
// summed as a series to s^27 (the next term is below 1e-21); ln x = ln m +
// e ln 2.  exp z: z = k ln 2 + r with k the nearest integer, |r| <= ln 2 / 2,
// exp r as its Taylor series to r^20 (the next term below 1e-22), times
// 2^k.  ln 2 is split into a high part with trailing zero bits and the
// rest, so that k times the high part is exact.
#include "algorithms/portable_math.h"

#include <cmath>
#include <limits>

namespace papshim {

namespace {

constexpr double kLn2Hi = 6.93147180369123816490e-01;  // ln 2 to 32 bits: k * kLn2Hi is exact for |k| < 2^20
constexpr double kLn2Lo = 1.90821492927058770002e-10;  // ln 2 - kLn2Hi
constexpr double kSqrtHalf = 0.70710678118654752440;

double portable_log(double x) {
  int e = 0;
  double m = std::frexp(x, &e);  // x = m 2^e, m in [0.5, 1)
  if (m < kSqrtHalf) {
    m *= 2;
    e -= 1;
  }
  const double s = (m - 1) / (m + 1), s2 = s * s;
  double sum = 0;
  for (int k = 27; k >= 1; k -= 2) sum = sum * s2 + 1.0 / k;  // Horner over the odd powers
  const double ln_m = 2 * s * sum;
  return (e * kLn2Hi + ln_m) + e * kLn2Lo;
}

double portable_exp(double z) {
  const double k = std::nearbyint(z / (kLn2Hi + kLn2Lo));
  const double r = (z - k * kLn2Hi) - k * kLn2Lo;
  double sum = 1;
  for (int n = 20; n >= 1; --n) sum = 1 + sum * r / n;  // Horner over r^n / n!
  return std::ldexp(sum, static_cast<int>(k));
}

}  // namespace

double portable_pow(double x, double y) {
  if (!(x > 0) || !std::isfinite(x) || !std::isfinite(y)) return std::numeric_limits<double>::quiet_NaN();
  if (y == 0 || x == 1) return 1;
  return portable_exp(y * portable_log(x));
}

}  // namespace papshim
