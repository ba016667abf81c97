// Tests for the learned factors' powers (algorithms/portable_math.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "algorithms/portable_math.h"

namespace papshim {
namespace {

TEST(PortableMath, AgreesWithTheLibraryPower) {
  double worst = 0;
  for (double x = 0.05; x <= 50.0; x *= 1.0137)
    for (double y = 0.0; y <= 1.0; y += 0.0173) {
      const double want = std::pow(x, y), got = portable_pow(x, y);
      worst = std::max(worst, std::fabs(got - want) / want);
    }
  EXPECT_LT(worst, 1e-14);
  // Beyond the factors' range too.
  for (double x : {1e-300, 1e-10, 0.5, 3.0, 1e10, 1e300})
    for (double y : {-2.0, -0.5, 0.3, 2.5}) {
      if (std::fabs(y * std::log(x)) >= 700) continue;
      EXPECT_NEAR(portable_pow(x, y) / std::pow(x, y), 1.0, 1e-13) << x << " " << y;
    }
}

TEST(PortableMath, ExactCasesAndBadArguments) {
  EXPECT_EQ(portable_pow(1.0, 0.37), 1.0);  // a factor never taught stays exactly 1
  EXPECT_EQ(portable_pow(7.5, 0.0), 1.0);
  EXPECT_NEAR(portable_pow(4.0, 0.5), 2.0, 4e-16);
  EXPECT_NEAR(portable_pow(2.0, 10.0), 1024.0, 1e-12);
  EXPECT_TRUE(std::isnan(portable_pow(0.0, 0.5)));
  EXPECT_TRUE(std::isnan(portable_pow(-2.0, 0.5)));
  EXPECT_TRUE(std::isnan(portable_pow(INFINITY, 0.5)));
  EXPECT_TRUE(std::isnan(portable_pow(2.0, NAN)));
}

// The learned factors' use: repeated steps towards a target stay within the
// clamp and converge as std::pow's do.
TEST(PortableMath, GeometricStepsConverge) {
  double a = 1.0, b = 1.0;
  for (int i = 0; i < 200; ++i) {
    a = portable_pow(a, 0.7) * portable_pow(3.0, 0.3);
    b = std::pow(b, 0.7) * std::pow(3.0, 0.3);
  }
  EXPECT_NEAR(a, 3.0, 1e-12);
  EXPECT_NEAR(a, b, 1e-13);
}

}  // namespace
}  // namespace papshim
