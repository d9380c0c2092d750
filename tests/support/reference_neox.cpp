// Independent forwards for the GPT-NeoX, GPT-J, GPT-Neo and Phi fixtures: plain loops in double
// precision written from the Hugging Face definitions (modeling_gpt_neox.py, modeling_gptj.py,
// modeling_gpt_neo.py, modeling_phi.py); no LibTorch, nothing shared with core.
#include "fixtures_neox.h"
#include "reference_math.h"

#include <algorithm>
#include <cmath>

namespace attnscope::testing {

namespace {
namespace reference_neox {  // this file's helpers, apart from the other support files' in a unity build

using Vec = std::vector<double>;
using Rows = std::vector<Vec>;

// nn.Linear of `name`: y = W x + b (the bias when the checkpoint has one).
Vec linear(const Checkpoint& c, const std::string& name, const Vec& x) {
    const Tensor& w = c.get(name + ".weight");
    auto b = c.tensors.find(name + ".bias");
    const std::size_t out = w.shape[0], in = w.shape[1];
    Vec y(out);
    for (std::size_t o = 0; o < out; ++o) {
        double s = b == c.tensors.end() ? 0.0 : b->second.values[o];
        for (std::size_t i = 0; i < in; ++i) s += w.values[o * in + i] * x[i];
        y[o] = s;
    }
    return y;
}

Vec norm(const Checkpoint& c, const std::string& name, const Vec& x, double eps) {
    return layerNorm(x, c.get(name + ".weight"), c.get(name + ".bias"), eps);
}

Rows embed(const Checkpoint& c, const std::string& name, const std::vector<long long>& ids) {
    const Tensor& t = c.get(name);
    const std::size_t E = t.shape[1];
    Rows x;
    for (long long id : ids) x.emplace_back(t.values.begin() + id * E, t.values.begin() + (id + 1) * E);
    return x;
}

// Rotates the first r dims of each of `heads` heads of width d at `position`, theta^(-2i/r)
// frequencies: rotate-half pairs (i, i + r/2) or, interleaved (GPT-J), pairs (2i, 2i + 1).
void rotate(Vec& row, int heads, int d, int r, int position, double theta, bool interleaved) {
    for (int h = 0; h < heads; ++h)
        for (int i = 0; i < r / 2; ++i) {
            const double a = position * std::pow(theta, -2.0 * i / r), cs = std::cos(a), sn = std::sin(a);
            double& x1 = row[h * d + (interleaved ? 2 * i : i)];
            double& x2 = row[h * d + (interleaved ? 2 * i + 1 : i + r / 2)];
            const double r1 = x1 * cs - x2 * sn, r2 = x2 * cs + x1 * sn;
            x1 = r1;
            x2 = r2;
        }
}

// Causal softmax attention of H query heads over G key/value groups (head h uses group
// h / (H / G)): logits scale · q·k, divided by T in the chosen layers, keys j <= i and, with a
// window w > 0, i - j < w. Appends the maps to ref; returns the context rows [n][H·d] with
// masked heads zeroed.
Rows attend(const Rows& q, const Rows& k, const Rows& v, int H, int G, int d, double scale, int window, int layer,
            const RefOptions& o, Reference& ref) {
    const int n = static_cast<int>(q.size());
    const auto& tl = o.temperatureLayers;
    const double T = tl.empty() || std::find(tl.begin(), tl.end(), layer) != tl.end() ? o.temperature : 1.0;
    Rows context(n, Vec(static_cast<std::size_t>(H) * d, 0.0));
    ref.probs.emplace_back();
    for (int h = 0; h < H; ++h) {
        const int g = h / (H / G);
        const bool masked =
                std::find(o.maskHeads.begin(), o.maskHeads.end(), std::make_pair(layer, h)) != o.maskHeads.end();
        Vec flat(static_cast<std::size_t>(n) * n, 0.0);
        for (int i = 0; i < n; ++i) {
            const int first = window > 0 ? std::max(0, i - window + 1) : 0;
            Vec s(n, -1e300);
            double mx = -1e300, sum = 0;
            for (int j = first; j <= i; ++j) {
                double dot = 0;
                for (int e = 0; e < d; ++e) dot += q[i][h * d + e] * k[j][g * d + e];
                s[j] = scale * dot / T;
                mx = std::max(mx, s[j]);
            }
            for (int j = first; j <= i; ++j) sum += (flat[i * n + j] = std::exp(s[j] - mx));
            for (int j = first; j <= i; ++j) flat[i * n + j] /= sum;
        }
        applyProbsHook(layer, h, flat);
        for (int i = 0; i < n && !masked; ++i)
            for (int j = 0; j <= i; ++j)
                for (int e = 0; e < d; ++e) context[i][h * d + e] += flat[i * n + j] * v[j][g * d + e];
        ref.probs.back().push_back(std::move(flat));
    }
    return context;
}

Vec activated(Vec x, const std::string& act) {
    for (double& a : x) a = activate(a, act);
    return x;
}

Vec add(Vec a, const Vec& b) {
    for (std::size_t i = 0; i < a.size(); ++i) a[i] += b[i];
    return a;
}

// Next-token logits through `head` [vocab, E] (+ `bias` when named) of the last row.
Vec headLogits(const Checkpoint& c, const std::string& head, const std::string& bias, const Vec& last) {
    const Tensor& w = c.get(head);
    const std::size_t V = w.shape[0], E = w.shape[1];
    Vec y(V);
    for (std::size_t o = 0; o < V; ++o) {
        double s = bias.empty() ? 0.0 : c.get(bias).values[o];
        for (std::size_t i = 0; i < E; ++i) s += w.values[o * E + i] * last[i];
        y[o] = s;
    }
    return y;
}

}  // namespace reference_neox
}  // namespace

Reference referenceNeox(const Checkpoint& c, const NeoxSpec& s, const std::vector<long long>& ids,
                        const RefOptions& o) {
    using namespace reference_neox;
    const std::string pre = s.prefix ? "gpt_neox." : "";
    const int n = static_cast<int>(ids.size()), H = s.heads, d = s.hidden / H, r = static_cast<int>(d * s.rotaryPct);
    Rows x = embed(c, pre + "embed_in.weight", ids);
    Reference ref;
    for (int l = 0; l < s.layers; ++l) {
        applyActivationHook(ActivationSite::Resid, l, x);
        ref.residuals.push_back(x);
        const std::string p = pre + "layers." + std::to_string(l) + ".";
        Rows q(n, Vec(H * d)), k = q, v = q;
        for (int t = 0; t < n; ++t) {
            // The fused output holds, per head h, q, k and v at h·3d, h·3d + d, h·3d + 2d.
            const Vec qkv = linear(c, p + "attention.query_key_value", norm(c, p + "input_layernorm", x[t], s.eps));
            for (int h = 0; h < H; ++h)
                for (int e = 0; e < d; ++e) {
                    q[t][h * d + e] = qkv[h * 3 * d + e];
                    k[t][h * d + e] = qkv[h * 3 * d + d + e];
                    v[t][h * d + e] = qkv[h * 3 * d + 2 * d + e];
                }
            rotate(q[t], H, d, r, t, s.base, false);
            rotate(k[t], H, d, r, t, s.base, false);
        }
        ref.values.push_back(v);
        Rows context = attend(q, k, v, H, H, d, 1 / std::sqrt(double(d)), 0, l, o, ref);
        applyActivationHook(ActivationSite::Context, l, context);
        ref.contexts.push_back(context);
        auto mlp = [&](const Vec& in) {
            const Vec h = norm(c, p + "post_attention_layernorm", in, s.eps);
            return linear(c, p + "mlp.dense_4h_to_h", activated(linear(c, p + "mlp.dense_h_to_4h", h), s.activation));
        };
        Rows a(n), m(n);
        for (int t = 0; t < n; ++t) a[t] = linear(c, p + "attention.dense", context[t]);
        applyActivationHook(ActivationSite::AttnAdded, l, a);
        // Parallel: the MLP reads the block's input; sequential: the stream after attention.
        for (int t = 0; t < n; ++t) m[t] = mlp(s.parallel ? x[t] : add(x[t], a[t]));
        applyActivationHook(ActivationSite::MlpAdded, l, m);
        for (int t = 0; t < n; ++t) x[t] = add(add(x[t], a[t]), m[t]);
        ref.mlpOut.push_back(m);
    }
    ref.residuals.push_back(x);
    const Vec last = norm(c, pre + "final_layer_norm", x[n - 1], s.eps);
    ref.logits = headLogits(c, s.tied ? pre + "embed_in.weight" : "embed_out.weight", "", last);
    return ref;
}

Reference referenceGptj(const Checkpoint& c, const GptjSpec& s, const std::vector<long long>& ids,
                        const RefOptions& o) {
    using namespace reference_neox;
    const std::string pre = s.prefix ? "transformer." : "";
    const int n = static_cast<int>(ids.size()), H = s.heads, d = s.hidden / H;
    Rows x = embed(c, pre + "wte.weight", ids);
    Reference ref;
    for (int l = 0; l < s.layers; ++l) {
        const std::string p = pre + "h." + std::to_string(l) + ".";
        Rows h(n), q(n), k(n), v(n);
        for (int t = 0; t < n; ++t) {
            h[t] = norm(c, p + "ln_1", x[t], s.eps);
            q[t] = linear(c, p + "attn.q_proj", h[t]);
            k[t] = linear(c, p + "attn.k_proj", h[t]);
            v[t] = linear(c, p + "attn.v_proj", h[t]);
            rotate(q[t], H, d, s.rotaryDim, t, 10000.0, true);
            rotate(k[t], H, d, s.rotaryDim, t, 10000.0, true);
        }
        const Rows context = attend(q, k, v, H, H, d, 1 / std::sqrt(double(d)), 0, l, o, ref);
        for (int t = 0; t < n; ++t) {
            // Attention and MLP both read ln_1's output.
            const Vec a = linear(c, p + "attn.out_proj", context[t]);
            const Vec m = linear(c, p + "mlp.fc_out", activated(linear(c, p + "mlp.fc_in", h[t]), s.activation));
            x[t] = add(add(x[t], a), m);
        }
    }
    const Vec last = norm(c, pre + "ln_f", x[n - 1], s.eps);
    ref.logits = headLogits(c, s.tied ? pre + "wte.weight" : "lm_head.weight", "lm_head.bias", last);
    return ref;
}

Reference referenceNeo(const Checkpoint& c, const NeoSpec& s, const std::vector<long long>& ids, const RefOptions& o) {
    using namespace reference_neox;
    const std::string pre = s.prefix ? "transformer." : "";
    const int n = static_cast<int>(ids.size()), H = s.heads, d = s.hidden / H;
    Rows x = embed(c, pre + "wte.weight", ids);
    const Tensor& wpe = c.get(pre + "wpe.weight");
    for (int t = 0; t < n; ++t)
        for (int e = 0; e < s.hidden; ++e) x[t][e] += wpe.values[t * s.hidden + e];
    Reference ref;
    for (int l = 0; l < s.layers; ++l) {
        const std::string p = pre + "h." + std::to_string(l) + ".";
        Rows q(n), k(n), v(n);
        for (int t = 0; t < n; ++t) {
            const Vec h = norm(c, p + "ln_1", x[t], s.eps);
            q[t] = linear(c, p + "attn.attention.q_proj", h);
            k[t] = linear(c, p + "attn.attention.k_proj", h);
            v[t] = linear(c, p + "attn.attention.v_proj", h);
        }
        // Local layers see the window_size latest keys (Hugging Face: tril ^ tril(-window)); no scaling.
        const int window = s.kinds[l % s.kinds.size()] == "local" ? s.window : 0;
        const Rows context = attend(q, k, v, H, H, d, 1.0, window, l, o, ref);
        for (int t = 0; t < n; ++t) {
            x[t] = add(x[t], linear(c, p + "attn.attention.out_proj", context[t]));
            const Vec h = norm(c, p + "ln_2", x[t], s.eps);
            x[t] = add(x[t], linear(c, p + "mlp.c_proj", activated(linear(c, p + "mlp.c_fc", h), s.activation)));
        }
    }
    const Vec last = norm(c, pre + "ln_f", x[n - 1], s.eps);
    ref.logits = headLogits(c, s.tied ? pre + "wte.weight" : "lm_head.weight", "", last);
    return ref;
}

Reference referencePhi(const Checkpoint& c, const PhiSpec& s, const std::vector<long long>& ids, const RefOptions& o) {
    using namespace reference_neox;
    const std::string pre = s.prefix ? "model." : "";
    const int n = static_cast<int>(ids.size()), H = s.heads, G = s.kvHeads, d = s.hidden / H;
    const int r = static_cast<int>(d * s.partial);
    Rows x = embed(c, pre + "embed_tokens.weight", ids);
    Reference ref;
    for (int l = 0; l < s.layers; ++l) {
        const std::string p = pre + "layers." + std::to_string(l) + ".";
        Rows h(n), q(n), k(n), v(n);
        // LayerNorm of each head's d values (qk_layernorm), before the rotation.
        auto headNorm = [&](Vec& row, int heads, const std::string& name) {
            for (int hh = 0; hh < heads; ++hh) {
                const Vec part(row.begin() + hh * d, row.begin() + (hh + 1) * d);
                const Vec y = norm(c, name, part, s.eps);
                std::copy(y.begin(), y.end(), row.begin() + hh * d);
            }
        };
        for (int t = 0; t < n; ++t) {
            h[t] = norm(c, p + "input_layernorm", x[t], s.eps);
            q[t] = linear(c, p + "self_attn.q_proj", h[t]);
            k[t] = linear(c, p + "self_attn.k_proj", h[t]);
            v[t] = linear(c, p + "self_attn.v_proj", h[t]);
            if (s.qkNorm) {
                headNorm(q[t], H, p + "self_attn.q_layernorm");
                headNorm(k[t], G, p + "self_attn.k_layernorm");
            }
            rotate(q[t], H, d, r, t, s.theta, false);
            rotate(k[t], G, d, r, t, s.theta, false);
        }
        const Rows context = attend(q, k, v, H, G, d, 1 / std::sqrt(double(d)), 0, l, o, ref);
        for (int t = 0; t < n; ++t) {
            const Vec a = linear(c, p + "self_attn.dense", context[t]);
            const Vec m = linear(c, p + "mlp.fc2", activated(linear(c, p + "mlp.fc1", h[t]), s.activation));
            x[t] = add(add(x[t], a), m);
        }
    }
    const Vec last = norm(c, pre + "final_layernorm", x[n - 1], s.eps);
    ref.logits = headLogits(c, s.tied ? pre + "embed_tokens.weight" : "lm_head.weight", "lm_head.bias", last);
    return ref;
}

}  // namespace attnscope::testing
