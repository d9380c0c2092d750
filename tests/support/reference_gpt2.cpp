#include "reference_gpt2.h"

#include "reference_math.h"

#include <algorithm>
#include <cmath>

namespace attnscope::testing {

namespace {
namespace reference_gpt2 {  // this file's helpers, apart from the other support files' in a unity build

using Vec = std::vector<double>;

// GPT-2's Conv1D: weight [in, out], y = x W + b.
Vec conv1d(const Vec& x, const Tensor& w, const Tensor& b) {
    const std::size_t in = w.shape[0], out = w.shape[1];
    Vec y(out);
    for (std::size_t j = 0; j < out; ++j) {
        double s = b.values[j];
        for (std::size_t i = 0; i < in; ++i) s += x[i] * w.values[i * out + j];
        y[j] = s;
    }
    return y;
}

}  // namespace reference_gpt2
}  // namespace

std::vector<double> causalSoftmax(const std::vector<double>& scores, int n, double temperature) {
    std::vector<double> p(static_cast<std::size_t>(n) * n, 0.0);
    for (int i = 0; i < n; ++i) {
        double mx = -1e300, sum = 0;
        for (int j = 0; j <= i; ++j) mx = std::max(mx, scores[i * n + j] / temperature);
        for (int j = 0; j <= i; ++j) sum += std::exp(scores[i * n + j] / temperature - mx);
        for (int j = 0; j <= i; ++j) p[i * n + j] = std::exp(scores[i * n + j] / temperature - mx) / sum;
    }
    return p;
}

Gpt2Reference referenceGpt2(const Gpt2Checkpoint& c, const std::vector<long long>& ids) {
    return referenceGpt2(c, ids, ReferenceRun{});
}

Gpt2Reference referenceGpt2(const Gpt2Checkpoint& c, const std::vector<long long>& ids, const ReferenceRun& run) {
    using namespace reference_gpt2;
    const auto& s = c.spec;
    const int n = static_cast<int>(ids.size()), E = s.embd, H = s.heads, d = E / H;
    std::vector<Vec> x(n, Vec(E));
    for (int t = 0; t < n; ++t)
        for (int e = 0; e < E; ++e)
            x[t][e] = c.get("wte.weight").values[ids[t] * E + e] + c.get("wpe.weight").values[t * E + e];

    Gpt2Reference ref;
    for (int l = 0; l < s.layers; ++l) {
        applyActivationHook(ActivationSite::Resid, l, x);
        ref.residuals.push_back(x);
        const std::string p = "h." + std::to_string(l) + ".";
        std::vector<Vec> qkv(n);
        for (int t = 0; t < n; ++t)
            qkv[t] = conv1d(layerNorm(x[t], c.get(p + "ln_1.weight"), c.get(p + "ln_1.bias"), s.eps),
                            c.get(p + "attn.c_attn.weight"), c.get(p + "attn.c_attn.bias"));
        ref.scores.emplace_back();
        ref.probs.emplace_back();
        ref.q.emplace_back();
        ref.k.emplace_back();
        ref.v.emplace_back();
        std::vector<Vec> context(n, Vec(E, 0.0));
        for (int h = 0; h < H; ++h) {
            Vec sc(static_cast<std::size_t>(n) * n, 0.0);
            for (int i = 0; i < n; ++i)
                for (int j = 0; j < n; ++j) {
                    double dot = 0;
                    for (int k = 0; k < d; ++k) dot += qkv[i][h * d + k] * qkv[j][E + h * d + k];
                    sc[i * n + j] = dot / std::sqrt(static_cast<double>(d));
                }
            const bool hot = run.temperatureLayers.empty() ||
                             std::find(run.temperatureLayers.begin(), run.temperatureLayers.end(), l) !=
                                     run.temperatureLayers.end();
            Vec pr = causalSoftmax(sc, n, hot ? run.temperature : 1.0);
            applyProbsHook(l, h, pr);
            const bool masked = std::find(run.maskedHeads.begin(), run.maskedHeads.end(), std::make_pair(l, h)) !=
                                run.maskedHeads.end();
            for (int i = 0; i < n && !masked; ++i)
                for (int j = 0; j <= i; ++j)
                    for (int k = 0; k < d; ++k) context[i][h * d + k] += pr[i * n + j] * qkv[j][2 * E + h * d + k];
            Vec qh(static_cast<std::size_t>(n) * d), kh(static_cast<std::size_t>(n) * d);
            for (int i = 0; i < n; ++i)
                for (int c2 = 0; c2 < d; ++c2)
                    qh[i * d + c2] = qkv[i][h * d + c2], kh[i * d + c2] = qkv[i][E + h * d + c2];
            ref.q.back().push_back(qh);
            ref.k.back().push_back(kh);
            Vec vh(static_cast<std::size_t>(n) * d);
            for (int i = 0; i < n; ++i)
                for (int c2 = 0; c2 < d; ++c2) vh[i * d + c2] = qkv[i][2 * E + h * d + c2];
            ref.v.back().push_back(vh);
            ref.scores.back().push_back(sc);
            ref.probs.back().push_back(pr);
        }
        applyActivationHook(ActivationSite::Context, l, context);
        const Tensor& proj = c.get(p + "attn.c_proj.weight");  // [E in, E out]: head h reads rows h·d..
        ref.headOut.emplace_back(H, std::vector<Vec>(n, Vec(E, 0.0)));
        for (int h = 0; h < H; ++h)
            for (int t = 0; t < n; ++t)
                for (int k = 0; k < d; ++k)
                    for (int e = 0; e < E; ++e)
                        ref.headOut.back()[h][t][e] += context[t][h * d + k] * proj.values[(h * d + k) * E + e];
        ref.attnBias.push_back(
                Vec(c.get(p + "attn.c_proj.bias").values.begin(), c.get(p + "attn.c_proj.bias").values.end()));
        std::vector<Vec> attn(n), mlp(n);
        for (int t = 0; t < n; ++t)
            attn[t] = conv1d(context[t], c.get(p + "attn.c_proj.weight"), c.get(p + "attn.c_proj.bias"));
        applyActivationHook(ActivationSite::AttnAdded, l, attn);
        for (int t = 0; t < n; ++t) {
            for (int e = 0; e < E; ++e) x[t][e] += attn[t][e];
            Vec m = conv1d(layerNorm(x[t], c.get(p + "ln_2.weight"), c.get(p + "ln_2.bias"), s.eps),
                           c.get(p + "mlp.c_fc.weight"), c.get(p + "mlp.c_fc.bias"));
            for (double& v : m) v = activate(v, s.activation);
            mlp[t] = conv1d(m, c.get(p + "mlp.c_proj.weight"), c.get(p + "mlp.c_proj.bias"));
        }
        applyActivationHook(ActivationSite::MlpAdded, l, mlp);
        for (int t = 0; t < n; ++t)
            for (int e = 0; e < E; ++e) x[t][e] += mlp[t][e];
        ref.mlpOut.push_back(mlp);
    }
    ref.residuals.push_back(x);
    Vec last = layerNorm(x[n - 1], c.get("ln_f.weight"), c.get("ln_f.bias"), s.eps);
    const Tensor& head = s.untiedHead ? c.get("lm_head.weight") : c.get("wte.weight");
    for (int v = 0; v < s.vocab; ++v) {
        double z = 0;
        for (int e = 0; e < E; ++e) z += head.values[v * E + e] * last[e];
        ref.nextTokenLogits.push_back(z);
    }
    return ref;
}

}  // namespace attnscope::testing
