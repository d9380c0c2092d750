// Issue 32's definitions against the independent double-precision references on four kinds of
// decoder: GPT-2 (LayerNorm, biases, Conv1D), Llama with grouped-query attention, GPT-NeoX
// (parallel residual, biases) and Gemma-2 (sandwich norms, attention and final soft-caps, sliding
// windows). The references' own hooks (reference_math.h) record and replace activations: the
// logit lens and DLA are recomputed from their residuals and parts, every patching mode is the
// reference run with the clean activation put in, and a knockout is the reference's maps with
// the knocked cells removed and the rows renormalised (the same as −∞ before the softmax).
#include "attnscope/analysis/logit_lens.h"
#include "attnscope/analysis/patching.h"
#include "family_checks.h"
#include "fixtures_gemma.h"
#include "fixtures_neox.h"
#include "reference_gpt2.h"
#include "reference_math.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <numeric>

namespace test_causal_references {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

using Vec = std::vector<double>;
using Rows = std::vector<Vec>;

const std::vector<long long> kClean = {3, 17, 0, 39, 22, 5, 11};
const std::vector<long long> kCorrupt = {3, 17, 8, 39, 22, 5, 11};  // differs at position 2 only
constexpr std::int64_t kT = 9, kT2 = 4;

double dot(const Vec& a, const Vec& b) { return std::inner_product(a.begin(), a.end(), b.begin(), 0.0); }

Vec tensorRow(const Tensor& t, std::size_t row) {
    const std::size_t w = t.values.size() / t.shape[0];
    return Vec(t.values.begin() + row * w, t.values.begin() + (row + 1) * w);
}

// A norm linearised at `at`: scale ⊙ (c − [centred] mean(c)) / σ(at), σ the norm's statistic there.
struct NormAt {
    Vec gain;  // γ (LayerNorm, Llama's RMSNorm) or 1 + γ (Gemma)
    Vec bias;  // β, or empty
    bool centred = false;
    double eps = 1e-5;

    double statistic(const Vec& at) const {
        const double mean = centred ? std::accumulate(at.begin(), at.end(), 0.0) / at.size() : 0.0;
        double s = 0;
        for (double v : at) s += (v - mean) * (v - mean);
        return std::sqrt(s / at.size() + eps);
    }
    Vec linear(const Vec& c, const Vec& at) const {
        const double mean = centred ? std::accumulate(c.begin(), c.end(), 0.0) / c.size() : 0.0, sigma = statistic(at);
        Vec y(c.size());
        for (std::size_t e = 0; e < c.size(); ++e) y[e] = gain[e] * (c[e] - mean) / sigma;
        return y;
    }
    Vec apply(const Vec& x) const {
        Vec y = linear(x, x);
        for (std::size_t e = 0; e < bias.size(); ++e) y[e] += bias[e];
        return y;
    }
};

NormAt normOf(const Tensor& gain, const Tensor* bias, double eps, bool plusOne) {
    NormAt n;
    n.gain.assign(gain.values.begin(), gain.values.end());
    if (plusOne)
        for (double& g : n.gain) g += 1;
    if (bias) n.bias.assign(bias->values.begin(), bias->values.end());
    n.centred = bias != nullptr;
    n.eps = eps;
    return n;
}

// One kind of decoder: its model, its reference forward (the hooks apply), its final norm and
// unembedding, and the parts of the final residual at a position that DLA attributes.
struct Kind {
    std::string name;
    std::shared_ptr<const void> checkpoint;  // keeps the tensors below alive
    std::shared_ptr<const Model> model;
    int layers = 0, heads = 0, headDim = 0;
    std::function<Reference(const std::vector<long long>&)> reference;
    NormAt finalNorm;
    const Tensor* unembed = nullptr;  // [vocab, hidden]
    // Head h's part of what layer l's attention adds at row p of a reference, and the rest of
    // what it adds (its output bias, through any post-norm), as the definitions split them.
    std::function<Vec(const Reference&, int l, int h, int p)> headPart;
    std::function<Vec(const Reference&, int l, int p)> biasPart;
};

// W [E, H·d] (nn.Linear's o_proj): head h's columns times its context.
Vec headThrough(const Tensor& w, const Vec& context, int h, int d) {
    const std::size_t E = w.shape[0], in = w.shape[1];
    Vec y(E, 0.0);
    for (std::size_t e = 0; e < E; ++e)
        for (int k = 0; k < d; ++k) y[e] += w.values[e * in + h * d + k] * context[h * d + k];
    return y;
}

Kind gpt2Kind() {
    Gpt2Spec spec;
    spec.untiedHead = true;
    auto c = std::make_shared<const Gpt2Checkpoint>(makeGpt2(spec, 31));
    const auto dir = freshDir("causal-ref-gpt2");
    writeGpt2Folder(dir, *c);
    Kind k{"gpt2", c, loadCpu(dir), spec.layers, spec.heads, spec.embd / spec.heads};
    k.reference = [c](const std::vector<long long>& ids) {
        const Gpt2Reference g = referenceGpt2(*c, ids);
        Reference r;
        r.probs = g.probs;
        r.residuals = g.residuals;
        r.mlpOut = g.mlpOut;
        r.headOut = g.headOut;
        r.logits = g.nextTokenLogits;
        return r;
    };
    k.finalNorm = normOf(c->get("ln_f.weight"), &c->get("ln_f.bias"), spec.eps, false);
    k.unembed = &c->get("lm_head.weight");
    k.headPart = [](const Reference& r, int l, int h, int p) { return r.headOut[l][h][p]; };
    k.biasPart = [c](const Reference&, int l, int) {
        const auto& b = c->get("h." + std::to_string(l) + ".attn.c_proj.bias").values;
        return Vec(b.begin(), b.end());
    };
    return k;
}

Kind llamaKind() {
    LlamaSpec spec;  // 4 query heads over 2 kv heads
    auto c = std::make_shared<const Checkpoint>(makeLlama(spec, 32));
    Kind k{"llama-gqa", c, writeAndLoad(*c, "causal-ref-llama"), spec.layers, spec.heads, llamaHeadDim(spec)};
    k.reference = [c, spec](const std::vector<long long>& ids) { return referenceLlama(*c, spec, ids); };
    k.finalNorm = normOf(c->get("model.norm.weight"), nullptr, spec.eps, false);
    k.unembed = &c->get("lm_head.weight");
    k.headPart = [](const Reference& r, int l, int h, int p) { return r.headOut[l][h][p]; };
    k.biasPart = [spec](const Reference&, int, int) { return Vec(spec.hidden, 0.0); };
    return k;
}

Kind neoxKind() {
    NeoxSpec spec;  // parallel residual, biased q/k/v and dense
    auto c = std::make_shared<const Checkpoint>(makeNeox(spec, 33));
    Kind k{"gpt-neox", c, writeAndLoad(*c, "causal-ref-neox"), spec.layers, spec.heads, spec.hidden / spec.heads};
    k.reference = [c, spec](const std::vector<long long>& ids) { return referenceNeox(*c, spec, ids); };
    k.finalNorm = normOf(c->get("gpt_neox.final_layer_norm.weight"), &c->get("gpt_neox.final_layer_norm.bias"),
                         spec.eps, false);
    k.unembed = &c->get("embed_out.weight");
    const auto dense = [c](int l) { return "gpt_neox.layers." + std::to_string(l) + ".attention.dense"; };
    k.headPart = [c, dense, d = k.headDim](const Reference& r, int l, int h, int p) {
        return headThrough(c->get(dense(l) + ".weight"), r.contexts[l][p], h, d);
    };
    k.biasPart = [c, dense](const Reference&, int l, int) {
        const auto& b = c->get(dense(l) + ".bias").values;
        return Vec(b.begin(), b.end());
    };
    return k;
}

Kind gemma2Kind() {
    RmsFamilySpec spec;
    spec.type = "gemma2";
    spec.attnSoftcap = 20;
    spec.finalSoftcap = 5;
    spec.window = 4;
    auto c = std::make_shared<const Checkpoint>(makeRmsFamily(spec, 34));
    Kind k{"gemma2", c, writeAndLoad(*c, "causal-ref-gemma2"), spec.layers, spec.heads, rmsHeadDim(spec)};
    k.reference = [c, spec](const std::vector<long long>& ids) { return referenceRmsFamily(*c, spec, ids); };
    k.finalNorm = normOf(c->get("model.norm.weight"), nullptr, spec.eps, true);
    k.unembed = &c->get("model.embed_tokens.weight");  // tied
    const auto layer = [](int l) { return "model.layers." + std::to_string(l) + "."; };
    // A head's output through o_proj and the post-attention norm linearised at the layer's whole
    // attention output there: (1 + γ_post) ⊙ z W_O^h / rms(o).
    k.headPart = [c, spec, layer, d = k.headDim](const Reference& r, int l, int h, int p) {
        const Tensor& wo = c->get(layer(l) + "self_attn.o_proj.weight");
        Vec o(spec.hidden, 0.0);
        for (int g = 0; g < spec.heads; ++g) {
            const Vec part = headThrough(wo, r.contexts[l][p], g, d);
            for (int e = 0; e < spec.hidden; ++e) o[e] += part[e];
        }
        const NormAt post = normOf(c->get(layer(l) + "post_attention_layernorm.weight"), nullptr, spec.eps, true);
        return post.linear(headThrough(wo, r.contexts[l][p], h, d), o);
    };
    k.biasPart = [spec](const Reference&, int, int) { return Vec(spec.hidden, 0.0); };
    return k;
}

std::vector<Kind> kinds() { return {gpt2Kind(), llamaKind(), neoxKind(), gemma2Kind()}; }

// logit(T) − logit(T2) at p of a reference run, before any final soft-cap.
double referenceLd(const Kind& k, const Reference& r, std::int64_t p) {
    const Vec y = k.finalNorm.apply(r.residuals.back()[p]);
    return dot(tensorRow(*k.unembed, kT), y) - dot(tensorRow(*k.unembed, kT2), y);
}

ActivationSite siteOf(PatchWhat what) {
    switch (what) {
        case PatchWhat::Heads: return ActivationSite::Context;
        case PatchWhat::Resid: return ActivationSite::Resid;
        case PatchWhat::AttnOut: return ActivationSite::AttnAdded;
        case PatchWhat::MlpOut: return ActivationSite::MlpAdded;
    }
    return ActivationSite::Resid;
}

// The definition's scores from the reference: the corrupt run with one clean activation put in.
std::vector<double> referencePatching(const Kind& k, PatchWhat what, double& ldClean, double& ldCorrupt) {
    const std::int64_t P = static_cast<std::int64_t>(kClean.size()) - 1;
    const ActivationSite site = siteOf(what);
    std::map<int, Rows> clean;  // layer -> the clean run's activation at `site`
    {
        const ScopedActivationHook record([&](ActivationSite s, int l, Rows& rows) {
            if (s == site) clean[l] = rows;
        });
        ldClean = referenceLd(k, k.reference(kClean), P);
    }
    ldCorrupt = referenceLd(k, k.reference(kCorrupt), P);
    const int cols = what == PatchWhat::Heads ? k.heads : static_cast<int>(kClean.size());
    std::vector<double> scores;
    for (int l = 0; l < k.layers; ++l)
        for (int c = 0; c < cols; ++c) {
            const ScopedActivationHook patch([&](ActivationSite s, int layer, Rows& rows) {
                if (s != site || layer != l) return;
                if (what != PatchWhat::Heads) {
                    rows[c] = clean.at(l)[c];
                    return;
                }
                for (std::size_t i = 0; i < rows.size(); ++i)
                    for (int e = 0; e < k.headDim; ++e) rows[i][c * k.headDim + e] = clean.at(l)[i][c * k.headDim + e];
            });
            scores.push_back((referenceLd(k, k.reference(kCorrupt), P) - ldCorrupt) / (ldClean - ldCorrupt));
        }
    return scores;
}

}  // namespace

TEST_CASE("the logit lens and DLA equal the references' own residuals and parts on four decoder kinds",
          "[analysis][lens][causal-refs]") {
    for (const Kind& k : kinds()) {
        INFO(k.name);
        const std::int64_t P = 5;
        RunOptions run;
        run.recordResiduals = true;
        run.attributionPosition = P;
        const auto trace = k.model->forward(ids64(kClean), run);
        const Reference ref = k.reference(kClean);
        REQUIRE(ref.residuals.size() == static_cast<std::size_t>(k.layers + 1));

        // Lens: every row's top log-probability and the log-probability of T, from the reference's streams.
        LensOptions lo;
        lo.topK = 1;
        lo.token = kT;
        const LogitLens lens = logitLens(*trace, lo);
        REQUIRE(lens.rows == k.layers + 1);
        double worstLens = 0;
        for (int l = 0; l <= k.layers; ++l)
            for (int i = 0; i < lens.tokens; ++i) {
                const Vec y = k.finalNorm.apply(ref.residuals[l][i]);
                Vec z(k.unembed->shape[0]);
                for (std::size_t v = 0; v < z.size(); ++v) z[v] = dot(tensorRow(*k.unembed, v), y);
                const double mx = *std::max_element(z.begin(), z.end());
                double sum = 0;
                for (double v : z) sum += std::exp(v - mx);
                const std::size_t at = static_cast<std::size_t>(l) * lens.tokens + i;
                worstLens = std::max(worstLens, std::abs(lens.topLogProbs[at] - (-std::log(sum))));
                worstLens = std::max(worstLens, std::abs(lens.tokenLogProbs[at] - (z[kT] - mx - std::log(sum))));
            }
        CHECK(worstLens < 1e-4);

        // DLA of logit(T) − logit(T2) at P, the final norm linearised at the final residual there.
        const LogitAttribution dla = directLogitAttribution(*trace, kT, kT2);
        const Vec& at = ref.residuals.back()[P];
        Vec u = tensorRow(*k.unembed, kT);
        const Vec u2 = tensorRow(*k.unembed, kT2);
        for (std::size_t e = 0; e < u.size(); ++e) u[e] -= u2[e];
        const auto part = [&](const Vec& c) { return dot(k.finalNorm.linear(c, at), u); };
        REQUIRE(dla.layers == k.layers);
        REQUIRE(dla.heads == k.heads);
        double worst = std::abs(dla.embed - part(ref.residuals[0][P]));
        for (int l = 0; l < k.layers; ++l) {
            for (int h = 0; h < k.heads; ++h)
                worst = std::max(worst, std::abs(dla.perHead[l * k.heads + h] - part(k.headPart(ref, l, h, P))));
            worst = std::max(worst, std::abs(dla.attnBias[l] - part(k.biasPart(ref, l, P))));
            worst = std::max(worst, std::abs(dla.mlp[l] - part(ref.mlpOut[l][P])));
        }
        CHECK(worst < 1e-4);
        CHECK(dla.finalBias == Approx(k.finalNorm.bias.empty() ? 0.0 : dot(k.finalNorm.bias, u)).margin(1e-5));
        CHECK(dla.logitDiff == Approx(referenceLd(k, ref, P)).margin(1e-4));  // before Gemma-2's soft-cap
        CHECK(dla.sum == Approx(dla.logitDiff).margin(1e-4));                 // completeness
    }
}

TEST_CASE("every patching mode equals the reference run with the clean activation put in, on four decoder kinds",
          "[analysis][patching][causal-refs]") {
    for (const Kind& k : kinds())
        for (const PatchWhat what : {PatchWhat::Heads, PatchWhat::Resid, PatchWhat::AttnOut, PatchWhat::MlpOut}) {
            INFO(k.name << ", what " << static_cast<int>(what));
            PatchRequest request;
            request.token = kT;
            request.minus = kT2;
            request.what = what;
            const PatchResult got = activationPatching(*k.model, ids64(kClean), ids64(kCorrupt), request);
            double ldClean = 0, ldCorrupt = 0;
            const std::vector<double> want = referencePatching(k, what, ldClean, ldCorrupt);
            CHECK(got.ldClean == Approx(ldClean).margin(1e-4));
            CHECK(got.ldCorrupt == Approx(ldCorrupt).margin(1e-4));
            REQUIRE(std::abs(ldClean - ldCorrupt) > 0.02);  // the scores are not a ratio of rounding errors
            REQUIRE(got.scores.size() == want.size());
            double worst = 0, largest = 0;
            for (std::size_t i = 0; i < want.size(); ++i) {
                worst = std::max(worst, std::abs(got.scores[i] - want[i]));
                largest = std::max(largest, std::abs(want[i]));
            }
            INFO("largest reference score " << largest);
            CHECK(largest > 0.05);
            CHECK(worst < 1e-3 * std::max(1.0, largest));
        }
}

TEST_CASE("a knockout equals the reference's maps with the cells removed and the rows renormalised",
          "[analysis][knockout][causal-refs]") {
    for (const Kind& k : kinds()) {
        INFO(k.name);
        const int n = static_cast<int>(kClean.size());
        RunOptions run;
        run.knockouts.push_back({{6, 4}, {0, 2}, 0, k.layers - 2});  // every layer but the last
        run.knockouts.push_back({{5}, {4}, k.layers - 1, k.layers - 1});
        const auto trace = k.model->forward(ids64(kClean), run);
        const ScopedProbsHook knock([&](int layer, int, Vec& probs) {
            for (const Knockout& ko : run.knockouts) {
                if (layer < ko.firstLayer || layer > ko.lastLayer) continue;
                for (std::int64_t q : ko.queries) {
                    for (std::int64_t key : ko.keys) probs[q * n + key] = 0;
                    double left = 0;
                    for (int j = 0; j < n; ++j) left += probs[q * n + j];
                    for (int j = 0; j < n; ++j) probs[q * n + j] /= left;
                }
            }
        });
        const Reference ref = k.reference(kClean);
        CHECK(maxMapDiff(*trace, ref) < 1e-5);
        // Gemma-2's next-token logits are after its final soft-cap, in both.
        CHECK(maxLogitDiff(trace->nextTokenLogits(), ref.logits) < 1e-4);
        // And the knockout changed something: the plain run's logits differ.
        CHECK(maxLogitDiff(k.model->forward(ids64(kClean))->nextTokenLogits(), ref.logits) > 1e-4);
    }
}

}  // namespace test_causal_references
