// ScoreSpec (scale, tanh soft-cap, ALiBi) and per-layer masks through attentionProbs, headProbs
// and attendDot, against a double-precision loop written from the definitions:
//   p_ij = softmax_j( (cap(scale · q_i·k_j) + slope · j) / T ) over allowed keys, exactly 0 elsewhere.
#include "attention/attention_ops.h"
#include "reference_attention.h"

#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <vector>

namespace test_score_spec {

using namespace attnscope;

using testref::maxDiff;
using testref::referenceMap;

TEST_CASE("soft-capped and ALiBi logits match the definition in every path", "[attention][score]") {
    at::manual_seed(11);
    const std::int64_t H = 4, G = 2, n = 37, d = 16;
    // Large q·k so the soft-cap bites (|scale · q·k| well above the cap).
    const at::Tensor q = at::randn({H, n, d}) * 3, k = at::randn({G, n, d}) * 3;
    ScoreSpec score;
    score.scale = 0.25;
    SECTION("soft-cap, causal, grouped kv") {
        score.softcap = 5.0;
        MaskSpec mask;
        mask.causal = true;
        const at::Tensor all = attentionProbs(q, k, additiveMask(mask, n, n, q.options()), score, 0.7);
        for (int h = 0; h < H; ++h) {
            const auto ref = referenceMap(q[h], k[h / 2], mask, 0.25, 5.0, 0.0, 0.7);
            CHECK(maxDiff(all[h], ref) < 1e-6);
            CHECK(maxDiff(headProbs(q[h], k[h / 2], mask, score, h, 0.7), ref) < 1e-6);  // blocked causal path
        }
        // The cap changes the map: without it the rows are far sharper.
        CHECK(maxDiff(all[0], referenceMap(q[0], k[0], mask, 0.25, 0.0, 0.0, 0.7)) > 1e-2);
    }
    SECTION("ALiBi slopes per head, sliding window") {
        score.alibiSlopes = {0.5, 0.25, 0.125, 0.0625};
        MaskSpec mask;
        mask.causal = true;
        mask.window = 5;
        const at::Tensor all = attentionProbs(q, k, additiveMask(mask, n, n, q.options()), score, 1.3);
        for (int h = 0; h < H; ++h) {
            const auto ref = referenceMap(q[h], k[h / 2], mask, 0.25, 0.0, score.alibiSlopes[h], 1.3);
            CHECK(maxDiff(all[h], ref) < 1e-6);
            CHECK(maxDiff(headProbs(q[h], k[h / 2], mask, score, h, 1.3), ref) < 1e-6);
        }
        // Causal without a window: headProbs takes its blocked path, one head's slope on [n, m] scores.
        mask.window = 0;
        const at::Tensor causal = attentionProbs(q, k, additiveMask(mask, n, n, q.options()), score, 1.3);
        for (int h = 0; h < H; ++h) {
            const auto ref = referenceMap(q[h], k[h / 2], mask, 0.25, 0.0, score.alibiSlopes[h], 1.3);
            CHECK(maxDiff(causal[h], ref) < 1e-6);
            CHECK(maxDiff(headProbs(q[h], k[h / 2], mask, score, h, 1.3), ref) < 1e-6);
        }
        mask.window = 5;
        // Keys outside the window are exactly 0.
        CHECK(all[1][20][15].item<float>() == 0.0f);
        CHECK(all[1][20][16].item<float>() > 0.0f);
    }
    SECTION("attendDot's context is the map times v, masked heads zeroed") {
        score.softcap = 2.0;
        score.alibiSlopes = {0.3, 0.2, 0.1, 0.05};
        MaskSpec mask;
        mask.causal = true;
        const at::Tensor v = at::randn({G, n, 8});
        LayerRun run;
        run.temperature = 0.8;
        run.maskedHeads = {2};
        const at::Tensor ctx = attendDot(q, k, v, mask, score, run);
        for (int h = 0; h < H; ++h) {
            const auto ref = referenceMap(q[h], k[h / 2], mask, 0.25, 2.0, score.alibiSlopes[h], 0.8);
            const at::Tensor P = at::tensor(ref, at::kDouble).view({n, n});
            const at::Tensor want = h == 2 ? at::zeros({n, 8}, at::kDouble) : at::mm(P, v[h / 2].to(at::kDouble));
            CHECK((ctx[h].to(at::kDouble) - want).abs().max().item<double>() < 1e-5);
        }
    }
    SECTION("a slope count that is not the head count is refused") {
        score.alibiSlopes = {0.5, 0.25};
        CHECK_THROWS(attentionProbs(q, k, {}, score, 1.0));
    }
}

}  // namespace test_score_spec
