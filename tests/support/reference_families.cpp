// Independent forwards for the BERT, Llama and ViT fixtures: plain loops in double precision,
// written from the models' definitions (no LibTorch, nothing shared with core).
#include "family_fixtures.h"
#include "reference_math.h"

#include <algorithm>
#include <cmath>

namespace attnscope::testing {

namespace {
namespace reference_families {  // this file's helpers, apart from the other support files' in a unity build

using Vec = std::vector<double>;
constexpr double kPi = 3.14159265358979323846;

// nn.Linear: W [out, in], y = W x + b.
Vec linear(const Vec& x, const Tensor& w, const Tensor* b) {
    const std::size_t out = w.shape[0], in = w.shape[1];
    Vec y(out);
    for (std::size_t o = 0; o < out; ++o) {
        double s = b ? b->values[o] : 0.0;
        for (std::size_t i = 0; i < in; ++i) s += w.values[o * in + i] * x[i];
        y[o] = s;
    }
    return y;
}

Vec linearOf(const Checkpoint& c, const std::string& name, const Vec& x) {
    auto b = c.tensors.find(name + ".bias");
    return linear(x, c.get(name + ".weight"), b == c.tensors.end() ? nullptr : &b->second);
}

Vec rmsNorm(const Vec& x, const Tensor& w, double eps) {
    double ms = 0;
    for (double v : x) ms += v * v;
    ms /= x.size();
    Vec y(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] / std::sqrt(ms + eps) * w.values[i];
    return y;
}

double silu(double x) { return x / (1 + std::exp(-x)); }

// Softmax over allowed keys of one row.
Vec softmaxRow(const Vec& scores, const std::vector<bool>& allowed) {
    double mx = -1e300, sum = 0;
    for (std::size_t j = 0; j < scores.size(); ++j)
        if (allowed[j]) mx = std::max(mx, scores[j]);
    Vec p(scores.size(), 0.0);
    for (std::size_t j = 0; j < scores.size(); ++j)
        if (allowed[j]) sum += (p[j] = std::exp(scores[j] - mx));
    for (double& v : p) v /= sum;
    return p;
}

// One multi-head attention: q rows [n][H*d], k and v rows [n][G*d]; allowed(i, j).
// Appends the probabilities to ref and returns the context rows [n][H*d].
template <typename Allowed>
std::vector<Vec> attend(const std::vector<Vec>& q, const std::vector<Vec>& k, const std::vector<Vec>& v, int H, int G,
                        int d, Allowed allowed, Reference& ref) {
    const int n = static_cast<int>(q.size());
    std::vector<Vec> context(n, Vec(static_cast<std::size_t>(H) * d, 0.0));
    ref.probs.emplace_back();
    const int layer = static_cast<int>(ref.probs.size()) - 1;
    for (int h = 0; h < H; ++h) {
        const int g = h / (H / G);
        Vec flat;
        for (int i = 0; i < n; ++i) {
            Vec scores(n);
            std::vector<bool> ok(n);
            for (int j = 0; j < n; ++j) {
                double dot = 0;
                for (int e = 0; e < d; ++e) dot += q[i][h * d + e] * k[j][g * d + e];
                scores[j] = dot / std::sqrt(static_cast<double>(d));
                ok[j] = allowed(i, j);
            }
            Vec p = softmaxRow(scores, ok);
            flat.insert(flat.end(), p.begin(), p.end());
        }
        applyProbsHook(layer, h, flat);
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j)
                for (int e = 0; e < d; ++e) context[i][h * d + e] += flat[i * n + j] * v[j][g * d + e];
        ref.probs.back().push_back(std::move(flat));
    }
    return context;
}

// Inverse frequencies from the spec, written from the Llama / Llama 3.1 definitions.
Vec inverseFrequencies(const LlamaSpec& s) {
    const int d = llamaHeadDim(s);
    Vec inv(d / 2);
    for (int i = 0; i < d / 2; ++i) inv[i] = 1.0 / std::pow(s.theta, (2.0 * i) / d);
    if (!s.ropeScaling.is_object()) return inv;
    const auto& r = s.ropeScaling;
    const std::string type = r.value("rope_type", r.value("type", std::string("default")));
    const double factor = r.value("factor", 1.0);
    if (type == "linear")
        for (double& f : inv) f = f / factor;
    if (type == "llama3") {
        const double low = r.at("low_freq_factor"), high = r.at("high_freq_factor");
        const double old = r.at("original_max_position_embeddings");
        for (double& f : inv) {
            const double wavelength = 2 * kPi / f;
            if (wavelength > old / low) {
                f = f / factor;
            } else if (wavelength >= old / high) {
                const double t = (old / wavelength - low) / (high - low);
                f = (1 - t) * f / factor + t * f;
            }
        }
    }
    return inv;
}

// Rotates each head's (e, e + d/2) pair by position · inv[e].
void rotate(Vec& row, int heads, int d, int position, const Vec& inv) {
    for (int h = 0; h < heads; ++h)
        for (int e = 0; e < d / 2; ++e) {
            const double a = position * inv[e], cs = std::cos(a), sn = std::sin(a);
            double& x1 = row[h * d + e];
            double& x2 = row[h * d + e + d / 2];
            const double r1 = x1 * cs - x2 * sn, r2 = x2 * cs + x1 * sn;
            x1 = r1;
            x2 = r2;
        }
}

}  // namespace reference_families
}  // namespace

Reference referenceLlama(const Checkpoint& c, const LlamaSpec& s, const std::vector<long long>& ids) {
    return referenceLlama(c, s, ids, ContextHook{});
}

Reference referenceLlama(const Checkpoint& c, const LlamaSpec& s, const std::vector<long long>& ids,
                         const ContextHook& contextHook) {
    using namespace reference_families;
    const int n = static_cast<int>(ids.size()), E = s.hidden, d = llamaHeadDim(s);
    const Vec inv = inverseFrequencies(s);
    std::vector<Vec> x(n, Vec(E));
    for (int t = 0; t < n; ++t)
        for (int e = 0; e < E; ++e) x[t][e] = c.get("model.embed_tokens.weight").values[ids[t] * E + e];
    Reference ref;
    for (int l = 0; l < s.layers; ++l) {
        applyActivationHook(ActivationSite::Resid, l, x);
        ref.residuals.push_back(x);
        const std::string p = "model.layers." + std::to_string(l) + ".";
        std::vector<Vec> q(n), k(n), v(n);
        for (int t = 0; t < n; ++t) {
            const Vec h = rmsNorm(x[t], c.get(p + "input_layernorm.weight"), s.eps);
            q[t] = linearOf(c, p + "self_attn.q_proj", h);
            k[t] = linearOf(c, p + "self_attn.k_proj", h);
            v[t] = linearOf(c, p + "self_attn.v_proj", h);
            rotate(q[t], s.heads, d, t, inv);
            rotate(k[t], s.kvHeads, d, t, inv);
        }
        ref.values.push_back(v);
        auto allowed = [&](int i, int j) { return j <= i && (s.window == 0 || i - j < s.window); };
        auto context = attend(q, k, v, s.heads, s.kvHeads, d, allowed, ref);
        if (contextHook) contextHook(l, context);
        applyActivationHook(ActivationSite::Context, l, context);
        ref.contexts.push_back(context);
        const Tensor& wo = c.get(p + "self_attn.o_proj.weight");  // [E, H·d]: head h reads columns h·d..
        const int Hd = s.heads * d;
        ref.headOut.emplace_back(s.heads, std::vector<Vec>(n, Vec(E, 0.0)));
        for (int h = 0; h < s.heads; ++h)
            for (int t = 0; t < n; ++t)
                for (int e = 0; e < E; ++e)
                    for (int k2 = 0; k2 < d; ++k2)
                        ref.headOut.back()[h][t][e] += wo.values[e * Hd + h * d + k2] * context[t][h * d + k2];
        std::vector<Vec> attn(n), mlp(n);
        for (int t = 0; t < n; ++t) attn[t] = linearOf(c, p + "self_attn.o_proj", context[t]);
        applyActivationHook(ActivationSite::AttnAdded, l, attn);
        for (int t = 0; t < n; ++t) {
            for (int e = 0; e < E; ++e) x[t][e] += attn[t][e];
            const Vec h = rmsNorm(x[t], c.get(p + "post_attention_layernorm.weight"), s.eps);
            Vec gate = linearOf(c, p + "mlp.gate_proj", h);
            const Vec up = linearOf(c, p + "mlp.up_proj", h);
            for (std::size_t i = 0; i < gate.size(); ++i) gate[i] = silu(gate[i]) * up[i];
            mlp[t] = linearOf(c, p + "mlp.down_proj", gate);
        }
        applyActivationHook(ActivationSite::MlpAdded, l, mlp);
        for (int t = 0; t < n; ++t)
            for (int e = 0; e < E; ++e) x[t][e] += mlp[t][e];
        ref.mlpOut.push_back(mlp);
    }
    ref.residuals.push_back(x);
    const Vec last = rmsNorm(x[n - 1], c.get("model.norm.weight"), s.eps);
    ref.logits = linear(last, c.get(s.tied ? "model.embed_tokens.weight" : "lm_head.weight"), nullptr);
    return ref;
}

Reference referenceBert(const Checkpoint& c, const BertSpec& s, const std::vector<long long>& ids,
                        const std::vector<long long>& typeIds, const std::vector<int>& attend_,
                        const std::vector<std::pair<int, int>>& maskHeads) {
    using namespace reference_families;
    const int n = static_cast<int>(ids.size()), E = s.hidden, H = s.heads, d = E / H;
    const bool distil = s.type == "distilbert";
    const std::string pre = s.prefix ? s.type + "." : "";
    const double eps = 1e-12;
    auto ln = [&](const Vec& x, const std::string& name) {
        const bool legacy = s.legacyNorm && !distil;
        return layerNorm(x, c.get(name + (legacy ? ".gamma" : ".weight")), c.get(name + (legacy ? ".beta" : ".bias")),
                         eps);
    };
    std::vector<Vec> x(n, Vec(E));
    int counted = 0;
    for (int t = 0; t < n; ++t) {
        // RoBERTa numbers real (non-pad) tokens from pad + 1; pad tokens get position pad.
        int position = t;
        if (s.type == "roberta") position = ids[t] == s.pad ? s.pad : s.pad + ++counted;
        const int type = typeIds.empty() ? 0 : static_cast<int>(typeIds[t]);
        for (int e = 0; e < E; ++e) {
            x[t][e] = c.get(pre + "embeddings.word_embeddings.weight").values[ids[t] * E + e] +
                      c.get(pre + "embeddings.position_embeddings.weight").values[position * E + e];
            if (!distil) x[t][e] += c.get(pre + "embeddings.token_type_embeddings.weight").values[type * E + e];
        }
        x[t] = ln(x[t], pre + "embeddings.LayerNorm");
    }
    Reference ref;
    for (int l = 0; l < s.layers; ++l) {
        const std::string p = pre + (distil ? "transformer.layer." : "encoder.layer.") + std::to_string(l) + ".";
        const std::string qn = distil ? "attention.q_lin" : "attention.self.query";
        const std::string kn = distil ? "attention.k_lin" : "attention.self.key";
        const std::string vn = distil ? "attention.v_lin" : "attention.self.value";
        std::vector<Vec> q(n), k(n), v(n);
        for (int t = 0; t < n; ++t) {
            q[t] = linearOf(c, p + qn, x[t]);
            k[t] = linearOf(c, p + kn, x[t]);
            v[t] = linearOf(c, p + vn, x[t]);
        }
        ref.values.push_back(v);
        ref.residuals.push_back(x);
        auto allowed = [&](int, int j) { return attend_.empty() || attend_[j] != 0; };
        auto context = attend(q, k, v, H, H, d, allowed, ref);
        for (const auto& [layer, head] : maskHeads)
            if (layer == l)
                for (Vec& row : context) std::fill(row.begin() + head * d, row.begin() + (head + 1) * d, 0.0);
        for (int t = 0; t < n; ++t) {
            const Vec o = linearOf(c, p + (distil ? "attention.out_lin" : "attention.output.dense"), context[t]);
            Vec y(E);
            for (int e = 0; e < E; ++e) y[e] = x[t][e] + o[e];
            x[t] = ln(y, p + (distil ? "sa_layer_norm" : "attention.output.LayerNorm"));
            Vec inner = linearOf(c, p + (distil ? "ffn.lin1" : "intermediate.dense"), x[t]);
            for (double& a : inner) a = activate(a, s.activation);
            const Vec out = linearOf(c, p + (distil ? "ffn.lin2" : "output.dense"), inner);
            for (int e = 0; e < E; ++e) y[e] = x[t][e] + out[e];
            x[t] = ln(y, p + (distil ? "output_layer_norm" : "output.LayerNorm"));
        }
    }
    ref.hidden = x;
    if (s.labels > 0) {  // the sequence classification heads, on the first token's final state
        const auto dense = [&](const std::string& name, bool relu) {
            Vec h = linearOf(c, name, x[0]);
            for (double& a : h) a = relu ? std::max(0.0, a) : std::tanh(a);
            return h;
        };
        if (s.type == "roberta")
            ref.logits = linearOf(c, "classifier.out_proj", dense("classifier.dense", false));
        else if (distil)
            ref.logits = linearOf(c, "classifier", dense("pre_classifier", true));
        else
            ref.logits = linearOf(c, "classifier", dense(pre + "pooler.dense", false));
    }
    return ref;
}

Reference referenceVit(const Checkpoint& c, const VitSpec& s, const std::vector<double>& pixels) {
    using namespace reference_families;
    const int E = s.hidden, P = s.patch, g = s.imageSize / P, n = g * g + 1, H = s.heads, d = E / H, S = s.imageSize;
    const std::string pre = s.prefix ? "vit." : "";
    const double eps = 1e-12;
    const Tensor& conv = c.get(pre + "embeddings.patch_embeddings.projection.weight");  // [E, 3, P, P]
    const Tensor& convB = c.get(pre + "embeddings.patch_embeddings.projection.bias");
    const Tensor& pos = c.get(pre + "embeddings.position_embeddings");
    std::vector<Vec> x(n, Vec(E));
    for (int e = 0; e < E; ++e) x[0][e] = c.get(pre + "embeddings.cls_token").values[e] + pos.values[e];
    for (int r = 0; r < g; ++r)
        for (int col = 0; col < g; ++col) {
            const int t = 1 + r * g + col;
            for (int e = 0; e < E; ++e) {
                double sum = convB.values[e];
                for (int ch = 0; ch < 3; ++ch)
                    for (int py = 0; py < P; ++py)
                        for (int px = 0; px < P; ++px)
                            sum += conv.values[((e * 3 + ch) * P + py) * P + px] *
                                   pixels[(static_cast<std::size_t>(ch) * S + r * P + py) * S + col * P + px];
                x[t][e] = sum + pos.values[t * E + e];
            }
        }
    auto ln = [&](const Vec& v, const std::string& name) {
        return layerNorm(v, c.get(name + ".weight"), c.get(name + ".bias"), eps);
    };
    Reference ref;
    for (int l = 0; l < s.layers; ++l) {
        const std::string p = pre + "encoder.layer." + std::to_string(l) + ".";
        std::vector<Vec> q(n), k(n), v(n);
        for (int t = 0; t < n; ++t) {
            const Vec h = ln(x[t], p + "layernorm_before");
            q[t] = linearOf(c, p + "attention.attention.query", h);
            k[t] = linearOf(c, p + "attention.attention.key", h);
            v[t] = linearOf(c, p + "attention.attention.value", h);
        }
        ref.values.push_back(v);
        ref.residuals.push_back(x);
        const auto context = attend(
                q, k, v, H, H, d, [](int, int) { return true; }, ref);
        for (int t = 0; t < n; ++t) {
            const Vec o = linearOf(c, p + "attention.output.dense", context[t]);
            for (int e = 0; e < E; ++e) x[t][e] += o[e];
            Vec inner = linearOf(c, p + "intermediate.dense", ln(x[t], p + "layernorm_after"));
            for (double& a : inner) a = geluErf(a);
            const Vec out = linearOf(c, p + "output.dense", inner);
            for (int e = 0; e < E; ++e) x[t][e] += out[e];
        }
    }
    if (s.labels) ref.logits = linearOf(c, "classifier", ln(x[0], pre + "layernorm"));
    for (const Vec& row : x) ref.hidden.push_back(ln(row, pre + "layernorm"));
    return ref;
}

}  // namespace attnscope::testing
