// Independent forwards for the OPT, BLOOM and Falcon fixtures: plain loops in double precision,
// written from Hugging Face's modeling_opt.py, modeling_bloom.py and modeling_falcon.py (no
// LibTorch, nothing shared with core).
#include "fixtures_alibi.h"
#include "reference_math.h"

#include <cmath>
#include <functional>

namespace attnscope::testing {

namespace {
namespace reference_alibi {  // this file's helpers, apart from the other support files' in a unity build

using Vec = std::vector<double>;
using Rows = std::vector<Vec>;

// nn.Linear `name`: y = W x (+ b when the checkpoint has name.bias), W [out, in].
Vec linear(const Checkpoint& c, const std::string& name, const Vec& x) {
    const Tensor& w = c.get(name + ".weight");
    auto b = c.tensors.find(name + ".bias");
    const std::size_t out = w.shape[0], in = w.shape[1];
    Vec y(out, 0.0);
    for (std::size_t o = 0; o < out; ++o) {
        double s = b == c.tensors.end() ? 0.0 : b->second.values[o];
        for (std::size_t i = 0; i < in; ++i) s += w.values[o * in + i] * x[i];
        y[o] = s;
    }
    return y;
}

// y = x Wᵀ for a bare weight [out, in] (heads, projections without bias).
Vec matvec(const Tensor& w, const Vec& x) {
    const std::size_t out = w.shape[0], in = w.shape[1];
    Vec y(out, 0.0);
    for (std::size_t o = 0; o < out; ++o)
        for (std::size_t i = 0; i < in; ++i) y[o] += w.values[o * in + i] * x[i];
    return y;
}

// nn.LayerNorm with eps; without name.weight (elementwise_affine false) weight 1 and bias 0.
Vec norm(const Checkpoint& c, const std::string& name, const Vec& x, double eps) {
    if (!c.tensors.count(name + ".weight")) return layerNormRow(x, Vec(x.size(), 1.0), Vec(x.size(), 0.0), eps);
    return layerNorm(x, c.get(name + ".weight"), c.get(name + ".bias"), eps);
}

Vec add(const Vec& a, const Vec& b) {
    Vec y(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) y[i] = a[i] + b[i];
    return y;
}

Rows embed(const Tensor& table, const std::vector<long long>& ids) {
    const std::size_t width = table.shape[1];
    Rows x;
    for (long long id : ids) x.emplace_back(table.values.begin() + id * width, table.values.begin() + (id + 1) * width);
    return x;
}

// Causal multi-head attention of one layer. q [n][H·d], k and v [n][G·d] (query head h reads
// kv head h / (H/G)); logit(h, i, j, q·k) is the layer's own pre-mask logit. Temperature divides
// it in the layers run.inLayer() picks; masked heads contribute zeros. Appends the layer's maps
// to ref and returns the context rows [n][H·d].
using Logit = std::function<double(int h, int i, int j, double dot)>;
Rows attend(const Rows& q, const Rows& k, const Rows& v, int H, int G, int d, const Logit& logit, int layer,
            const AlibiFamilyRun& run, Reference& ref) {
    const int n = static_cast<int>(q.size());
    const double T = run.inLayer(layer) ? run.temperature : 1.0;
    Rows context(n, Vec(static_cast<std::size_t>(H) * d, 0.0));
    ref.probs.emplace_back();
    for (int h = 0; h < H; ++h) {
        const int g = h / (H / G);
        bool masked = false;
        for (const auto& [ml, mh] : run.maskHeads) masked = masked || (ml == layer && mh == h);
        Vec flat(static_cast<std::size_t>(n) * n, 0.0);
        for (int i = 0; i < n; ++i) {
            Vec z(i + 1);
            double top = -1e300, sum = 0;
            for (int j = 0; j <= i; ++j) {
                double dot = 0;
                for (int e = 0; e < d; ++e) dot += q[i][h * d + e] * k[j][g * d + e];
                z[j] = logit(h, i, j, dot) / T;
                top = std::max(top, z[j]);
            }
            for (int j = 0; j <= i; ++j) sum += (z[j] = std::exp(z[j] - top));
            for (int j = 0; j <= i; ++j) flat[static_cast<std::size_t>(i) * n + j] = z[j] / sum;
        }
        applyProbsHook(layer, h, flat);
        for (int i = 0; i < n && !masked; ++i)
            for (int j = 0; j <= i; ++j)
                for (int e = 0; e < d; ++e)
                    context[i][h * d + e] += flat[static_cast<std::size_t>(i) * n + j] * v[j][g * d + e];
        ref.probs.back().push_back(std::move(flat));
    }
    return context;
}

// Rotate-half rotary over each head's d dims at `position`, inv_freq_i = theta^(-2i/d).
void rotate(Vec& row, int heads, int d, int position, double theta) {
    for (int h = 0; h < heads; ++h)
        for (int i = 0; i < d / 2; ++i) {
            const double a = position * std::pow(theta, -2.0 * i / d);
            double& x1 = row[h * d + i];
            double& x2 = row[h * d + i + d / 2];
            const double r1 = x1 * std::cos(a) - x2 * std::sin(a), r2 = x2 * std::cos(a) + x1 * std::sin(a);
            x1 = r1;
            x2 = r2;
        }
}

// BloomGelu: the tanh approximation with Megatron's rounded constant.
double bloomGelu(double x) { return x * 0.5 * (1.0 + std::tanh(0.79788456 * x * (1 + 0.044715 * x * x))); }

Vec mlp(const Checkpoint& c, const std::string& up, const std::string& down, const Vec& x,
        const std::function<double(double)>& act) {
    Vec inner = linear(c, up, x);
    for (double& a : inner) a = act(a);
    return linear(c, down, inner);
}

}  // namespace reference_alibi
}  // namespace

std::vector<double> referenceAlibiSlopes(int heads) {
    int p = 1;
    while (2 * p <= heads) p *= 2;
    std::vector<double> slopes;
    const double base = std::pow(2.0, -std::pow(2.0, -(std::log2(p) - 3)));
    for (int i = 1; i <= p; ++i) slopes.push_back(std::pow(base, i));
    const double extra = std::pow(2.0, -std::pow(2.0, -(std::log2(2 * p) - 3)));
    for (int i = 0; i < std::min(p, heads - p); ++i) slopes.push_back(std::pow(extra, 2 * i + 1));
    return slopes;
}

Reference referenceOpt(const Checkpoint& c, const OptSpec& s, const std::vector<long long>& ids,
                       const AlibiFamilyRun& run) {
    using namespace reference_alibi;
    const int n = static_cast<int>(ids.size()), E = s.hidden, H = s.heads, d = E / H;
    const std::string pre = s.prefix ? "model.decoder." : "decoder.";
    const bool project = s.projDim && s.projDim != s.hidden;
    const double eps = 1e-5;
    Rows x = embed(c.get(pre + "embed_tokens.weight"), ids);
    const Tensor& positions = c.get(pre + "embed_positions.weight");
    for (int t = 0; t < n; ++t) {
        if (project) x[t] = matvec(c.get(pre + "project_in.weight"), x[t]);
        // position_ids = cumsum(attention_mask) - 1, looked up at + 2 (OPTLearnedPositionalEmbedding)
        for (int e = 0; e < E; ++e) x[t][e] += positions.values[static_cast<std::size_t>(t + 2) * E + e];
    }
    Reference ref;
    const double scaling = 1.0 / std::sqrt(static_cast<double>(d));
    for (int l = 0; l < s.layers; ++l) {
        const std::string p = pre + "layers." + std::to_string(l) + ".";
        Rows q(n), k(n), v(n);
        for (int t = 0; t < n; ++t) {
            const Vec h = s.preNorm ? norm(c, p + "self_attn_layer_norm", x[t], eps) : x[t];
            q[t] = linear(c, p + "self_attn.q_proj", h);
            for (double& a : q[t]) a *= scaling;  // OPTAttention scales q before the product
            k[t] = linear(c, p + "self_attn.k_proj", h);
            v[t] = linear(c, p + "self_attn.v_proj", h);
        }
        ref.values.push_back(v);  // what the heads read, and the stream entering the block (map sources)
        ref.residuals.push_back(x);
        const Rows ctx = attend(
                q, k, v, H, H, d, [](int, int, int, double dot) { return dot; }, l, run, ref);
        for (int t = 0; t < n; ++t) {
            x[t] = add(x[t], linear(c, p + "self_attn.out_proj", ctx[t]));
            if (!s.preNorm) x[t] = norm(c, p + "self_attn_layer_norm", x[t], eps);
            const Vec h = s.preNorm ? norm(c, p + "final_layer_norm", x[t], eps) : x[t];
            x[t] = add(x[t], mlp(c, p + "fc1", p + "fc2", h, [&](double a) { return activate(a, s.activation); }));
            if (!s.preNorm) x[t] = norm(c, p + "final_layer_norm", x[t], eps);
        }
    }
    Vec last = x[n - 1];
    if (s.preNorm && !s.removeFinalNorm) last = norm(c, pre + "final_layer_norm", last, eps);
    if (project) last = matvec(c.get(pre + "project_out.weight"), last);
    ref.logits = matvec(c.get(s.tied ? pre + "embed_tokens.weight" : "lm_head.weight"), last);
    return ref;
}

Reference referenceBloom(const Checkpoint& c, const BloomSpec& s, const std::vector<long long>& ids,
                         const AlibiFamilyRun& run) {
    using namespace reference_alibi;
    const int n = static_cast<int>(ids.size()), E = s.hidden, H = s.heads, d = E / H;
    const std::string pre = s.prefix ? "transformer." : "";
    const double eps = 1e-5;
    const Vec slopes = referenceAlibiSlopes(H);
    Rows x = embed(c.get(pre + "word_embeddings.weight"), ids);
    for (Vec& row : x) row = norm(c, pre + "word_embeddings_layernorm", row, eps);
    Reference ref;
    // BloomAttention: alibi.baddbmm(q, kᵀ, beta = 1, alpha = 1/√d), the alibi being slope · key position.
    const Logit logit = [&](int h, int, int j, double dot) {
        return dot / std::sqrt(static_cast<double>(d)) + slopes[h] * j;
    };
    for (int l = 0; l < s.layers; ++l) {
        const std::string p = pre + "h." + std::to_string(l) + ".";
        Rows q(n, Vec(E)), k(n, Vec(E)), v(n, Vec(E)), ln(n);
        for (int t = 0; t < n; ++t) {
            ln[t] = norm(c, p + "input_layernorm", x[t], eps);
            const Vec fused = linear(c, p + "self_attention.query_key_value", ln[t]);  // [H][3][d]
            for (int h = 0; h < H; ++h)
                for (int e = 0; e < d; ++e) {
                    q[t][h * d + e] = fused[(h * 3 + 0) * d + e];
                    k[t][h * d + e] = fused[(h * 3 + 1) * d + e];
                    v[t][h * d + e] = fused[(h * 3 + 2) * d + e];
                }
        }
        const Rows ctx = attend(q, k, v, H, H, d, logit, l, run, ref);
        for (int t = 0; t < n; ++t) {
            const Vec attended = add(s.residualAfterNorm ? ln[t] : x[t], linear(c, p + "self_attention.dense", ctx[t]));
            const Vec h = norm(c, p + "post_attention_layernorm", attended, eps);
            x[t] = add(s.residualAfterNorm ? h : attended,
                       mlp(c, p + "mlp.dense_h_to_4h", p + "mlp.dense_4h_to_h", h, bloomGelu));
        }
    }
    const Vec last = norm(c, pre + "ln_f", x[n - 1], eps);
    ref.logits = matvec(c.get(s.tied ? pre + "word_embeddings.weight" : "lm_head.weight"), last);
    return ref;
}

Reference referenceFalcon(const Checkpoint& c, const FalconSpec& s, const std::vector<long long>& ids,
                          const AlibiFamilyRun& run) {
    using namespace reference_alibi;
    const int n = static_cast<int>(ids.size()), E = s.hidden, H = s.heads, d = E / H;
    const int G = s.newArch ? (s.kvHeads ? s.kvHeads : H) : (s.multiQuery ? 1 : H);
    const int norms = s.normsInParallel ? s.normsInParallel : (s.newArch ? 2 : 1);
    const std::string pre = s.prefix ? "transformer." : "";
    const double eps = 1e-5, invNorm = 1.0 / std::sqrt(static_cast<double>(d));
    // build_alibi_tensor in modeling_falcon rounds the slopes to bfloat16.
    Vec slopes = referenceAlibiSlopes(H);
    for (double& m : slopes) m = fromBFloat16(toBFloat16(static_cast<float>(m)));
    const Logit logit = [&](int h, int, int j, double dot) {
        return s.alibi ? (dot + slopes[h] * j) * invNorm : dot * invNorm;
    };
    Rows x = embed(c.get(pre + "word_embeddings.weight"), ids);
    Reference ref;
    for (int l = 0; l < s.layers; ++l) {
        const std::string p = pre + "h." + std::to_string(l) + ".";
        Rows q(n, Vec(static_cast<std::size_t>(H) * d)), k(n, Vec(static_cast<std::size_t>(G) * d)), v = k, a(n);
        for (int t = 0; t < n; ++t) {
            a[t] = norm(c, p + (s.parallel && norms == 2 ? "ln_attn" : "input_layernorm"), x[t], eps);
            const Vec fused = linear(c, p + "self_attention.query_key_value", a[t]);
            // Where head h's query and kv head g's key and value sit in the fused row.
            const int per = H / G;
            for (int e = 0; e < d; ++e) {
                for (int h = 0; h < H; ++h) {
                    const int at = s.newArch ? (h / per) * (per + 2) + h % per : s.multiQuery ? h : h * 3;
                    q[t][h * d + e] = fused[at * d + e];
                }
                for (int g = 0; g < G; ++g) {
                    const int kAt = s.newArch ? g * (per + 2) + per : s.multiQuery ? H : g * 3 + 1;
                    k[t][g * d + e] = fused[kAt * d + e];
                    v[t][g * d + e] = fused[(kAt + 1) * d + e];
                }
            }
            if (!s.alibi) {
                rotate(q[t], H, d, t, s.theta);
                rotate(k[t], G, d, t, s.theta);
            }
        }
        const Rows ctx = attend(q, k, v, H, G, d, logit, l, run, ref);
        for (int t = 0; t < n; ++t) {
            const Vec attn = linear(c, p + "self_attention.dense", ctx[t]);
            auto act = [&](double z) { return activate(z, s.activation); };
            if (!s.parallel) {  // sequential: x + attn, then the MLP on its post-attention norm
                const Vec mid = add(x[t], attn);
                x[t] = add(mid, mlp(c, p + "mlp.dense_h_to_4h", p + "mlp.dense_4h_to_h",
                                    norm(c, p + "post_attention_layernorm", mid, eps), act));
            } else {
                const Vec m = norms == 2 ? norm(c, p + "ln_mlp", x[t], eps) : a[t];
                x[t] = add(x[t], add(mlp(c, p + "mlp.dense_h_to_4h", p + "mlp.dense_4h_to_h", m, act), attn));
            }
        }
    }
    const Vec last = norm(c, pre + "ln_f", x[n - 1], eps);
    ref.logits = matvec(c.get(s.tied ? pre + "word_embeddings.weight" : "lm_head.weight"), last);
    return ref;
}

}  // namespace attnscope::testing
