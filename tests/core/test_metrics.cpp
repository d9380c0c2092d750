#include "attnscope/runtime/error.h"
#include "attnscope/analysis/metrics.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace attnscope;

TEST_CASE("entropy and KL of hand-made maps", "[metrics]") {
    HeadMap uniform{2, 4, {0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f}};
    HeadMap peaked{2, 4, {1, 0, 0, 0, 0, 0.5f, 0.5f, 0}};
    CHECK(meanRowEntropy(uniform) == Approx(std::log(4.0)));
    CHECK(meanRowEntropy(peaked) == Approx(0.5 * std::log(2.0)));  // rows: 0 and log 2
    CHECK(meanRowKl(uniform, uniform) == Approx(0.0).margin(1e-12));
    // KL(peaked ‖ uniform): row 0 = log 4, row 1 = log 2.
    CHECK(meanRowKl(peaked, uniform) == Approx((std::log(4.0) + std::log(2.0)) / 2));
    // A zero in q where p > 0 is large but finite.
    const double big = meanRowKl(uniform, peaked);
    CHECK(std::isfinite(big));
    CHECK(big > 5.0);
    HeadMap masked{2, 2, {0, 0, 0.5f, 0.5f}};  // an all-zero row is skipped
    CHECK(meanRowEntropy(masked) == Approx(std::log(2.0)));
    CHECK_THROWS_WITH(meanRowKl(uniform, masked), Catch::Contains("same shape"));
}
