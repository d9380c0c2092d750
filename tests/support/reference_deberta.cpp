// Independent forward for the DeBERTa v2/v3 fixture: plain loops in double precision, written
// from modeling_deberta_v2.py's eager path (DebertaV2Embeddings, DisentangledSelfAttention,
// ConvLayer, ContextPooler); nothing shared with core.
#include "fixtures_deberta.h"
#include "reference_math.h"

#include <cmath>

namespace attnscope::testing {

long long debertaBucket(long long rel, int buckets, int maxPosition) {
    if (buckets <= 0 || maxPosition <= 0) return rel;
    const long long mid = buckets / 2;
    const long long absPos = rel < mid && rel > -mid ? mid - 1 : std::llabs(rel);
    if (absPos <= mid) return rel;
    const double logPos = std::ceil(std::log(static_cast<double>(absPos) / mid) /
                                    std::log(static_cast<double>(maxPosition - 1) / mid) * (mid - 1)) +
                          mid;
    return static_cast<long long>(logPos) * (rel > 0 ? 1 : -1);
}

namespace {
namespace reference_deberta {  // this file's helpers, apart from the other support files' in a unity build

using Vec = std::vector<double>;
using Rows = std::vector<Vec>;

struct Ctx {
    const Checkpoint& c;
    const DebertaSpec& s;
    std::string pre;
};

Vec affine(const Ctx& x, const std::string& name, const Vec& in) {
    const Tensor& w = x.c.get(name + ".weight");
    const auto b = x.c.tensors.find(name + ".bias");
    const std::size_t out = w.shape[0], width = w.shape[1];
    Vec y(out, 0.0);
    for (std::size_t o = 0; o < out; ++o) {
        double sum = b == x.c.tensors.end() ? 0.0 : b->second.values[o];
        for (std::size_t i = 0; i < width; ++i) sum += w.values[o * width + i] * in[i];
        y[o] = sum;
    }
    return y;
}

Vec norm(const Ctx& x, const std::string& name, const Vec& in) {
    return layerNorm(in, x.c.get(name + ".weight"), x.c.get(name + ".bias"), 1e-7);
}

double dot(const Vec& a, std::size_t from, const Vec& b, std::size_t bFrom, int d) {
    double sum = 0;
    for (int e = 0; e < d; ++e) sum += a[from + e] * b[bFrom + e];
    return sum;
}

Rows embed(const Ctx& x, const std::vector<long long>& ids, const std::vector<long long>& types,
           const std::vector<int>& attend) {
    const DebertaSpec& s = x.s;
    const Tensor& word = x.c.get(x.pre + "embeddings.word_embeddings.weight");
    const std::size_t M = word.shape[1];
    Rows out;
    for (std::size_t i = 0; i < ids.size(); ++i) {
        Vec e(word.values.begin() + ids[i] * M, word.values.begin() + (ids[i] + 1) * M);
        if (s.positionBiased)
            for (std::size_t k = 0; k < M; ++k)
                e[k] += x.c.get(x.pre + "embeddings.position_embeddings.weight").values[i * M + k];
        if (s.typeVocab > 0) {
            const long long t = types.empty() ? 0 : types[i];
            for (std::size_t k = 0; k < M; ++k)
                e[k] += x.c.get(x.pre + "embeddings.token_type_embeddings.weight").values[t * M + k];
        }
        if (static_cast<int>(M) != s.hidden) e = affine(x, x.pre + "embeddings.embed_proj", e);
        e = norm(x, x.pre + "embeddings.LayerNorm", e);
        if (!attend.empty() && !attend[i]) std::fill(e.begin(), e.end(), 0.0);
        out.push_back(e);
    }
    return out;
}

// Scores terms [H][3][n·n] of one layer; q, k the rows' projections [n][E].
std::vector<std::vector<Vec>> layerTerms(const Ctx& x, const std::string& p, const Rows& q, const Rows& k,
                                         const Rows& rel) {
    const DebertaSpec& s = x.s;
    const int n = static_cast<int>(q.size()), H = s.heads, d = s.hidden / H, span = s.span();
    const double scale = std::sqrt(static_cast<double>(d) * (1 + s.has("c2p") + s.has("p2c")));
    const int maxRel = s.maxRelative < 1 ? s.positions : s.maxRelative;
    Rows pk, pq;  // the relative embeddings through the position projections
    for (const Vec& r : rel) {
        if (s.has("c2p")) pk.push_back(affine(x, p + (s.shareKey ? "key_proj" : "pos_key_proj"), r));
        if (s.has("p2c")) pq.push_back(affine(x, p + (s.shareKey ? "query_proj" : "pos_query_proj"), r));
    }
    auto clampIndex = [&](long long v) { return static_cast<std::size_t>(std::clamp<long long>(v, 0, 2 * span - 1)); };
    std::vector<std::vector<Vec>> t(H, std::vector<Vec>(3, Vec(n * n, 0.0)));
    for (int h = 0; h < H; ++h)
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) {
                const std::size_t at = static_cast<std::size_t>(i) * n + j, hd = static_cast<std::size_t>(h) * d;
                t[h][0][at] = dot(q[i], hd, k[j], hd, d) / scale;
                if (!s.relative) continue;
                if (s.has("c2p"))
                    t[h][1][at] = dot(q[i], hd, pk[clampIndex(debertaBucket(i - j, s.buckets, maxRel) + span)], hd, d) /
                                  scale;
                // p2c as the reference indexes it: key j against the position query at −δ(j, i).
                if (s.has("p2c"))
                    t[h][2][at] = dot(k[j], hd, pq[clampIndex(span - debertaBucket(j - i, s.buckets, maxRel))], hd, d) /
                                  scale;
            }
    return t;
}

// One layer; records probs and terms.
Rows layer(const Ctx& x, int l, const Rows& h, const Rows& rel, const std::vector<int>& attend, DebertaReference& ref) {
    const DebertaSpec& s = x.s;
    const int n = static_cast<int>(h.size()), H = s.heads, d = s.hidden / H, E = s.hidden;
    const std::string p = x.pre + "encoder.layer." + std::to_string(l) + ".";
    Rows q, k, v;
    for (const Vec& r : h) {
        q.push_back(affine(x, p + "attention.self.query_proj", r));
        k.push_back(affine(x, p + "attention.self.key_proj", r));
        v.push_back(affine(x, p + "attention.self.value_proj", r));
    }
    ref.terms.push_back(layerTerms(x, p + "attention.self.", q, k, rel));
    auto real = [&](int i) { return attend.empty() || attend[i] != 0; };
    Rows context(n, Vec(E, 0.0));
    ref.base.probs.emplace_back();
    for (int hd = 0; hd < H; ++hd) {
        Vec probs(n * n, 0.0);
        for (int i = 0; i < n; ++i) {
            if (!real(i)) continue;  // XSoftmax: a padding row is all zero
            double mx = -1e300, sum = 0;
            Vec row(n);
            for (int j = 0; j < n; ++j) {
                const auto& t = ref.terms.back()[hd];
                row[j] = t[0][i * n + j] + t[1][i * n + j] + t[2][i * n + j];
                if (real(j)) mx = std::max(mx, row[j]);
            }
            for (int j = 0; j < n; ++j) sum += real(j) ? std::exp(row[j] - mx) : 0.0;
            for (int j = 0; j < n; ++j) probs[i * n + j] = real(j) ? std::exp(row[j] - mx) / sum : 0.0;
        }
        applyProbsHook(l, hd, probs);  // finite differences through α (gradient sources' tests)
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j)
                for (int e = 0; e < d; ++e) context[i][hd * d + e] += probs[i * n + j] * v[j][hd * d + e];
        ref.base.probs.back().push_back(probs);
    }
    Rows out;
    for (int i = 0; i < n; ++i) {
        Vec a = affine(x, p + "attention.output.dense", context[i]);
        for (int e = 0; e < E; ++e) a[e] += h[i][e];
        a = norm(x, p + "attention.output.LayerNorm", a);
        Vec f = affine(x, p + "intermediate.dense", a);
        for (double& z : f) z = activate(z, s.activation);
        Vec o = affine(x, p + "output.dense", f);
        for (int e = 0; e < E; ++e) o[e] += a[e];
        out.push_back(norm(x, p + "output.LayerNorm", o));
    }
    return out;
}

// ConvLayer over the embedding output `input`, added to layer 0's output.
Rows convolve(const Ctx& x, const Rows& input, const Rows& output, const std::vector<int>& attend) {
    const DebertaSpec& s = x.s;
    const int n = static_cast<int>(input.size()), E = s.hidden, K = s.convKernel, pad = (K - 1) / 2;
    const int per = E / s.convGroups;
    const Tensor& w = x.c.get(x.pre + "encoder.conv.conv.weight");
    const Tensor& b = x.c.get(x.pre + "encoder.conv.conv.bias");
    Rows out;
    for (int i = 0; i < n; ++i) {
        const bool real = attend.empty() || attend[i] != 0;
        Vec y(E);
        for (int o = 0; o < E; ++o) {
            double sum = b.values[o];
            const int group = o / per;
            for (int c = 0; c < per; ++c)
                for (int t = 0; t < K; ++t) {
                    const int at = i + t - pad;
                    if (at >= 0 && at < n) sum += w.values[(o * per + c) * K + t] * input[at][group * per + c];
                }
            sum = real ? sum : 0.0;
            y[o] = output[i][o] + (s.convAct == "tanh" ? std::tanh(sum) : activate(sum, s.convAct));
        }
        y = norm(x, x.pre + "encoder.conv.LayerNorm", y);
        if (!real) std::fill(y.begin(), y.end(), 0.0);
        out.push_back(y);
    }
    return out;
}

}  // namespace reference_deberta
}  // namespace

DebertaReference referenceDeberta(const Checkpoint& c, const DebertaSpec& s, const std::vector<long long>& ids,
                                  const std::vector<long long>& typeIds, const std::vector<int>& attend) {
    using namespace reference_deberta;
    const Ctx x{c, s, s.labels > 0 ? "deberta." : ""};
    DebertaReference ref;
    Rows rel;
    if (s.relative) {
        const Tensor& table = c.get(x.pre + "encoder.rel_embeddings.weight");
        const std::size_t E = table.shape[1];
        for (std::size_t r = 0; r < table.shape[0]; ++r) {
            Vec row(table.values.begin() + r * E, table.values.begin() + (r + 1) * E);
            rel.push_back(s.normRel ? norm(x, x.pre + "encoder.LayerNorm", row) : row);
        }
    }
    const Rows embedded = embed(x, ids, typeIds, attend);
    Rows h = embedded;
    for (int l = 0; l < s.layers; ++l) {
        h = layer(x, l, h, rel, attend, ref);
        if (l == 0 && s.convKernel > 0) h = convolve(x, embedded, h, attend);
    }
    ref.base.hidden = h;
    if (s.labels > 0) {
        Vec pooled = affine(x, "pooler.dense", h[0]);
        for (double& z : pooled) z = s.poolerAct == "tanh" ? std::tanh(z) : activate(z, s.poolerAct);
        ref.base.logits = affine(x, "classifier", pooled);
    }
    return ref;
}

}  // namespace attnscope::testing
