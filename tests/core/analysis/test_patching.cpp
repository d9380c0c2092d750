// Activation patching (analysis/patching.h): per-head scores against the double-precision Llama
// reference patched through its own hook; the ends (the one differing embedding patched gives 1,
// activations that do not differ give 0); refusals.
#include "attnscope/analysis/patching.h"
#include "attnscope/runtime/error.h"
#include "family_checks.h"

#include <catch2/catch.hpp>

namespace test_patching {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

const std::vector<long long> kClean = {3, 17, 0, 39, 22, 5, 11};
const std::vector<long long> kCorrupt = {3, 17, 8, 39, 22, 5, 11};  // differs at position 2 only

double referenceLd(const Reference& r, std::int64_t T, std::int64_t T2) { return r.logits[T] - r.logits[T2]; }

}  // namespace

TEST_CASE("per-head patching scores equal the reference run with the clean head's output patched in",
          "[analysis][patching]") {
    LlamaSpec spec;  // 4 query heads over 2 kv heads
    const Checkpoint c = makeLlama(spec, 12);
    const auto model = writeAndLoad(c, "patch-llama");
    const std::int64_t T = 9, T2 = 4;
    PatchRequest request;
    request.token = T;
    request.minus = T2;
    const PatchResult got = activationPatching(*model, ids64(kClean), ids64(kCorrupt), request);
    REQUIRE(got.rows == spec.layers);
    REQUIRE(got.cols == spec.heads);

    const Reference clean = referenceLlama(c, spec, kClean);
    const Reference corrupt = referenceLlama(c, spec, kCorrupt);
    const double ldClean = referenceLd(clean, T, T2), ldCorrupt = referenceLd(corrupt, T, T2);
    CHECK(got.ldClean == Approx(ldClean).margin(1e-4));
    CHECK(got.ldCorrupt == Approx(ldCorrupt).margin(1e-4));
    const int d = llamaHeadDim(spec);
    double worst = 0;
    for (int l = 0; l < spec.layers; ++l)
        for (int h = 0; h < spec.heads; ++h) {
            const Reference patched =
                    referenceLlama(c, spec, kCorrupt, [&](int layer, std::vector<std::vector<double>>& ctx) {
                        if (layer != l) return;
                        for (std::size_t i = 0; i < ctx.size(); ++i)
                            for (int e = 0; e < d; ++e) ctx[i][h * d + e] = clean.contexts[l][i][h * d + e];
                    });
            const double want = (referenceLd(patched, T, T2) - ldCorrupt) / (ldClean - ldCorrupt);
            worst = std::max(worst, std::abs(got.scores[l * spec.heads + h] - want));
        }
    CHECK(worst < 1e-4);
}

TEST_CASE("patching's ends: the differing embedding gives 1, activations that do not differ give 0",
          "[analysis][patching]") {
    LlamaSpec spec;
    const auto model = writeAndLoad(makeLlama(spec, 13), "patch-ends");
    PatchRequest request;
    request.token = 9;
    request.what = PatchWhat::Resid;
    const PatchResult resid = activationPatching(*model, ids64(kClean), ids64(kCorrupt), request);
    REQUIRE(resid.rows == spec.layers);
    REQUIRE(resid.cols == static_cast<int>(kClean.size()));
    CHECK(resid.scores[2] == Approx(1.0).margin(1e-5));  // layer 0, the one token that differs
    for (int p : {0, 1, 3, 4, 5, 6}) CHECK(std::abs(resid.scores[p]) < 1e-6);
    for (const PatchWhat what : {PatchWhat::AttnOut, PatchWhat::MlpOut}) {
        request.what = what;
        const PatchResult r = activationPatching(*model, ids64(kClean), ids64(kCorrupt), request);
        // Causal: before the differing position nothing differs, in any layer.
        for (int l = 0; l < r.rows; ++l)
            for (int p : {0, 1}) CHECK(std::abs(r.scores[l * r.cols + p]) < 1e-6);
    }
}

TEST_CASE("patching refuses what it cannot score, naming it", "[analysis][patching]") {
    LlamaSpec spec;
    const auto model = writeAndLoad(makeLlama(spec, 14), "patch-refusals");
    PatchRequest request;
    request.token = 9;
    CHECK_THROWS_WITH(activationPatching(*model, {1, 2, 3}, {1, 2}, request),
                      Catch::Contains("same length (3 and 2 tokens)"));
    CHECK_THROWS_WITH(activationPatching(*model, {1, 2, 3}, {1, 2, 3}, request),
                      Catch::Contains("same logit difference") && Catch::Contains("undefined"));
    request.token = 48;
    CHECK_THROWS_WITH(activationPatching(*model, {1, 2, 3}, {1, 4, 3}, request),
                      Catch::Contains("--token 48 is outside the vocabulary (0..47)"));
    request.token = 9;
    request.position = 3;
    CHECK_THROWS_WITH(activationPatching(*model, {1, 2, 3}, {1, 4, 3}, request),
                      Catch::Contains("--position 3 is outside the input (0..2)"));
    BertSpec bert;
    request.position = -1;
    CHECK_THROWS_WITH(activationPatching(*writeAndLoad(makeBert(bert, 2), "patch-bert"), {1, 2}, {1, 3}, request),
                      Catch::Contains("decoder-only language model; bert is not one"));
}

TEST_CASE("attribution patching approaches the exact scores where the runs differ little", "[analysis][patching]") {
    LlamaSpec spec;
    Checkpoint c = makeLlama(spec, 17);
    // Token 8's embedding is token 0's plus 1e-3 of another row: the corrupt run is a small
    // perturbation of the clean one, where the first-order approximation is close to exact.
    auto& embed = c.tensors.at("model.embed_tokens.weight").values;
    const int E = spec.hidden;
    for (int e = 0; e < E; ++e) embed[8 * E + e] = embed[0 * E + e] + 1e-3f * embed[5 * E + e];
    const auto model = writeAndLoad(c, "patch-attribution");
    for (const PatchWhat what : {PatchWhat::Heads, PatchWhat::Resid, PatchWhat::AttnOut, PatchWhat::MlpOut}) {
        PatchRequest exact;
        exact.token = 9;
        exact.minus = 4;
        exact.what = what;
        PatchRequest approx = exact;
        approx.attribution = true;
        const PatchResult a = activationPatching(*model, ids64(kClean), ids64(kCorrupt), exact);
        const PatchResult b = activationPatching(*model, ids64(kClean), ids64(kCorrupt), approx);
        REQUIRE(a.scores.size() == b.scores.size());
        CHECK(b.ldClean == a.ldClean);
        // The gradient run attends through autograd's unblocked softmax, the exact one through the
        // blocked kernels: the same LD to float32 rounding (1.4e-6 seen under the sanitizers).
        CHECK(b.ldCorrupt == Approx(a.ldCorrupt).margin(1e-5));
        double worst = 0, largest = 0;
        for (std::size_t i = 0; i < a.scores.size(); ++i) {
            worst = std::max(worst, double(std::abs(a.scores[i] - b.scores[i])));
            largest = std::max(largest, double(std::abs(a.scores[i])));
        }
        INFO("what " << static_cast<int>(what) << ": largest exact score " << largest);
        CHECK(largest > 0.1);  // the comparison is not between zeros
        CHECK(worst < 1e-2);   // first order in a 1e-3 perturbation (2e-3 seen)
    }
}

}  // namespace test_patching
