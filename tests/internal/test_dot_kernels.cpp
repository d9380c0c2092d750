// The forward's own AVX-512 kernels (attention/dot_kernels.h) against double-precision loops on
// shapes that cross every tile edge (rows 1-7 and 64, panels 1-5, 127-300 keys, value widths 16
// to 128, strided rows), and blockedAttend through them against the definition and against the
// BLAS path. Reported as skipped on a CPU without AVX-512F, where blockedAttend never uses them.
#include "attention/attention_ops.h"
#include "attention/blocked_attention.h"
#include "attention/dot_kernels.h"
#include "reference_attention.h"

#include <ATen/ATen.h>
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

namespace test_dot_kernels {

using namespace attnscope;

namespace {

bool skipped() {
    if (dotk::supported()) return false;
    WARN("no AVX-512F on this CPU: the kernels' tests are skipped (blockedAttend runs the BLAS path)");
    return true;
}

struct ConfigScope {
    BlockedConfig saved = blockedConfig();
    ~ConfigScope() { setBlockedConfig(saved); }
};

}  // namespace

TEST_CASE("packKeys lays keys out in 16-key panels, dimension-major, zero past the last key", "[attention][kernels]") {
    const std::int64_t m = 37, d = 5, ldk = 7;
    std::vector<float> k(m * ldk);
    for (std::size_t i = 0; i < k.size(); ++i) k[i] = static_cast<float>(i) + 0.5f;
    std::vector<float> out(dotk::panels(m) * d * dotk::kPanel, -1.0f);
    REQUIRE(dotk::panels(m) == 3);
    dotk::packKeys(k.data(), m, d, ldk, out.data());
    for (std::int64_t p = 0; p < 3; ++p)
        for (std::int64_t j = 0; j < d; ++j)
            for (std::int64_t l = 0; l < 16; ++l) {
                const std::int64_t key = p * 16 + l;
                INFO("panel " << p << " dim " << j << " lane " << l);
                CHECK(out[(p * d + j) * 16 + l] == (key < m ? k[key * ldk + j] : 0.0f));
            }
}

TEST_CASE("dotk::scores equals alpha q k^T in double on every tile shape and stored width", "[attention][kernels]") {
    if (skipped()) return;
    for (const std::int64_t d : {1, 8, 64, 80}) {
        const std::int64_t m = 90, ldq = d + 3;  // 6 panels, the last one 10 keys
        at::manual_seed(static_cast<std::uint64_t>(d));
        const at::Tensor q = at::randn({64, ldq}), k = at::randn({m, d});
        const auto qa = q.accessor<float, 2>(), ka = k.accessor<float, 2>();
        std::vector<float> packed(dotk::panels(m) * d * 16);
        dotk::packKeys(k.data_ptr<float>(), m, d, d, packed.data());
        for (const std::int64_t len : {1, 2, 3, 4, 5, 6, 7, 13, 64})
            for (const std::int64_t p0 : {0, 1})
                for (const std::int64_t count : {1, 2, 3, 4, 5})
                    for (const std::int64_t width : {count * 16, count * 16 - 5}) {
                        INFO("d " << d << ", " << len << " rows, panels " << p0 << " + " << count << ", " << width
                                  << " columns");
                        const std::int64_t lds = count * 16 + 5;
                        std::vector<float> s(len * lds, 7.0f);
                        dotk::scores(q.data_ptr<float>(), ldq, len, d, packed.data(), p0, count, width, 0.3f, s.data(),
                                     lds);
                        double worst = 0;
                        for (std::int64_t r = 0; r < len; ++r) {
                            for (std::int64_t c = 0; c < width; ++c) {
                                const std::int64_t key = p0 * 16 + c;
                                double want = 0;
                                for (std::int64_t j = 0; j < d && key < m; ++j)
                                    want += static_cast<double>(qa[r][j]) * ka[key][j];
                                worst = std::max(worst, std::abs(s[r * lds + c] - 0.3 * want));
                            }
                            for (std::int64_t c = width; c < lds; ++c) CHECK(s[r * lds + c] == 7.0f);  // untouched
                        }
                        CHECK(worst < 2e-5 * std::sqrt(static_cast<double>(d)));
                    }
    }
}

TEST_CASE("dotk::weightedSum equals scale . p v in double across key passes and value widths", "[attention][kernels]") {
    if (skipped()) return;
    for (const std::int64_t dv : {16, 48, 64, 80, 128}) {
        const std::int64_t maxWidth = 300, ldp = maxWidth + 2, ldv = dv + 16, ldo = dv + 8;
        at::manual_seed(static_cast<std::uint64_t>(dv));
        const at::Tensor p = at::rand({64, ldp}), v = at::randn({maxWidth, ldv}), scale = at::rand({64}) + 0.5;
        const auto pa = p.accessor<float, 2>(), va = v.accessor<float, 2>();
        const auto sa = scale.accessor<float, 1>();
        for (const std::int64_t len : {1, 2, 5, 6, 7, 64})
            for (const std::int64_t width : {1, 127, 128, 129, 300}) {
                INFO(dv << " values, " << len << " rows, " << width << " keys");
                std::vector<float> out(len * ldo, 9.0f);
                dotk::weightedSum(p.data_ptr<float>(), ldp, len, width, v.data_ptr<float>(), ldv, dv,
                                  scale.data_ptr<float>(), out.data(), ldo);
                double worst = 0;
                for (std::int64_t r = 0; r < len; ++r) {
                    for (std::int64_t c = 0; c < dv; ++c) {
                        double want = 0;
                        for (std::int64_t w = 0; w < width; ++w) want += static_cast<double>(pa[r][w]) * va[w][c];
                        worst = std::max(worst, std::abs(out[r * ldo + c] - sa[r] * want));
                    }
                    for (std::int64_t c = dv; c < ldo; ++c) CHECK(out[r * ldo + c] == 9.0f);  // untouched
                }
                CHECK(worst < 1e-6 * static_cast<double>(width) + 1e-6);
            }
    }
    std::vector<float> out(2 * 16, 9.0f);  // no keys: zeros
    const float one[2] = {1, 1};
    dotk::weightedSum(nullptr, 0, 2, 0, nullptr, 16, 16, one, out.data(), 16);
    for (float x : out) CHECK(x == 0.0f);
}

TEST_CASE("the forward's own kernels equal the definition and the BLAS path", "[attention][kernels][blocked]") {
    if (skipped()) return;
    struct Case {
        const char* name;
        std::int64_t n, m;
        bool causal;
        std::int64_t window;
    };
    const std::vector<Case> cases = {
            {"causal, n = 300", 300, 300, true, 0},
            {"causal with a window of 100 (spans not on panel edges)", 257, 257, true, 100},
            {"causal, 11 keys before the queries", 129, 140, true, 0},
            {"bidirectional", 200, 200, false, 0},
            {"bidirectional window of 20", 131, 131, false, 20},
            {"one token", 1, 1, true, 0},
    };
    const std::int64_t H = 6, G = 2, d = 64;
    const double scale = 0.125, temperature = 0.7;
    ConfigScope restore;
    bool differs = false;  // somewhere the two paths round differently: the kernels did run
    for (const std::int64_t dv : {16, 64, 80}) {
        for (const Case& c : cases) {
            INFO(c.name << ", values " << dv);
            at::manual_seed(static_cast<std::uint64_t>(c.n + dv));
            // q as the projections give it: [n, H, d] viewed as [H, n, d] (rows strided).
            const at::Tensor q = (at::randn({c.n, H, d}) * 1.5).transpose(0, 1);
            const at::Tensor k = at::randn({G, c.m, d}) * 1.5, v = at::randn({G, c.m, dv});
            MaskSpec mask;
            mask.causal = c.causal;
            mask.window = c.window;
            ScoreSpec score;
            score.scale = scale;
            LayerRun run;
            run.temperature = temperature;
            run.maskedHeads = {1};
            setBlockedConfig({37, Striping::Rows, 2, true});
            const at::Tensor own = attendDot(q, k, v, mask, score, run);
            setBlockedConfig({37, Striping::Rows, 2, false});
            const at::Tensor blas = attendDot(q, k, v, mask, score, run);
            differs = differs || !at::equal(own, blas);
            for (int h = 0; h < H; ++h) {
                const auto ref = testref::referenceMap(q[h], k[h / 3], mask, scale, 0, 0, temperature);
                const at::Tensor P = at::tensor(ref, at::kDouble).view({c.n, c.m});
                const at::Tensor want =
                        h == 1 ? at::zeros({c.n, dv}, at::kDouble) : at::mm(P, v[h / 3].to(at::kDouble));
                // Within float32's reach of the definition, and as close to it as the BLAS path.
                const double ownError = (own[h].to(at::kDouble) - want).abs().max().item<double>();
                const double blasError = (blas[h].to(at::kDouble) - want).abs().max().item<double>();
                CHECK(ownError < 1e-5);
                CHECK(ownError <= 2 * blasError + 1e-7);
            }
        }
    }
    CHECK(differs);
}

}  // namespace test_dot_kernels
