#include "attnscope/runtime/error.h"
#include "attnscope/io/npy.h"
#include "gpt2_fixture.h"
#include "npy_read.h"

#include <catch2/catch.hpp>

namespace test_npy {

using namespace attnscope;

TEST_CASE("npy files round-trip through an independent reader", "[npy]") {
    const auto dir = testing::freshDir("npy");
    for (const std::vector<std::int64_t>& shape :
         std::vector<std::vector<std::int64_t>>{{5}, {2, 3}, {2, 1, 3, 4}, {0, 3}}) {
        std::int64_t n = 1;
        for (auto s : shape) n *= s;
        std::vector<float> values(static_cast<std::size_t>(n));
        for (std::size_t i = 0; i < values.size(); ++i) values[i] = 0.5f * static_cast<float>(i) - 1.f;
        writeNpy(dir / "a.npy", shape, values);
        const auto a = testing::readNpy(dir / "a.npy");
        CHECK(a.descr == "<f4");
        CHECK_FALSE(a.fortranOrder);
        CHECK(a.shape == shape);
        CHECK(a.values == values);
    }
}

TEST_CASE("an unfinished or miscounted npy leaves no file behind", "[npy]") {
    const auto dir = testing::freshDir("npy-partial");
    {
        NpyWriter w(dir / "b.npy", {2, 2});
        const float x[3] = {1, 2, 3};
        w.append(x, 3);
        REQUIRE_THROWS_WITH(w.finish(), Catch::Contains("wrote 3 values but the shape holds 4"));
    }
    CHECK(std::filesystem::is_empty(dir));
    REQUIRE_THROWS_WITH(NpyWriter(dir / "no" / "such" / "c.npy", {1}), Catch::Contains("cannot write here"));
}

}  // namespace test_npy
