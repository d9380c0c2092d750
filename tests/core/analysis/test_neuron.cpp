// The neuron view's numbers (analysis/neuron.h) on GPT-2 and the built-ins: the products sum to
// the scores an independent double-precision forward computes, and their softmax is the Trace's
// map row (neuron_checks.h); refusals name the problem.
#include "attnscope/analysis/neuron.h"
#include "attnscope/runtime/error.h"
#include "family_checks.h"
#include "neuron_checks.h"
#include "reference_gpt2.h"

#include <cmath>

namespace test_neuron {

using namespace attnscope;
using namespace attnscope::testing;

namespace {
const std::vector<long long>& kIds = kNeuronIds;
}  // namespace

TEST_CASE("neuron view on GPT-2: q, k and q·k/√d are the reference's, weights are the map", "[neuron]") {
    Gpt2Spec spec;
    spec.layers = 2;
    const auto c = makeGpt2(spec, 7);
    const auto dir = freshDir("neuron-gpt2");
    writeGpt2Folder(dir, c);
    auto model = loadCpu(dir);
    auto trace = model->forward(ids64(kIds));
    const auto ref = referenceGpt2(c, kIds);
    const int n = static_cast<int>(kIds.size());
    for (int l = 0; l < 2; ++l)
        for (int h = 0; h < 4; ++h) {
            requireWorst(checkHead(*trace, 0, l, h, ref.probs[l][h]), "gpt2");
            const NeuronRow row = neuronRow(*trace, 0, l, h, n - 1);
            const int d = row.dim;
            CHECK(row.scale == Approx(1 / std::sqrt(double(d))));
            double qDiff = 0, kDiff = 0, scoreDiff = 0;
            for (int c2 = 0; c2 < d; ++c2)
                qDiff = std::max(qDiff, std::abs(row.queryVector[c2] - ref.q[l][h][(n - 1) * d + c2]));
            for (int j = 0; j < n; ++j) {
                for (int c2 = 0; c2 < d; ++c2)
                    kDiff = std::max(kDiff, std::abs(row.keyVectors[j * d + c2] - ref.k[l][h][j * d + c2]));
                scoreDiff = std::max(scoreDiff, std::abs(row.logits[j] - ref.scores[l][h][(n - 1) * n + j]));
            }
            CHECK(qDiff < 1e-5);
            CHECK(kDiff < 1e-5);
            CHECK(scoreDiff < 1e-5);
            CHECK(row.extras.empty());
        }
    SECTION("the display temperature divides the logits") {
        const NeuronRow hot = neuronRow(*trace, 0, 1, 2, 6, 0.5), cold = neuronRow(*trace, 0, 1, 2, 6, 4.0);
        CHECK(hot.logits == cold.logits);
        const HeadMap map = trace->map(0, 1, 2, MapOptions{0.5});
        for (int j = 0; j < n; ++j) CHECK(hot.weights[j] == Approx(map.at(6, j)).margin(2e-6));
        CHECK(hot.weights[7] == 0.0);  // causal
        CHECK(!hot.allowed[7]);
    }
    SECTION("indices out of range are refused by name") {
        CHECK_THROWS_WITH(neuronRow(*trace, 0, 0, 0, n),
                          Catch::Contains("query") && Catch::Contains(std::to_string(n)));
        CHECK_THROWS_WITH(neuronRow(*trace, 0, 2, 0, 0), Catch::Contains("layer 2"));
        CHECK_THROWS_WITH(neuronRow(*trace, 0, 0, 0, 0, 0.0), Catch::Contains("temperature"));
    }
}

TEST_CASE("neuron view refuses layers without q·k logits", "[neuron]") {
    LoadOptions options;
    options.device = DeviceChoice::Cpu;
    auto model = Model::load("builtin:reverse-additive", options);
    auto trace = model->forward(model->encodeText("abc12"));
    CHECK_THROWS_WITH(neuronRow(*trace, 0, 0, 0, 0), Catch::Contains("additive attention"));
    // The dot-product built-in: every block's rows are its maps.
    auto dot = Model::load("builtin:reverse-dot", options);
    auto dtrace = dot->forward(dot->encodeText("abc12"));
    for (int b = 0; b < static_cast<int>(dtrace->blocks().size()); ++b) {
        const HeadMap map = dtrace->map(b, 0, 1);
        for (int i = 0; i < map.rows; ++i) {
            const NeuronRow row = neuronRow(*dtrace, b, 0, 1, i);
            for (int j = 0; j < map.cols; ++j) CHECK(row.weights[j] == Approx(map.at(i, j)).margin(2e-6));
        }
    }
}

}  // namespace test_neuron
