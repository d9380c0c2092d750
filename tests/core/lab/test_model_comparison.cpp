// Two models on one input (lab/model_comparison.h): two copies of the same weights give KL 0 in
// every head and in the output; a Q8_0 GGUF copy gives small positive per-head KL and output KL
// equal to those of the independent double-precision reference run on the full and the
// dequantised weights; models of different shapes or inputs are refused naming the difference.
#include "attnscope/lab/model_comparison.h"
#include "attnscope/runtime/error.h"
#include "family_checks.h"
#include "gguf_writer.h"

#include <cmath>

namespace test_model_comparison {

using namespace attnscope;
using namespace attnscope::testing;
namespace fs = std::filesystem;

namespace {

const std::vector<long long> kIds = {3, 17, 0, 47, 22, 5, 5, 11, 30, 1, 9};

LlamaSpec spec64() {
    LlamaSpec s;
    s.hidden = 64;  // whole Q8_0 blocks of 32 in every row
    s.inner = 64;
    s.heads = 4;
    s.kvHeads = 2;
    return s;
}

// KL(p ‖ q) in double, terms with p = 0 left out.
double klRef(const std::vector<double>& p, const std::vector<double>& q) {
    double kl = 0;
    for (std::size_t i = 0; i < p.size(); ++i)
        if (p[i] > 0) kl += p[i] * std::log(p[i] / q[i]);
    return kl;
}

std::vector<double> softmaxRef(const std::vector<double>& logits) {
    double top = logits[0];
    for (double v : logits) top = std::max(top, v);
    std::vector<double> p(logits.size());
    double sum = 0;
    for (std::size_t i = 0; i < p.size(); ++i) sum += p[i] = std::exp(logits[i] - top);
    for (double& v : p) v /= sum;
    return p;
}

}  // namespace

TEST_CASE("Comparing two copies of the same weights gives KL 0 everywhere", "[compare_models]") {
    const Checkpoint c = makeLlama(spec64(), 21);
    const auto a = writeAndLoad(c, "cmp_same_a");
    const auto b = writeAndLoad(c, "cmp_same_b");
    const ModelComparison r = compareModels(*a, *b, ids64(kIds));
    REQUIRE(r.blocks.size() == 1);
    CHECK(r.blocks[0].layers == 2);
    CHECK(r.blocks[0].heads == 4);
    for (double kl : r.blocks[0].kl) CHECK(kl == 0.0);
    for (double d : r.blocks[0].maxAbs) CHECK(d == 0.0);
    CHECK(r.output.kind == "next-token");
    CHECK(r.output.kl == 0.0);
    CHECK(r.output.sameTop);
    CHECK(r.tokens == int(kIds.size()));

    // The GGUF F32 copy (llama.cpp's Q/K row order undone) is the same model.
    const fs::path gguf = freshDir("cmp_same_gguf") / "model.gguf";
    ggufFromCheckpoint(c, "llama", Ggml::F32).write(gguf);
    const ModelComparison g = compareModels(*a, *loadCpu(gguf), ids64(kIds));
    for (double kl : g.blocks[0].kl) CHECK(kl < 1e-12);
    CHECK(g.output.kl < 1e-12);
}

TEST_CASE("A Q8_0 copy's per-head and output KL equal the double reference's", "[compare_models][gguf]") {
    const LlamaSpec spec = spec64();
    const Checkpoint c = makeLlama(spec, 22);
    const fs::path gguf = freshDir("cmp_q8") / "model.gguf";
    ggufFromCheckpoint(c, "llama", Ggml::Q8_0).write(gguf);
    const auto full = writeAndLoad(c, "cmp_q8_full");
    const auto quant = loadCpu(gguf);
    const ModelComparison r = compareModels(*full, *quant, ids64(kIds));

    const Reference refFull = referenceLlama(c, spec, kIds);
    const Reference refQuant = referenceLlama(dequantisedCheckpoint(c, Ggml::Q8_0), spec, kIds);
    const std::size_t n = kIds.size();
    const BlockComparison& b = r.blocks.at(0);
    for (int l = 0; l < b.layers; ++l)
        for (int h = 0; h < b.heads; ++h) {
            double want = 0, wantAbs = 0;
            for (std::size_t i = 0; i < n; ++i) {
                const auto row = [&](const Reference& ref) {
                    const auto& m = ref.probs[std::size_t(l)][std::size_t(h)];
                    return std::vector<double>(m.begin() + long(i * n), m.begin() + long((i + 1) * n));
                };
                want += klRef(row(refFull), row(refQuant)) / double(n);
                for (std::size_t j = 0; j < n; ++j)
                    wantAbs = std::max(wantAbs, std::abs(row(refFull)[j] - row(refQuant)[j]));
            }
            const double got = b.kl[std::size_t(l * b.heads + h)];
            INFO("layer " << l << " head " << h << ": " << got << " vs " << want);
            CHECK(want > 1e-9);  // Q8_0 moves every head a little
            CHECK(got > 0);
            CHECK(std::abs(got - want) <= 0.02 * want + 1e-9);
            CHECK(std::abs(b.maxAbs[std::size_t(l * b.heads + h)] - wantAbs) < 1e-5);
        }
    const double wantOut = klRef(softmaxRef(refFull.logits), softmaxRef(refQuant.logits));
    INFO("output KL " << r.output.kl << " vs " << wantOut);
    CHECK(wantOut > 0);
    CHECK(std::abs(r.output.kl - wantOut) <= 0.02 * wantOut + 1e-9);
    CHECK(b.maxKl >= b.meanKl);
    CHECK(b.kl[std::size_t(b.worstLayer * b.heads + b.worstHead)] == b.maxKl);
}

TEST_CASE("Models of different shapes or runs on different ids are refused", "[compare_models]") {
    LlamaSpec three = spec64();
    three.layers = 3;
    const auto a = writeAndLoad(makeLlama(spec64(), 1), "cmp_shape_a");
    const auto b = writeAndLoad(makeLlama(three, 1), "cmp_shape_b");
    CHECK_THROWS_WITH(compareModels(*a, *b, ids64(kIds)),
                      "the models differ in shape: block 'self' has 2 layers x 4 heads in the first and 3 x 4 "
                      "in the second");
    const auto ta = a->forward(ids64({1, 2, 3}));
    const auto tb = a->forward(ids64({1, 2, 4}));
    CHECK_THROWS_WITH(compareTraces(*ta, *tb), "comparing two models needs one input: the traces ran on different ids");
}

}  // namespace test_model_comparison
