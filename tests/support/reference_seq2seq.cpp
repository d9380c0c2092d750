// Independent forwards for the T5, BART, mBART and Marian fixtures: plain loops in double
// precision, written from Hugging Face's modeling_t5.py, modeling_bart.py, modeling_mbart.py and
// modeling_marian.py (no LibTorch, nothing shared with core).
#include "fixtures_seq2seq.h"
#include "reference_math.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

namespace attnscope::testing {

namespace {
namespace reference_seq2seq {  // this file's helpers, apart from the other support files' in a unity build

using Vec = std::vector<double>;
using Rows = std::vector<Vec>;
using Maps = std::vector<std::vector<double>>;  // [head][i * m + j]

const Tensor* find(const Checkpoint& c, const std::string& name) {
    auto it = c.tensors.find(name);
    return it == c.tensors.end() ? nullptr : &it->second;
}

// y = W x (+ b), W [out, in]; the bias is used when `name.bias` exists.
Vec linear(const Checkpoint& c, const std::string& name, const Vec& x) {
    const Tensor& w = c.get(name + ".weight");
    const Tensor* b = find(c, name + ".bias");
    const std::size_t out = w.shape[0], in = w.shape[1];
    Vec y(out);
    for (std::size_t o = 0; o < out; ++o) {
        double s = b ? b->values[o] : 0.0;
        for (std::size_t i = 0; i < in; ++i) s += static_cast<double>(w.values[o * in + i]) * x[i];
        y[o] = s;
    }
    return y;
}

Rows linearRows(const Checkpoint& c, const std::string& name, const Rows& x) {
    Rows y;
    for (const Vec& r : x) y.push_back(linear(c, name, r));
    return y;
}

double act(const std::string& name, double x) {
    if (name == "silu" || name == "swish") return x / (1 + std::exp(-x));
    return activate(x, name);  // relu, gelu (erf), otherwise the tanh form (gelu_new)
}

bool inLayers(const Seq2seqRun& run, int layer) {
    return run.temperatureLayers.empty() ||
           std::find(run.temperatureLayers.begin(), run.temperatureLayers.end(), layer) != run.temperatureLayers.end();
}

bool masked(const Seq2seqRun& run, const std::string& block, int layer, int head) {
    for (const auto& m : run.maskHeads)
        if (m.block == block && m.layer == layer && m.head == head) return true;
    return false;
}

// One attention layer: q [n][H·d], k and v [m][H·d]; logit = scale · q·k + bias(h, i, j), divided
// by the run's temperature; causal masks keys after the query. Returns the context [n][H·d] with
// masked heads zero, and appends the probabilities to `maps`.
Rows attend(const Rows& q, const Rows& k, const Rows& v, int heads, double scale,
            const std::function<double(int, int, int)>& bias, bool causal, double temperature, const std::string& block,
            int layer, const Seq2seqRun& run, Maps& maps) {
    const std::size_t n = q.size(), m = k.size(), d = q[0].size() / heads;
    Rows context(n, Vec(q[0].size(), 0.0));
    for (int h = 0; h < heads; ++h) {
        std::vector<double> probs(n * m, 0.0);
        for (std::size_t i = 0; i < n; ++i) {
            Vec logit(m, -std::numeric_limits<double>::infinity());
            double top = -std::numeric_limits<double>::infinity();
            for (std::size_t j = 0; j < m; ++j) {
                if (causal && j > i) continue;
                double s = 0;
                for (std::size_t e = 0; e < d; ++e) s += q[i][h * d + e] * k[j][h * d + e];
                s = s * scale;
                if (bias) s += bias(h, static_cast<int>(i), static_cast<int>(j));
                logit[j] = s / temperature;
                top = std::max(top, logit[j]);
            }
            double sum = 0;
            for (std::size_t j = 0; j < m; ++j) sum += (logit[j] = std::exp(logit[j] - top));
            for (std::size_t j = 0; j < m; ++j) probs[i * m + j] = logit[j] / sum;
            if (masked(run, block, layer, h)) continue;
            for (std::size_t j = 0; j < m; ++j)
                for (std::size_t e = 0; e < d; ++e) context[i][h * d + e] += probs[i * m + j] * v[j][h * d + e];
        }
        maps.push_back(std::move(probs));
    }
    return context;
}

Rows embedRows(const Tensor& table, const std::vector<long long>& ids) {
    const std::size_t w = table.shape[1];
    Rows x;
    for (long long id : ids) x.emplace_back(table.values.begin() + id * w, table.values.begin() + (id + 1) * w);
    return x;
}

Vec headLogits(const Tensor& head, const Vec& x, const Tensor* bias) {
    const std::size_t V = head.shape[0], E = head.shape[1];
    Vec out(V);
    for (std::size_t t = 0; t < V; ++t) {
        double s = bias ? bias->values[t] : 0.0;
        for (std::size_t e = 0; e < E; ++e) s += static_cast<double>(head.values[t * E + e]) * x[e];
        out[t] = s;
    }
    return out;
}

// ---- T5 ----------------------------------------------------------------------------------------

Vec t5Norm(const Tensor& w, const Vec& x) {
    double ms = 0;
    for (double v : x) ms += v * v;
    ms /= x.size();
    Vec y(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] / std::sqrt(ms + 1e-6) * w.values[i];
    return y;
}

// T5Attention._relative_position_bucket for one relative position (key - query); the logarithm in
// float32 as torch computes it there.
int t5Bucket(long long rel, bool bidirectional, int buckets, int maxDistance) {
    int result = 0;
    if (bidirectional) {
        buckets /= 2;
        if (rel > 0) result += buckets;
        rel = rel < 0 ? -rel : rel;
    } else {
        rel = rel < 0 ? -rel : 0;
    }
    const int maxExact = buckets / 2;
    if (rel < maxExact) return result + static_cast<int>(rel);
    const float ratio = static_cast<float>(rel) / static_cast<float>(maxExact);
    const float large = std::log(ratio) / static_cast<float>(std::log(static_cast<double>(maxDistance) / maxExact)) *
                        static_cast<float>(buckets - maxExact);
    return result + std::min(maxExact + static_cast<int>(large), buckets - 1);
}

}  // namespace reference_seq2seq
}  // namespace

Seq2seqReference referenceT5(const Checkpoint& c, const T5Spec& s, const std::vector<long long>& source,
                             const std::vector<long long>& target, const Seq2seqRun& run) {
    using namespace reference_seq2seq;
    Seq2seqReference ref;
    const Tensor* table = find(c, "shared.weight");
    if (!table) table = find(c, "encoder.embed_tokens.weight");
    const int decoderLayers = s.writeDecoderLayers ? s.decoderLayers : s.layers;
    auto biasOf = [&](const std::string& stack, bool bidirectional) {
        const Tensor& b = c.get(stack + ".block.0.layer.0.SelfAttention.relative_attention_bias.weight");
        return [&b, bidirectional, &s](int h, int i, int j) {
            return static_cast<double>(
                    b.values[t5Bucket(j - i, bidirectional, s.buckets, s.maxDistance) * s.heads + h]);
        };
    };
    auto attention = [&](const std::string& p, const Rows& xq, const Rows& xkv,
                         const std::function<double(int, int, int)>& bias, bool causal, const std::string& block, int l,
                         Maps& maps) {
        const double t = inLayers(run, l) ? run.temperature : 1.0;
        Rows ctx = attend(linearRows(c, p + "q", xq), linearRows(c, p + "k", xkv), linearRows(c, p + "v", xkv), s.heads,
                          1.0, bias, causal, t, block, l, run, maps);
        return linearRows(c, p + "o", ctx);
    };
    auto feedForward = [&](const std::string& p, Vec x) {
        const Vec h = t5Norm(c.get(p + "layer_norm.weight"), x);
        Vec a;
        if (s.gated) {
            a = linear(c, p + "DenseReluDense.wi_0", h);
            const Vec g = linear(c, p + "DenseReluDense.wi_1", h);
            for (std::size_t i = 0; i < a.size(); ++i) a[i] = act("gelu_new", a[i]) * g[i];
        } else {
            a = linear(c, p + "DenseReluDense.wi", h);
            for (double& v : a) v = act("relu", v);
        }
        const Vec o = linear(c, p + "DenseReluDense.wo", a);
        for (std::size_t i = 0; i < x.size(); ++i) x[i] += o[i];
        return x;
    };
    auto addInto = [](Rows& x, const Rows& y) {
        for (std::size_t i = 0; i < x.size(); ++i)
            for (std::size_t e = 0; e < x[i].size(); ++e) x[i][e] += y[i][e];
    };
    auto normRows = [&](const std::string& name, const Rows& x) {
        Rows y;
        for (const Vec& r : x) y.push_back(t5Norm(c.get(name), r));
        return y;
    };

    Rows x = embedRows(*table, source);
    const auto encBias = biasOf("encoder", true);
    for (int l = 0; l < s.layers; ++l) {
        const std::string p = "encoder.block." + std::to_string(l) + ".layer.";
        const Rows h = normRows(p + "0.layer_norm.weight", x);
        ref.encoder.emplace_back();
        addInto(x, attention(p + "0.SelfAttention.", h, h, encBias, false, "encoder", l, ref.encoder.back()));
        for (Vec& r : x) r = feedForward(p + "1.", r);
    }
    const Rows memory = normRows("encoder.final_layer_norm.weight", x);

    Rows y = embedRows(*table, target);
    const auto decBias = biasOf("decoder", false);
    for (int l = 0; l < decoderLayers; ++l) {
        const std::string p = "decoder.block." + std::to_string(l) + ".layer.";
        Rows h = normRows(p + "0.layer_norm.weight", y);
        ref.decoder.emplace_back();
        addInto(y, attention(p + "0.SelfAttention.", h, h, decBias, true, "decoder", l, ref.decoder.back()));
        h = normRows(p + "1.layer_norm.weight", y);
        ref.cross.emplace_back();
        addInto(y, attention(p + "1.EncDecAttention.", h, memory, nullptr, false, "cross", l, ref.cross.back()));
        for (Vec& r : y) r = feedForward(p + "2.", r);
    }
    const Tensor& head = s.tied ? *table : c.get("lm_head.weight");
    for (Vec r : normRows("decoder.final_layer_norm.weight", y)) {
        if (s.tied)
            for (double& v : r) v *= 1.0 / std::sqrt(static_cast<double>(s.dModel));
        ref.logits.push_back(headLogits(head, r, nullptr));
    }
    return ref;
}

Seq2seqReference referenceBart(const Checkpoint& c, const BartSpec& s, const std::vector<long long>& source,
                               const std::vector<long long>& target, const Seq2seqRun& run) {
    using namespace reference_seq2seq;
    Seq2seqReference ref;
    const bool marian = s.type == "marian", preNorm = s.type == "mbart";
    const std::string pre = s.prefix ? "model." : "";
    const Tensor* shared = find(c, pre + "shared.weight");
    if (!shared) shared = find(c, pre + "encoder.embed_tokens.weight");
    const Tensor& encTable = *shared;
    const Tensor& decTable = s.decoderVocab > 0 ? c.get(pre + "decoder.embed_tokens.weight") : *shared;
    const double E = s.dModel;
    auto norm = [&](const std::string& name, const Vec& x) {
        return layerNorm(x, c.get(name + ".weight"), c.get(name + ".bias"), 1e-5);
    };
    // Token embeddings (× √d when scale_embedding) plus positions: learned rows from offset 2, or
    // Marian's sinusoids (sines of the even frequencies in the first half, cosines after).
    auto embed = [&](const std::string& stack, const Tensor& table, const std::vector<long long>& ids) {
        Rows x = embedRows(table, ids);
        for (std::size_t p = 0; p < x.size(); ++p)
            for (int e = 0; e < s.dModel; ++e) {
                if (s.scaleEmbedding) x[p][e] *= std::sqrt(E);
                if (marian) {
                    const int half = (s.dModel + 1) / 2, j = e < half ? 2 * e : 2 * (e - half) + 1;
                    const double angle = static_cast<double>(p) / std::pow(10000.0, 2.0 * (j / 2) / E);
                    x[p][e] += e < half ? std::sin(angle) : std::cos(angle);
                } else {
                    x[p][e] += c.get(pre + stack + ".embed_positions.weight").values[(p + 2) * s.dModel + e];
                }
            }
        if (!marian)
            for (Vec& r : x) r = norm(pre + stack + ".layernorm_embedding", r);
        return x;
    };
    // Residual sublayer: pre-LN x + f(ln x) (mBART), post-LN ln(x + f(x)).
    auto sublayer = [&](Rows& x, const std::string& normName, const std::function<Rows(const Rows&)>& f) {
        Rows in = x;
        if (preNorm)
            for (Vec& r : in) r = norm(normName, r);
        const Rows out = f(in);
        for (std::size_t i = 0; i < x.size(); ++i) {
            for (std::size_t e = 0; e < x[i].size(); ++e) x[i][e] += out[i][e];
            if (!preNorm) x[i] = norm(normName, x[i]);
        }
    };
    auto attention = [&](const std::string& p, const Rows& xq, const Rows& xkv, int heads, bool causal,
                         const std::string& block, int l, Maps& maps) {
        const double t = inLayers(run, l) ? run.temperature : 1.0;
        Rows ctx = attend(linearRows(c, p + "q_proj", xq), linearRows(c, p + "k_proj", xkv),
                          linearRows(c, p + "v_proj", xkv), heads, 1.0 / std::sqrt(E / heads), nullptr, causal, t,
                          block, l, run, maps);
        return linearRows(c, p + "out_proj", ctx);
    };
    auto feedForward = [&](const std::string& p, const Rows& h) {
        Rows out;
        for (const Vec& r : h) {
            Vec a = linear(c, p + "fc1", r);
            for (double& v : a) v = act(s.activation, v);
            out.push_back(linear(c, p + "fc2", a));
        }
        return out;
    };

    Rows x = embed("encoder", encTable, source);
    for (int l = 0; l < s.encoderLayers; ++l) {
        const std::string p = pre + "encoder.layers." + std::to_string(l) + ".";
        ref.encoder.emplace_back();
        sublayer(x, p + "self_attn_layer_norm", [&](const Rows& h) {
            return attention(p + "self_attn.", h, h, s.encoderHeads, false, "encoder", l, ref.encoder.back());
        });
        sublayer(x, p + "final_layer_norm", [&](const Rows& h) { return feedForward(p, h); });
    }
    if (preNorm)
        for (Vec& r : x) r = norm(pre + "encoder.layer_norm", r);
    const Rows memory = x;

    Rows y = embed("decoder", decTable, target);
    for (int l = 0; l < s.decoderLayers; ++l) {
        const std::string p = pre + "decoder.layers." + std::to_string(l) + ".";
        ref.decoder.emplace_back();
        ref.cross.emplace_back();
        sublayer(y, p + "self_attn_layer_norm", [&](const Rows& h) {
            return attention(p + "self_attn.", h, h, s.decoderHeads, true, "decoder", l, ref.decoder.back());
        });
        sublayer(y, p + "encoder_attn_layer_norm", [&](const Rows& h) {
            return attention(p + "encoder_attn.", h, memory, s.decoderHeads, false, "cross", l, ref.cross.back());
        });
        sublayer(y, p + "final_layer_norm", [&](const Rows& h) { return feedForward(p, h); });
    }
    if (preNorm)
        for (Vec& r : y) r = norm(pre + "decoder.layer_norm", r);
    const Tensor& head = s.tied ? decTable : c.get("lm_head.weight");
    for (const Vec& r : y) ref.logits.push_back(headLogits(head, r, find(c, "final_logits_bias")));
    return ref;
}

}  // namespace attnscope::testing
