// Plain double-precision pieces the independent references (reference_gpt2, reference_families,
// reference_builtin) share: written from the definitions, nothing shared with core.
#pragma once

#include "gpt2_fixture.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace attnscope::testing {

// Finite differences through α (the gradient sources' tests): while one is set, the references
// (GPT-2, Llama, BERT, ViT, GPT-NeoX, the RMSNorm and ALiBi/OPT families) call it on each head's probabilities [n · m]
// of each layer right after the softmax, before they multiply V, and it may change them (add ε to one cell). One per
// thread; ScopedProbsHook sets and clears it.
using ProbsHook = std::function<void(int layer, int head, std::vector<double>& probs)>;
inline ProbsHook& probsHook() {
    thread_local ProbsHook hook;
    return hook;
}
inline void applyProbsHook(int layer, int head, std::vector<double>& probs) {
    if (probsHook()) probsHook()(layer, head, probs);
}
struct ScopedProbsHook {
    explicit ScopedProbsHook(ProbsHook hook) { probsHook() = std::move(hook); }
    ~ScopedProbsHook() { probsHook() = nullptr; }
    ScopedProbsHook(const ScopedProbsHook&) = delete;
    ScopedProbsHook& operator=(const ScopedProbsHook&) = delete;
};

// Activation patching (issue 32): while one is set, the decoder references (GPT-2, Llama,
// GPT-NeoX, the RMSNorm families) call it on each layer's activations, every position at once
// ([n] rows), and it may change them (put another run's in): the residual entering the layer
// (Resid), the heads' outputs before the output projection (Context, [H · d] per row, head h at
// h · d), what attention adds to the residual (AttnAdded: after the output projection, its bias
// and any post-norm) and what the MLP adds (MlpAdded, after any post-norm). One per thread;
// ScopedActivationHook sets and clears it.
enum class ActivationSite { Resid, Context, AttnAdded, MlpAdded };
using ActivationHook = std::function<void(ActivationSite site, int layer, std::vector<std::vector<double>>& rows)>;
inline ActivationHook& activationHook() {
    thread_local ActivationHook hook;
    return hook;
}
inline void applyActivationHook(ActivationSite site, int layer, std::vector<std::vector<double>>& rows) {
    if (activationHook()) activationHook()(site, layer, rows);
}
struct ScopedActivationHook {
    explicit ScopedActivationHook(ActivationHook hook) { activationHook() = std::move(hook); }
    ~ScopedActivationHook() { activationHook() = nullptr; }
    ScopedActivationHook(const ScopedActivationHook&) = delete;
    ScopedActivationHook& operator=(const ScopedActivationHook&) = delete;
};

// LayerNorm of one row: (x - mean) / sqrt(var + eps) * weight + bias, with the biased variance.
// weight and bias are any indexable float or double sequences of x's size.
template <class W, class B>
std::vector<double> layerNormRow(const std::vector<double>& x, const W& weight, const B& bias, double eps) {
    double mean = 0, var = 0;
    for (double v : x) mean += v;
    mean /= x.size();
    for (double v : x) var += (v - mean) * (v - mean);
    var /= x.size();
    std::vector<double> y(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) y[i] = (x[i] - mean) / std::sqrt(var + eps) * weight[i] + bias[i];
    return y;
}

inline std::vector<double> layerNorm(const std::vector<double>& x, const Tensor& w, const Tensor& b, double eps) {
    return layerNormRow(x, w.values, b.values, eps);
}

// GELU with erf.
inline double geluErf(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }

// A config activation by name: "relu", "gelu" (erf); every other name is the tanh approximation
// (gelu_new, gelu_pytorch_tanh, gelu_fast).
inline double activate(double x, const std::string& name) {
    if (name == "relu") return std::max(0.0, x);
    if (name == "gelu") return geluErf(x);
    const double pi = 3.14159265358979323846;
    return 0.5 * x * (1 + std::tanh(std::sqrt(2 / pi) * (x + 0.044715 * x * x * x)));
}

}  // namespace attnscope::testing
