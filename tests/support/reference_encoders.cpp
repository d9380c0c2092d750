// Independent forward for the ModernBERT fixture: plain loops in double precision, written from
// modeling_modernbert.py's eager path (nothing shared with core).
#include "fixtures_encoders.h"
#include "reference_math.h"

#include <cmath>

namespace attnscope::testing {

namespace {
namespace reference_encoders {  // this file's helpers, apart from the other support files' in a unity build

using Vec = std::vector<double>;

// nn.Linear over name.weight [out, in] and name.bias when the checkpoint has it.
Vec affine(const Checkpoint& c, const std::string& name, const Vec& x) {
    const Tensor& w = c.get(name + ".weight");
    const auto b = c.tensors.find(name + ".bias");
    const std::size_t out = w.shape[0], in = w.shape[1];
    Vec y(out, 0.0);
    for (std::size_t o = 0; o < out; ++o) {
        double s = b == c.tensors.end() ? 0.0 : b->second.values[o];
        for (std::size_t i = 0; i < in; ++i) s += w.values[o * in + i] * x[i];
        y[o] = s;
    }
    return y;
}

// nn.LayerNorm(bias=norm_bias): a missing bias is zero.
Vec norm(const Checkpoint& c, const std::string& name, const Vec& x) {
    const Vec zero(x.size(), 0.0);
    const auto b = c.tensors.find(name + ".bias");
    if (b == c.tensors.end()) return layerNormRow(x, c.get(name + ".weight").values, zero, 1e-5);
    return layerNormRow(x, c.get(name + ".weight").values, b->second.values, 1e-5);
}

double act(double x, const std::string& name) { return name == "silu" ? x / (1 + std::exp(-x)) : activate(x, name); }

// rotate_half rotary of one head's vector v [d] at position p: pairs (i, i + d/2).
Vec rotate(const Vec& v, int p, double theta) {
    const int d = static_cast<int>(v.size()), half = d / 2;
    Vec out(v.size());
    for (int i = 0; i < half; ++i) {
        const double angle = p * std::pow(theta, -2.0 * i / d), cs = std::cos(angle), sn = std::sin(angle);
        out[i] = v[i] * cs - v[i + half] * sn;
        out[i + half] = v[i + half] * cs + v[i] * sn;
    }
    return out;
}

// One layer's attention over its normed input h: records the maps, returns Wo·context rows.
std::vector<Vec> attention(const Checkpoint& c, const ModernBertSpec& s, const std::string& p, int layer,
                           const std::vector<Vec>& h, const std::vector<int>& attend, Reference& ref) {
    const int n = static_cast<int>(h.size()), E = s.hidden, H = s.heads, d = E / H;
    const bool local = layer % s.globalEvery != 0;
    const double theta = local ? s.localTheta : s.globalTheta;
    std::vector<Vec> qkv(n);
    for (int t = 0; t < n; ++t) qkv[t] = affine(c, p + "attn.Wqkv", h[t]);
    auto head = [&](int t, int part, int hd) {  // qkv.view(n, 3, H, d)
        return Vec(qkv[t].begin() + part * E + hd * d, qkv[t].begin() + part * E + (hd + 1) * d);
    };
    std::vector<Vec> context(n, Vec(E, 0.0));
    ref.probs.emplace_back();
    for (int hd = 0; hd < H; ++hd) {
        Vec probs(static_cast<std::size_t>(n) * n, 0.0);
        for (int i = 0; i < n; ++i) {
            const Vec q = rotate(head(i, 0, hd), i, theta);
            Vec scores(n, 0.0);
            double mx = -1e300, sum = 0;
            for (int j = 0; j < n; ++j) {
                const bool seen = (attend.empty() || attend[j]) && (!local || std::abs(i - j) <= s.localAttention / 2);
                if (!seen) continue;
                const Vec k = rotate(head(j, 1, hd), j, theta);
                double dot = 0;
                for (int e = 0; e < d; ++e) dot += q[e] * k[e];
                scores[j] = dot / std::sqrt(static_cast<double>(d));
                mx = std::max(mx, scores[j]);
                probs[i * n + j] = 1;  // marks the key as seen
            }
            for (int j = 0; j < n; ++j)
                if (probs[i * n + j] > 0) sum += (probs[i * n + j] = std::exp(scores[j] - mx));
            for (int j = 0; j < n; ++j) {
                probs[i * n + j] /= sum;
                const Vec v = head(j, 2, hd);
                for (int e = 0; e < d; ++e) context[i][hd * d + e] += probs[i * n + j] * v[e];
            }
        }
        ref.probs.back().push_back(probs);
    }
    std::vector<Vec> out(n);
    for (int t = 0; t < n; ++t) out[t] = affine(c, p + "attn.Wo", context[t]);
    return out;
}

}  // namespace reference_encoders
}  // namespace

ModernBertReference referenceModernBert(const Checkpoint& c, const ModernBertSpec& s, const std::vector<long long>& ids,
                                        const std::vector<int>& attend) {
    using namespace reference_encoders;
    const int n = static_cast<int>(ids.size()), E = s.hidden, I = s.inner;
    const std::string pre = s.head == "none" ? "" : "model.";
    const Tensor& table = c.get(pre + "embeddings.tok_embeddings.weight");
    std::vector<Vec> x(n);
    for (int t = 0; t < n; ++t)
        x[t] = norm(c, pre + "embeddings.norm",
                    Vec(table.values.begin() + ids[t] * E, table.values.begin() + (ids[t] + 1) * E));
    ModernBertReference out;
    for (int l = 0; l < s.layers; ++l) {
        const std::string p = pre + "layers." + std::to_string(l) + ".";
        std::vector<Vec> h(n);
        for (int t = 0; t < n; ++t) h[t] = l == 0 ? x[t] : norm(c, p + "attn_norm", x[t]);  // layer 0: Identity
        const std::vector<Vec> a = attention(c, s, p, l, h, attend, out.base);
        for (int t = 0; t < n; ++t) {
            for (int e = 0; e < E; ++e) x[t][e] += a[t][e];
            const Vec wi = affine(c, p + "mlp.Wi", norm(c, p + "mlp_norm", x[t]));
            Vec g(I);
            for (int i = 0; i < I; ++i) g[i] = act(wi[i], s.activation) * wi[I + i];  // input, gate = chunk(2)
            const Vec m = affine(c, p + "mlp.Wo", g);
            for (int e = 0; e < E; ++e) x[t][e] += m[e];
        }
    }
    for (Vec& row : x) row = norm(c, pre + "final_norm", row);
    out.base.hidden = x;
    auto predictionHead = [&](const Vec& row) {
        Vec y = affine(c, "head.dense", row);
        for (double& v : y) v = s.classifierActivation == "tanh" ? std::tanh(v) : act(v, s.classifierActivation);
        return norm(c, "head.norm", y);
    };
    if (s.head == "classifier") {
        Vec pooled = x[0];
        if (s.pooling == "mean") {
            pooled.assign(E, 0.0);
            int count = 0;
            for (int t = 0; t < n; ++t)
                if (attend.empty() || attend[t]) {
                    ++count;
                    for (int e = 0; e < E; ++e) pooled[e] += x[t][e];
                }
            for (double& v : pooled) v /= count;
        }
        out.base.logits = affine(c, "classifier", predictionHead(pooled));
    } else if (s.head == "mlm") {
        Checkpoint decoder;
        decoder.tensors["decoder.weight"] = s.tied ? table : c.get("decoder.weight");
        if (s.decoderBias) decoder.tensors["decoder.bias"] = c.get("decoder.bias");
        for (const Vec& row : x) out.mlm.push_back(affine(decoder, "decoder", predictionHead(row)));
    }
    return out;
}

}  // namespace attnscope::testing
