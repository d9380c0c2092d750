// core's ALiBi slopes (models/alibi.h) are Hugging Face's build_alibi_tensor values: float32
// powers of the float32 base 2^(-8/p) for the largest power of two p <= heads, then odd powers of 2^(-4/p).
#include "models/alibi.h"

#include <catch2/catch.hpp>

#include <cmath>

namespace test_alibi_slopes {

using namespace attnscope;

TEST_CASE("ALiBi slopes for power-of-two and other head counts", "[alibi]") {
    CHECK(alibiSlopes(1) == std::vector<double>{1.0 / 256});
    CHECK(alibiSlopes(4) == std::vector<double>{0.25, 1.0 / 16, 1.0 / 64, 1.0 / 256});
    CHECK(alibiSlopes(6) == std::vector<double>{0.25, 1.0 / 16, 1.0 / 64, 1.0 / 256, 0.5, 0.125});
    const std::vector<double> twelve = alibiSlopes(12);
    REQUIRE(twelve.size() == 12);
    for (int h = 0; h < 8; ++h) CHECK(twelve[h] == std::ldexp(1.0, -(h + 1)));
    // 2^-0.5, 2^-1.5, ...: torch.pow of the float32 base 2^-0.5, so the base's rounding carries
    // into each power (the slopes are float32, within float32 precision of the exact values).
    const double base = static_cast<float>(std::pow(2.0, -0.5));
    for (int i = 0; i < 4; ++i) {
        CHECK(twelve[8 + i] == static_cast<double>(static_cast<float>(std::pow(base, 2 * i + 1))));
        CHECK(twelve[8 + i] == Approx(std::pow(2.0, -0.5 * (2 * i + 1))).epsilon(1e-6));
    }
    const std::vector<double> many = alibiSlopes(71);  // Falcon-7B's head count: 64 + 7
    REQUIRE(many.size() == 71);
    CHECK(many[63] == Approx(1.0 / 256).epsilon(1e-6));  // (float32 2^-1/8)^64, not exactly 2^-8
    CHECK(many[64] == Approx(std::pow(2.0, -4.0 / 64)).epsilon(1e-7));
    CHECK(many[70] == Approx(std::pow(2.0, -4.0 * 13 / 64)).epsilon(1e-6));
}

}  // namespace test_alibi_slopes
