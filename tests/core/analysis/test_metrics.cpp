#include "attnscope/runtime/error.h"
#include "attnscope/analysis/metrics.h"

#include <catch2/catch.hpp>

#include <cmath>

namespace test_metrics {

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

TEST_CASE("one KL for distributions and map rows: exact above the floor, finite at zeros", "[metrics]") {
    CHECK(klDivergence({0.5, 0.5}, {0.5, 0.5}) == 0.0);
    CHECK(klDivergence({0.75, 0.25}, {0.5, 0.5}) == Approx(0.75 * std::log(1.5) + 0.25 * std::log(0.5)));
    // A tiny but positive q is used as it is, not raised to a floor.
    CHECK(klDivergence({0.5, 0.5}, {1.0 - 1e-20, 1e-20}) == Approx(0.5 * std::log(0.5) + 0.5 * std::log(0.5 / 1e-20)));
    // q = 0 where p > 0: the floor, log(1 / 1e-300) ≈ 690.8 nats, not infinity.
    CHECK(klDivergence({1.0, 0.0}, {0.0, 1.0}) == Approx(-std::log(kKlFloor)));
    CHECK(klDivergence({0.0, 1.0}, {0.5, 0.5}) == Approx(std::log(2.0)));  // p = 0 terms are 0
    // Rounding below zero is clamped: q slightly above p everywhere is not a distribution, and the
    // formula would go negative.
    CHECK(klDivergence({0.5, 0.5}, {0.5 + 1e-9, 0.5 + 1e-9}) == 0.0);
    CHECK_THROWS_WITH(klDivergence({1.0}, {0.5, 0.5}), Catch::Contains("same length, got 1 and 2"));

    // meanRowKl is the mean of the rows' klDivergence (all-zero rows of p skipped), float maps
    // taken in double.
    HeadMap p{3, 3, {0.2f, 0.3f, 0.5f, 0, 0, 0, 1, 0, 0}};
    HeadMap q{3, 3, {0.4f, 0.4f, 0.2f, 0.3f, 0.3f, 0.4f, 0, 0.5f, 0.5f}};
    const auto row = [](const HeadMap& m, int r) {
        return std::vector<double>(m.values.begin() + r * m.cols, m.values.begin() + (r + 1) * m.cols);
    };
    CHECK(meanRowKl(p, q) == Approx((klDivergence(row(p, 0), row(q, 0)) + klDivergence(row(p, 2), row(q, 2))) / 2));
    CHECK(meanRowKl(p, q) > 300.0);  // row 2 puts all of p where q is 0
}

}  // namespace test_metrics
