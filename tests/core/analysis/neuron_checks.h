// What the neuron view tests share (test_neuron*.cpp): every query row of one head checked
// against the Trace's map and an independent reference's probabilities.
#pragma once

#include "attnscope/analysis/neuron.h"
#include "attnscope/attention/trace.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace attnscope::testing {

inline const std::vector<long long> kNeuronIds = {3, 17, 0, 39, 22, 5, 5, 11, 30, 1};

struct Worst {
    double sum = 0, logit = 0, map = 0, reference = 0;
};

// Every query row of one head: products sum to dot; scaled + extra = logit; softmax(logit / T)
// is the Trace's map row; logit differences equal the reference's log-probability differences.
inline Worst checkHead(const Trace& trace, int block, int layer, int head, const std::vector<double>& refProbs,
                       double T = 1.0) {
    Worst w;
    const HeadMap map = trace.map(block, layer, head, MapOptions{T});
    REQUIRE(refProbs.size() == map.values.size());
    for (int i = 0; i < map.rows; ++i) {
        const NeuronRow row = neuronRow(trace, block, layer, head, i, T);
        REQUIRE(row.keys == map.cols);
        REQUIRE(static_cast<int>(row.products.size()) == row.keys * row.dim);
        int anchor = -1;
        for (int j = 0; j < row.keys; ++j) {
            double sum = 0;
            for (int d = 0; d < row.dim; ++d) sum += row.product(j, d);
            w.sum = std::max(w.sum, std::abs(sum - row.dot[j]) / (1 + std::abs(row.dot[j])));
            w.logit = std::max(w.logit, std::abs(row.scaled[j] + row.extra[j] - row.logits[j]));
            CHECK(row.scaled[j] == Approx(row.scale * row.dot[j]).margin(1e-12));
            w.map = std::max(w.map, std::abs(row.weights[j] - map.at(i, j)));
            const double p = refProbs[static_cast<std::size_t>(i) * map.cols + j];
            w.reference = std::max(w.reference, std::abs(row.weights[j] - p));
            if (!row.allowed[j]) {
                CHECK(map.at(i, j) == 0.0f);
                continue;
            }
            if (p < 1e-12) continue;
            if (anchor < 0) {
                anchor = j;
                continue;
            }
            const double p0 = refProbs[static_cast<std::size_t>(i) * map.cols + anchor];
            const double want = std::log(p) - std::log(p0);
            const double got = (row.logits[j] - row.logits[anchor]) / row.temperature;
            w.reference = std::max(w.reference, std::abs(got - want) / 100);  // logits: 1e-4 against probs' 1e-6
        }
    }
    return w;
}

inline void requireWorst(const Worst& w, const std::string& name) {
    INFO(name << ": sum " << w.sum << ", logit " << w.logit << ", map " << w.map << ", reference " << w.reference);
    CHECK(w.sum < 1e-6);
    CHECK(w.logit < 1e-9);
    CHECK(w.map < 2e-6);
    CHECK(w.reference < 2e-6);
}

}  // namespace attnscope::testing
