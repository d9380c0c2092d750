// The mixture-of-experts decoders' forward in double precision, plain loops, written from Hugging
// Face's modeling_mixtral.py, modeling_qwen2_moe.py and modeling_olmoe.py and their configuration
// defaults: Llama's pre-norm blocks and rotary (rotate-half) attention; Mixtral's sliding window
// (a query sees itself and the W - 1 keys before it); Qwen2-MoE's q/k/v biases, shared expert and
// dense layers; OLMoE's q/k RMSNorm over the whole projection and clip_qkv; the router's softmax
// over all experts, its top-k, renormalised (Mixtral; norm_topk_prob) or not.
#include "fixtures_moe.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace attnscope::testing {

namespace {
namespace reference_moe {  // this file's helpers, apart from the other support files' in a unity build

using Vec = std::vector<double>;

Vec moeMatVec(const Tensor& w, const Vec& x) {
    const std::size_t in = w.shape[1], out = w.shape[0];
    Vec y(out, 0.0);
    for (std::size_t o = 0; o < out; ++o)
        for (std::size_t i = 0; i < in; ++i) y[o] += w.values[o * in + i] * x[i];
    return y;
}

Vec moeLinear(const Checkpoint& c, const std::string& name, const Vec& x) {
    Vec y = moeMatVec(c.get(name + ".weight"), x);
    const auto b = c.tensors.find(name + ".bias");
    if (b != c.tensors.end())
        for (std::size_t o = 0; o < y.size(); ++o) y[o] += b->second.values[o];
    return y;
}

Vec moeRmsNorm(Vec x, const Tensor& w, double eps) {
    double ms = 0;
    for (double v : x) ms += v * v;
    const double inv = 1.0 / std::sqrt(ms / static_cast<double>(x.size()) + eps);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] *= inv * w.values[i];
    return x;
}

double moeSilu(double x) { return x / (1 + std::exp(-x)); }

// down(silu(gate(x)) · up(x)) for the three matrices named.
Vec swiglu(const Checkpoint& c, const std::string& gate, const std::string& up, const std::string& down, const Vec& x) {
    Vec g = moeMatVec(c.get(gate), x);
    const Vec u = moeMatVec(c.get(up), x);
    for (std::size_t i = 0; i < g.size(); ++i) g[i] = moeSilu(g[i]) * u[i];
    return moeMatVec(c.get(down), g);
}

// Rotate-half rotary over every dimension of each head.
void moeRotate(Vec& row, int heads, int d, int position, double theta) {
    for (int h = 0; h < heads; ++h)
        for (int e = 0; e < d / 2; ++e) {
            const double a = position / std::pow(theta, 2.0 * e / d);
            double& x1 = row[h * d + e];
            double& x2 = row[h * d + e + d / 2];
            const double r1 = x1 * std::cos(a) - x2 * std::sin(a), r2 = x2 * std::cos(a) + x1 * std::sin(a);
            x1 = r1;
            x2 = r2;
        }
}

// The MoE block of layer prefix p on h: router softmax, top-k, weighted experts (+ shared expert).
Vec moeBlockForward(const Checkpoint& c, const MoeFamilySpec& s, const std::string& p, const Vec& h,
                    MoeReference& out) {
    const bool mixtral = s.type == "mixtral";
    const std::string block = p + (mixtral ? "block_sparse_moe." : "mlp.");
    const Vec logits = moeMatVec(c.get(block + "gate.weight"), h);
    const double mx = *std::max_element(logits.begin(), logits.end());
    Vec probs(logits.size());
    double sum = 0;
    for (std::size_t e = 0; e < probs.size(); ++e) sum += (probs[e] = std::exp(logits[e] - mx));
    for (double& v : probs) v /= sum;
    std::vector<int> order(probs.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return probs[a] > probs[b]; });
    order.resize(static_cast<std::size_t>(s.topK));
    double chosenSum = 0;
    for (int e : order) chosenSum += probs[e];
    const bool renormalise = mixtral || s.normTopK;
    Vec m(h.size(), 0.0);
    for (int e : order) {
        const std::string x = block + "experts." + std::to_string(e) + ".";
        const Vec y = mixtral ? swiglu(c, x + "w1.weight", x + "w3.weight", x + "w2.weight", h)
                              : swiglu(c, x + "gate_proj.weight", x + "up_proj.weight", x + "down_proj.weight", h);
        const double w = renormalise ? probs[e] / chosenSum : probs[e];
        for (std::size_t i = 0; i < m.size(); ++i) m[i] += w * y[i];
    }
    if (s.type == "qwen2_moe") {
        const std::string sh = block + "shared_expert.";
        const Vec y = swiglu(c, sh + "gate_proj.weight", sh + "up_proj.weight", sh + "down_proj.weight", h);
        const double g = 1.0 / (1.0 + std::exp(-moeMatVec(c.get(block + "shared_expert_gate.weight"), h)[0]));
        for (std::size_t i = 0; i < m.size(); ++i) m[i] += g * y[i];
    }
    out.router.back().push_back(probs);
    out.chosen.back().push_back(order);
    return m;
}

}  // namespace reference_moe
}  // namespace

MoeReference referenceMoeFamily(const Checkpoint& c, const MoeFamilySpec& s, const std::vector<long long>& ids) {
    using namespace reference_moe;
    const int n = static_cast<int>(ids.size()), E = s.hidden, H = s.heads, G = s.kvHeads, d = s.hidden / s.heads;
    const double theta = s.theta > 0 ? s.theta : (s.type == "mixtral" ? 1e6 : 10000.0);
    const double scale = 1.0 / std::sqrt(static_cast<double>(d));
    std::vector<Vec> x(n, Vec(E));
    for (int i = 0; i < n; ++i)
        for (int e = 0; e < E; ++e) x[i][e] = c.get("model.embed_tokens.weight").values[ids[i] * E + e];
    MoeReference out;
    for (int l = 0; l < s.layers; ++l) {
        const std::string p = "model.layers." + std::to_string(l) + ".";
        auto W = [&](const std::string& name) -> const Tensor& { return c.get(p + name + ".weight"); };
        std::vector<Vec> q(n), k(n), v(n);
        for (int i = 0; i < n; ++i) {
            const Vec h = moeRmsNorm(x[i], W("input_layernorm"), s.eps);
            q[i] = moeLinear(c, p + "self_attn.q_proj", h);
            k[i] = moeLinear(c, p + "self_attn.k_proj", h);
            v[i] = moeLinear(c, p + "self_attn.v_proj", h);
            if (s.type == "olmoe") {
                q[i] = moeRmsNorm(q[i], W("self_attn.q_norm"), s.eps);
                k[i] = moeRmsNorm(k[i], W("self_attn.k_norm"), s.eps);
                if (s.clipQkv > 0)
                    for (Vec* t : {&q[i], &k[i], &v[i]})
                        for (double& e : *t) e = std::clamp(e, -s.clipQkv, s.clipQkv);
            }
            moeRotate(q[i], H, d, i, theta);
            moeRotate(k[i], G, d, i, theta);
        }
        const auto sees = [&](int i, int j) { return j <= i && (s.window <= 0 || i - j < s.window); };
        std::vector<Vec> context(n, Vec(static_cast<std::size_t>(H) * d, 0.0));
        out.ref.probs.emplace_back();
        for (int hh = 0; hh < H; ++hh) {
            const int g = hh / (H / G);
            Vec flat;
            for (int i = 0; i < n; ++i) {
                Vec logit(n, 0.0), prob(n, 0.0);
                double mx = -1e300, sum = 0;
                for (int j = 0; j < n; ++j)
                    if (sees(i, j)) {
                        for (int e = 0; e < d; ++e) logit[j] += q[i][hh * d + e] * k[j][g * d + e];
                        logit[j] *= scale;
                        mx = std::max(mx, logit[j]);
                    }
                for (int j = 0; j < n; ++j)
                    if (sees(i, j)) sum += (prob[j] = std::exp(logit[j] - mx));
                for (int j = 0; j < n; ++j) prob[j] /= sum;
                for (int j = 0; j < n; ++j)
                    for (int e = 0; e < d; ++e) context[i][hh * d + e] += prob[j] * v[j][g * d + e];
                flat.insert(flat.end(), prob.begin(), prob.end());
            }
            out.ref.probs.back().push_back(std::move(flat));
        }
        out.router.emplace_back();
        out.chosen.emplace_back();
        for (int i = 0; i < n; ++i) {
            const Vec a = moeLinear(c, p + "self_attn.o_proj", context[i]);
            for (int e = 0; e < E; ++e) x[i][e] += a[e];
            const Vec h = moeRmsNorm(x[i], W("post_attention_layernorm"), s.eps);
            const Vec m = moeRouted(s, l) ? moeBlockForward(c, s, p, h, out)
                                          : swiglu(c, p + "mlp.gate_proj.weight", p + "mlp.up_proj.weight",
                                                   p + "mlp.down_proj.weight", h);
            for (int e = 0; e < E; ++e) x[i][e] += m[e];
        }
    }
    const Vec last = moeRmsNorm(x[n - 1], c.get("model.norm.weight"), s.eps);
    out.ref.logits = moeMatVec(c.get(s.tied ? "model.embed_tokens.weight" : "lm_head.weight"), last);
    return out;
}

}  // namespace attnscope::testing
