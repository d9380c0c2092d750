// The vectorised float kernels (runtime/vector_math.h) against double precision: exp and log
// over a sweep of every float range (normal, subnormal, the edges of exp's range), their special
// values, and the fused row softmax's range, padding and NaN rows.
#include "runtime/vector_math.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace test_vector_math {

using namespace attnscope;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// |got - want| in units of the last place of want rounded to float (subnormals: the smallest
// subnormal), so 0.5 is a correctly rounded result.
double ulps(float got, double want) {
    const float w = static_cast<float>(want);
    const double ulp = std::fabs(w) < std::numeric_limits<float>::min()
                               ? std::numeric_limits<float>::denorm_min()
                               : std::nextafter(std::fabs(w), kInf) - std::fabs(w);
    return std::fabs(static_cast<double>(got) - want) / ulp;
}

// Every 4,099th bit pattern of the positive floats (normal and subnormal), and their negatives.
std::vector<float> sweep() {
    std::vector<float> xs;
    for (std::uint32_t b = 1; b < 0x7f800000u; b += 4099) {
        float f;
        std::memcpy(&f, &b, sizeof f);
        xs.push_back(f);
        xs.push_back(-f);
    }
    return xs;
}

}  // namespace

TEST_CASE("vectorised log is within 2 ulp of the exact log, with the special values", "[vmath]") {
    std::vector<float> xs;
    for (float x : sweep())
        if (x > 0) xs.push_back(x);
    std::vector<float> out(xs.size());
    vmath::logInto(xs.data(), out.data(), static_cast<std::int64_t>(xs.size()));
    double worst = 0;
    for (std::size_t i = 0; i < xs.size(); ++i)
        worst = std::max(worst, ulps(out[i], std::log(static_cast<double>(xs[i]))));
    CHECK(worst < 2.0);
    CHECK(worst > 0.0);  // the sweep reached values that are not exact
    const float special[] = {0.0f,
                             -0.0f,
                             -1.0f,
                             kInf,
                             std::numeric_limits<float>::quiet_NaN(),
                             1.0f,
                             std::numeric_limits<float>::denorm_min()};
    float got[7];
    vmath::logInto(special, got, 7);  // 7 values: the tail path
    CHECK(got[0] == -kInf);
    CHECK(got[1] == -kInf);
    CHECK(std::isnan(got[2]));
    CHECK(got[3] == kInf);
    CHECK(std::isnan(got[4]));
    CHECK(got[5] == 0.0f);
    CHECK(ulps(got[6], std::log(static_cast<double>(std::numeric_limits<float>::denorm_min()))) < 2.0);
}

TEST_CASE("vectorised exp is within 2 ulp of the exact exp over float's range, subnormal results included", "[vmath]") {
    std::vector<float> xs;
    for (float x : sweep())
        if (std::fabs(x) < 120) xs.push_back(x);
    for (float x = -104.5f; x < 89.5f; x += 0.0137f) xs.push_back(x);
    std::vector<float> out(xs.size());
    vmath::expInto(xs.data(), out.data(), static_cast<std::int64_t>(xs.size()));
    double worst = 0, worstSub = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
        const double x = xs[i], want = std::exp(x);
        if (x < -103.972) {
            CHECK(out[i] == 0.0f);
        } else if (x > 88.72283) {
            CHECK(out[i] == kInf);
        } else if (want < std::numeric_limits<float>::min()) {
            worstSub = std::max(worstSub, ulps(out[i], want));  // subnormal: absolute steps of 1.4e-45
        } else {
            worst = std::max(worst, ulps(out[i], want));
        }
    }
    CHECK(worst < 2.0);
    CHECK(worstSub < 2.0);
    const float special[] = {-kInf, kInf, std::numeric_limits<float>::quiet_NaN(), 0.0f, -0.0f};
    float got[5];
    vmath::expInto(special, got, 5);
    CHECK(got[0] == 0.0f);
    CHECK(got[1] == kInf);
    CHECK(std::isnan(got[2]));
    CHECK(got[3] == 1.0f);
    CHECK(got[4] == 1.0f);
}

TEST_CASE("the fused row softmax equals the double-precision softmax of its range and zeros elsewhere", "[vmath]") {
    std::mt19937 rng(7);
    std::normal_distribution<float> normal(0.0f, 6.0f);
    for (const std::int64_t width : {1, 7, 16, 31, 32, 33, 100, 4099}) {
        for (const std::int64_t begin : {std::int64_t{0}, std::int64_t{3}}) {
            INFO("width " << width << ", range from " << begin);
            const std::int64_t end = std::max<std::int64_t>(begin + 1, width - 2);
            std::vector<float> row(static_cast<std::size_t>(width + begin + 2));
            for (float& x : row) x = normal(rng);
            if (end - begin > 2) row[static_cast<std::size_t>(begin + 1)] = -kInf;  // a padded key inside the range
            const std::int64_t W = static_cast<std::int64_t>(row.size());
            std::vector<float> got = row;
            vmath::softmaxRow(got.data(), W, begin, end);
            double mx = -INFINITY, sum = 0;
            for (std::int64_t j = begin; j < end; ++j) mx = std::max(mx, static_cast<double>(row[j]));
            for (std::int64_t j = begin; j < end; ++j) sum += std::exp(row[j] - mx);
            double worst = 0, total = 0;
            for (std::int64_t j = 0; j < W; ++j) {
                const double want = j >= begin && j < end ? std::exp(row[j] - mx) / sum : 0.0;
                if (want == 0.0) CHECK(got[static_cast<std::size_t>(j)] == 0.0f);  // masked and outside: exactly 0
                worst = std::max(worst, std::fabs(got[static_cast<std::size_t>(j)] - want));
                total += got[static_cast<std::size_t>(j)];
            }
            CHECK(worst < 2e-7);
            CHECK(total == Approx(1.0).epsilon(1e-6));
        }
    }
}

TEST_CASE("the fused row softmax gives NaN rows where ATen's softmax does", "[vmath]") {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const std::vector<std::vector<float>> rows = {
            {-kInf, -kInf, -kInf},  // no key allowed
            {0.5f, nan, 1.0f},      // a NaN logit
            {0.5f, kInf, 1.0f},     // +inf: inf - inf
    };
    for (std::vector<float> row : rows) {
        vmath::softmaxRow(row.data(), 3, 0, 3);
        for (float x : row) CHECK(std::isnan(x));
    }
    std::vector<float> empty = {1.0f, 2.0f, 3.0f};
    vmath::softmaxRow(empty.data(), 3, 2, 2);  // a row that sees no key
    for (float x : empty) CHECK(std::isnan(x));
}

}  // namespace test_vector_math
