// The logit lens and direct logit attribution (analysis/logit_lens.h) against the independent
// double-precision GPT-2 and Llama references, whose own hooks give the residual streams, each
// head's output through W_O and each MLP output; the lens and DLA are recomputed here from those
// with the definitions of issue 32.
#include "attnscope/analysis/logit_lens.h"
#include "attnscope/runtime/error.h"
#include "family_checks.h"
#include "reference_gpt2.h"
#include "fixtures_alibi.h"
#include "fixtures_gemma.h"
#include "fixtures_neox.h"
#include "reference_math.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace test_logit_lens {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

using Vec = std::vector<double>;

Vec logSoftmax(const Vec& z) {
    const double mx = *std::max_element(z.begin(), z.end());
    double sum = 0;
    for (double v : z) sum += std::exp(v - mx);
    Vec out(z.size());
    for (std::size_t i = 0; i < z.size(); ++i) out[i] = z[i] - mx - std::log(sum);
    return out;
}

Vec unembed(const Vec& y, const Tensor& head) {
    const std::size_t E = y.size(), V = head.values.size() / E;
    Vec z(V, 0.0);
    for (std::size_t v = 0; v < V; ++v)
        for (std::size_t e = 0; e < E; ++e) z[v] += head.values[v * E + e] * y[e];
    return z;
}

Vec rmsNormRow(const Vec& x, const Tensor& w, double eps) {
    double ms = 0;
    for (double v : x) ms += v * v;
    ms /= static_cast<double>(x.size());
    Vec y(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] / std::sqrt(ms + eps) * w.values[i];
    return y;
}

// Checks the lens against log_softmax(unembed(finalNorm(h))) of every reference residual row.
template <class FinalNorm>
void checkLens(const LogitLens& lens, const std::vector<std::vector<Vec>>& residuals, const Tensor& head,
               FinalNorm finalNorm, std::int64_t token) {
    REQUIRE(lens.rows == static_cast<int>(residuals.size()));
    double worst = 0;
    int idsCompared = 0;
    for (int l = 0; l < lens.rows; ++l)
        for (int i = 0; i < lens.tokens; ++i) {
            const Vec lp = logSoftmax(unembed(finalNorm(residuals[l][i]), head));
            std::vector<int> order(lp.size());
            std::iota(order.begin(), order.end(), 0);
            std::sort(order.begin(), order.end(), [&](int a, int b) { return lp[a] > lp[b]; });
            for (int r = 0; r < lens.k; ++r) {
                const std::size_t at = (static_cast<std::size_t>(l) * lens.tokens + i) * lens.k + r;
                // The ids must agree wherever the reference's ranks are not a near tie.
                if (lp[order[r]] - lp[order[r + 1]] > 1e-4) {
                    CHECK(lens.topIds[at] == order[r]);
                    ++idsCompared;
                }
                worst = std::max(worst, std::abs(lens.topLogProbs[at] - lp[order[r]]));
            }
            worst = std::max(worst, std::abs(lens.tokenLogProbs[static_cast<std::size_t>(l) * lens.tokens + i] -
                                             lp[static_cast<std::size_t>(token)]));
        }
    CHECK(idsCompared > lens.rows * lens.tokens * lens.k / 2);
    CHECK(worst < 1e-4);
}

}  // namespace

TEST_CASE("logit lens and DLA of GPT-2 equal the double-precision reference's hooks", "[analysis][lens]") {
    Gpt2Spec spec;
    spec.untiedHead = true;
    const Gpt2Checkpoint c = makeGpt2(spec, 21);
    const auto dir = freshDir("lens-gpt2");
    writeGpt2Folder(dir, c);
    const auto model = loadCpu(dir);
    const std::vector<long long> ids = {3, 17, 0, 39, 22, 5, 5, 11, 30};
    const Gpt2Reference ref = referenceGpt2(c, ids);
    const Tensor& head = c.get("lm_head.weight");
    const auto ln = [&](const Vec& x) { return layerNorm(x, c.get("ln_f.weight"), c.get("ln_f.bias"), spec.eps); };

    RunOptions run;
    run.recordResiduals = true;
    run.attributionPosition = 6;
    const auto trace = model->forward(ids64(ids), run);
    LensOptions lo;
    lo.topK = 4;
    lo.token = 7;
    checkLens(logitLens(*trace, lo), ref.residuals, head, ln, 7);

    // DLA of logit(11) - logit(2) at position 6, the final LayerNorm linearised there.
    const std::int64_t T = 11, T2 = 2;
    const LogitAttribution dla = directLogitAttribution(*trace, T, T2);
    const Vec& final = ref.residuals.back()[6];
    const int E = spec.embd;
    const double mean = std::accumulate(final.begin(), final.end(), 0.0) / E;
    double var = 0;
    for (double v : final) var += (v - mean) * (v - mean);
    const double sigma = std::sqrt(var / E + spec.eps);
    Vec u(E);
    for (int e = 0; e < E; ++e) u[e] = head.values[T * E + e] - head.values[T2 * E + e];
    const auto part = [&](const Vec& comp) {
        const double m = std::accumulate(comp.begin(), comp.end(), 0.0) / E;
        double s = 0;
        for (int e = 0; e < E; ++e) s += c.get("ln_f.weight").values[e] * (comp[e] - m) / sigma * u[e];
        return s;
    };
    REQUIRE(dla.layers == spec.layers);
    REQUIRE(dla.heads == spec.heads);
    double worst = 0;
    for (int l = 0; l < spec.layers; ++l) {
        for (int h = 0; h < spec.heads; ++h)
            worst = std::max(worst, std::abs(dla.perHead[l * spec.heads + h] - part(ref.headOut[l][h][6])));
        worst = std::max(worst, std::abs(dla.attnBias[l] - part(ref.attnBias[l])));
        worst = std::max(worst, std::abs(dla.mlp[l] - part(ref.mlpOut[l][6])));
    }
    CHECK(worst < 1e-4);
    const Vec finalLogits = unembed(ln(final), head);
    CHECK(dla.logitDiff == Approx(finalLogits[T] - finalLogits[T2]).margin(1e-4));
    CHECK(dla.sum == Approx(dla.logitDiff).margin(1e-4));  // completeness
    CHECK(dla.position == 6);
}

TEST_CASE("logit lens and DLA of a grouped-query Llama equal the double-precision reference's hooks",
          "[analysis][lens]") {
    LlamaSpec spec;  // 4 query heads over 2 kv heads
    const Checkpoint c = makeLlama(spec, 8);
    const auto model = writeAndLoad(c, "lens-llama");
    const std::vector<long long> ids = {3, 17, 0, 39, 22, 5, 11, 30};
    const Reference ref = referenceLlama(c, spec, ids);
    const Tensor& head = c.get("lm_head.weight");
    const Tensor& gamma = c.get("model.norm.weight");
    const auto rms = [&](const Vec& x) { return rmsNormRow(x, gamma, spec.eps); };

    RunOptions run;
    run.recordResiduals = true;
    run.attributionPosition = static_cast<std::int64_t>(ids.size()) - 1;
    const auto trace = model->forward(ids64(ids), run);
    LensOptions lo;
    lo.topK = 3;
    lo.token = 5;
    const LogitLens lens = logitLens(*trace, lo);
    checkLens(lens, ref.residuals, head, rms, 5);
    // Row L is the model's own output: its top log-probability is the next-token logits' best.
    const Vec own = logSoftmax(ref.logits);
    const std::size_t lastRow = (static_cast<std::size_t>(lens.rows - 1) * lens.tokens + lens.tokens - 1) * lens.k;
    CHECK(lens.topLogProbs[lastRow] == Approx(*std::max_element(own.begin(), own.end())).margin(1e-4));

    const std::int64_t T = 9;  // logit(T) alone
    const LogitAttribution dla = directLogitAttribution(*trace, T);
    const std::size_t P = ids.size() - 1;
    const Vec& final = ref.residuals.back()[P];
    double ms = 0;
    for (double v : final) ms += v * v;
    const double r = std::sqrt(ms / spec.hidden + spec.eps);
    const auto part = [&](const Vec& comp) {
        double s = 0;
        for (int e = 0; e < spec.hidden; ++e) s += gamma.values[e] * comp[e] / r * head.values[T * spec.hidden + e];
        return s;
    };
    double worst = 0;
    for (int l = 0; l < spec.layers; ++l) {
        for (int h = 0; h < spec.heads; ++h)
            worst = std::max(worst, std::abs(dla.perHead[l * spec.heads + h] - part(ref.headOut[l][h][P])));
        worst = std::max(worst, std::abs(dla.mlp[l] - part(ref.mlpOut[l][P])));
        CHECK(dla.attnBias[l] == 0.0);  // no o_proj bias
    }
    Vec embed(spec.hidden);
    for (int e = 0; e < spec.hidden; ++e) embed[e] = ref.residuals[0][P][e];
    worst = std::max(worst, std::abs(dla.embed - part(embed)));
    CHECK(worst < 1e-4);
    CHECK(dla.logitDiff == Approx(ref.logits[T]).margin(1e-4));
    CHECK(dla.sum == Approx(dla.logitDiff).margin(1e-4));
    CHECK(dla.finalBias == 0.0);  // RMSNorm has no β, the head no bias
}

TEST_CASE("the logit lens and DLA refuse what they cannot read, naming it", "[analysis][lens]") {
    LlamaSpec spec;
    const auto model = writeAndLoad(makeLlama(spec, 3), "lens-refusals");
    const std::vector<std::int64_t> ids = {1, 2, 3, 4};
    const auto plain = model->forward(ids);
    CHECK_THROWS_WITH(logitLens(*plain), Catch::Contains("recorded residuals"));
    CHECK_THROWS_WITH(directLogitAttribution(*plain, 1), Catch::Contains("attribution position"));

    RunOptions run;
    run.recordResiduals = true;
    run.attributionPosition = 1;
    const auto trace = model->forward(ids, run);
    LensOptions tooMany;
    tooMany.topK = spec.vocab + 1;
    CHECK_THROWS_WITH(logitLens(*trace, tooMany), Catch::Contains("outside 1..48"));
    CHECK_THROWS_WITH(directLogitAttribution(*trace, spec.vocab), Catch::Contains("--token 48 is outside"));
    CHECK_THROWS_WITH(directLogitAttribution(*trace, 1, -1), Catch::Contains("--minus -1 is outside"));
    run.attributionPosition = 4;
    CHECK_THROWS_WITH(model->forward(ids, run), Catch::Contains("attribution position 4 is outside the input (0..3)"));

    BertSpec bert;
    const auto encoder = writeAndLoad(makeBert(bert, 2), "lens-bert");
    run.attributionPosition = -1;
    const auto encoded = encoder->forward(ids, run);
    CHECK_THROWS_WITH(logitLens(*encoded), Catch::Contains("decoder-only language model"));
}

namespace {

// DLA's parts sum to its logit difference, and that difference is the model's own next-token
// logit (before its final soft-cap, cap · tanh(z / cap) after it), on one family's checkpoint.
void checkCompleteness(const std::shared_ptr<const Model>& model, double finalSoftcap = 0) {
    const std::vector<std::int64_t> ids = {3, 17, 0, 39, 22, 5, 11};
    RunOptions run;
    run.attributionPosition = static_cast<std::int64_t>(ids.size()) - 1;
    run.recordResiduals = true;
    const auto trace = model->forward(ids, run);
    const std::int64_t T = 9;
    const LogitAttribution dla = directLogitAttribution(*trace, T);
    INFO(model->info().family);
    CHECK(dla.sum == Approx(dla.logitDiff).margin(1e-4));
    const double own = trace->nextTokenLogits().at(T);
    if (finalSoftcap > 0)
        CHECK(own == Approx(finalSoftcap * std::tanh(dla.logitDiff / finalSoftcap)).margin(1e-4));
    else
        CHECK(own == Approx(dla.logitDiff).margin(1e-4));
    // The lens's last row is the model's own distribution at every position (pre-cap).
    LensOptions lo;
    lo.topK = 1;
    lo.token = T;
    const LogitLens lens = logitLens(*trace, lo);
    double z = -1e300, sum = 0;
    for (float v : trace->nextTokenLogits()) z = std::max(z, double(v));
    if (finalSoftcap <= 0) {
        for (float v : trace->nextTokenLogits()) sum += std::exp(v - z);
        const std::size_t last = static_cast<std::size_t>(lens.rows - 1) * lens.tokens + lens.tokens - 1;
        CHECK(lens.tokenLogProbs[last] == Approx(own - z - std::log(sum)).margin(1e-4));
    }
}

}  // namespace

TEST_CASE("DLA is complete on parallel-residual, sandwich-norm, soft-capped and ALiBi decoders", "[analysis][lens]") {
    SECTION("GPT-NeoX, parallel residual") { checkCompleteness(writeAndLoad(makeNeox(NeoxSpec{}, 4), "dla-neox")); }
    SECTION("GPT-J, parallel residual with a biased head") {
        checkCompleteness(writeAndLoad(makeGptj(GptjSpec{}, 4), "dla-gptj"));
    }
    SECTION("Phi, parallel residual with a biased head") {
        checkCompleteness(writeAndLoad(makePhi(PhiSpec{}, 4), "dla-phi"));
    }
    SECTION("Gemma-2: sandwich norms and a final soft-cap") {
        RmsFamilySpec g;
        g.type = "gemma2";
        g.attnSoftcap = 20;
        g.finalSoftcap = 5;
        g.window = 4;
        checkCompleteness(writeAndLoad(makeRmsFamily(g, 4), "dla-gemma2"), g.finalSoftcap);
    }
    SECTION("OLMo-2: norms after attention and the MLP") {
        RmsFamilySpec o;
        o.type = "olmo2";
        checkCompleteness(writeAndLoad(makeRmsFamily(o, 4), "dla-olmo2"));
    }
    SECTION("BLOOM: ALiBi, an embedding LayerNorm") {
        checkCompleteness(writeAndLoad(makeBloom(BloomSpec{}, 4), "dla-bloom"));
    }
    SECTION("Falcon: new architecture, two norms in parallel") {
        FalconSpec f;
        f.newArch = true;
        f.kvHeads = 2;
        checkCompleteness(writeAndLoad(makeFalcon(f, 4), "dla-falcon"));
    }
    SECTION("OPT with do_layer_norm_before false and BLOOM with its residual after the norm are refused") {
        OptSpec post;
        post.preNorm = false;
        RunOptions run;
        run.attributionPosition = 0;
        CHECK_THROWS_WITH(writeAndLoad(makeOpt(post, 4), "dla-opt-post")->forward({1, 2}, run),
                          Catch::Contains("post-norm") && Catch::Contains("pre-norm decoders"));
        BloomSpec b;
        b.residualAfterNorm = true;
        CHECK_THROWS_WITH(writeAndLoad(makeBloom(b, 4), "dla-bloom-post")->forward({1, 2}, run),
                          Catch::Contains("post-norm"));
    }
}

}  // namespace test_logit_lens
