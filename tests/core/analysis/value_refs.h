// Double-precision references shared by the map-source tests (test_value_norm.cpp,
// test_alti.cpp): per layer α from the independent forwards in tests/support and the head
// outputs f_h(x̃_j) = v_j^h W_O^h with W_O sliced per head from the checkpoint, by plain loops.
#pragma once

#include "attnscope/attention/run_options.h"
#include "family_checks.h"
#include "fixtures_neox.h"
#include "reference_gpt2.h"

#include <functional>
#include <string>
#include <vector>

namespace attnscope::testing {

using Vec = std::vector<double>;

// What the sources need per layer: α[h][i * n + j], and f[h][j] = f_h(x̃_j) [width].
struct LayerRef {
    std::vector<Vec> alpha;
    std::vector<std::vector<Vec>> f;
};

// Largest |got - want| and the largest |want| (so that a test cannot pass on all-zero values).
inline std::pair<double, double> diff(const HeadMap& got, const Vec& want) {
    REQUIRE(got.values.size() == want.size());
    double worst = 0, biggest = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
        worst = std::max(worst, std::abs(got.values[i] - want[i]));
        biggest = std::max(biggest, std::abs(want[i]));
    }
    return {worst, biggest};
}

inline std::vector<LayerRef> gpt2Refs(const Gpt2Checkpoint& c, const Gpt2Reference& ref, int n) {
    const int E = c.spec.embd, H = c.spec.heads, d = E / H;
    std::vector<LayerRef> out;
    for (int l = 0; l < c.spec.layers; ++l) {
        const Tensor& wo = c.get("h." + std::to_string(l) + ".attn.c_proj.weight");  // Conv1D [in = H·d, out = E]
        LayerRef r;
        r.alpha = ref.probs[l];
        for (int h = 0; h < H; ++h) {
            r.f.emplace_back(n, Vec(E, 0.0));
            for (int j = 0; j < n; ++j)
                for (int e = 0; e < E; ++e)
                    for (int k = 0; k < d; ++k) r.f[h][j][e] += ref.v[l][h][j * d + k] * wo.values[(h * d + k) * E + e];
        }
        out.push_back(std::move(r));
    }
    return out;
}

// Per-layer references for an nn.Linear output projection named by `wo(l)` ([E, H·d]: head h reads
// columns h·d..) over the reference's values [n][G·d] (query head h reads kv group h / (H / G)).
inline std::vector<LayerRef> linearRefs(const Reference& ref, const std::function<std::string(int)>& wo,
                                        const Checkpoint& c, int layers, int n, int E, int H, int G, int d) {
    std::vector<LayerRef> out;
    for (int l = 0; l < layers; ++l) {
        const Tensor& w = c.get(wo(l));
        LayerRef r;
        r.alpha = ref.probs[l];
        for (int h = 0; h < H; ++h) {
            r.f.emplace_back(n, Vec(E, 0.0));
            const int g = h / (H / G);
            for (int j = 0; j < n; ++j)
                for (int e = 0; e < E; ++e)
                    for (int k = 0; k < d; ++k)
                        r.f[h][j][e] += ref.values[l][j][g * d + k] * w.values[e * (H * d) + h * d + k];
        }
        out.push_back(std::move(r));
    }
    return out;
}

inline std::shared_ptr<const Trace> runWithValues(const Model& model, const std::vector<long long>& ids,
                                                  std::vector<HeadRef> masked = {}) {
    RunOptions options;
    options.captureValues = true;
    options.maskHeads = std::move(masked);
    return model.forward(ids64(ids), options);
}

}  // namespace attnscope::testing
