#include "reference_builtin.h"

#include "reference_kinds.h"
#include "reference_math.h"

#include "attnscope/io/safetensors.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <stdexcept>

namespace attnscope::testing {

namespace {
namespace reference_builtin {  // this file's helpers, apart from the other support files' in a unity build

using Vec = std::vector<double>;
using Mat = std::vector<Vec>;  // rows

struct Net {
    nlohmann::json config;
    std::map<std::string, std::pair<std::vector<std::int64_t>, Vec>> weights;
    std::string kind;
    int E = 0, H = 0, d = 0, w = 0;
    double eps = 1e-5;

    const Vec& get(const std::string& name) const {
        auto it = weights.find(name);
        if (it == weights.end()) throw std::runtime_error("reference: no weight " + name);
        return it->second.second;
    }
};

Net loadNet(const std::filesystem::path& folder) {
    Net net;
    std::ifstream in(folder / "config.json");
    net.config = nlohmann::json::parse(in);
    net.kind = net.config.at("attention").get<std::string>();
    net.E = net.config.at("d_model").get<int>();
    net.H = net.config.at("n_heads").get<int>();
    net.d = net.E / net.H;
    net.w = net.config.value("additive_width", 0);
    net.eps = net.config.value("layer_norm_epsilon", 1e-5);
    const auto file = SafetensorsFile::open(folder / "model.safetensors");
    for (const auto& t : file->tensors()) {
        if (t.dtype != DType::F32) throw std::runtime_error("reference: F32 weights only");
        Vec values(static_cast<std::size_t>(t.numel()));
        const std::byte* p = file->data(t);
        for (std::size_t i = 0; i < values.size(); ++i) {
            float f;
            std::memcpy(&f, p + 4 * i, 4);
            values[i] = f;
        }
        net.weights[t.name] = {t.shape, values};
    }
    return net;
}

// y = W x + b with W stored [out, in].
Vec linear(const Net& net, const std::string& name, const Vec& x) {
    const auto& shape = net.weights.at(name).first;
    const Vec& W = net.get(name);
    const auto out = static_cast<std::size_t>(shape[0]), inSize = static_cast<std::size_t>(shape[1]);
    Vec y(out, 0.0);
    for (std::size_t o = 0; o < out; ++o)
        for (std::size_t i = 0; i < inSize; ++i) y[o] += W[o * inSize + i] * x[i];
    return y;
}

Vec affine(const Net& net, const std::string& w, const std::string& b, const Vec& x) {
    Vec y = linear(net, w, x);
    const Vec& bias = net.get(b);
    for (std::size_t i = 0; i < y.size(); ++i) y[i] += bias[i];
    return y;
}

Mat layerNorm(const Net& net, const std::string& p, const Mat& x) {
    Mat out;
    const Vec& g = net.get(p + ".weight");
    const Vec& b = net.get(p + ".bias");
    for (const Vec& row : x) out.push_back(layerNormRow(row, g, b, net.eps));
    return out;
}

Mat ffn(const Net& net, const std::string& p, const Mat& x) {
    Mat out;
    for (const Vec& row : x) {
        Vec h = affine(net, p + ".fc1.weight", p + ".fc1.bias", row);
        for (double& v : h) v = geluErf(v);
        out.push_back(affine(net, p + ".fc2.weight", p + ".fc2.bias", h));
    }
    return out;
}

double phi(double x) { return x > 0 ? x + 1 : std::exp(x); }  // elu + 1

struct Call {
    std::string prefix, block;
    int layer = 0;
    bool causal = false;
    bool cross = false;
};

// The module's kind: local and lsh need one sequence, so cross-attention is dot (config.h).
std::string siteKind(const Net& net, bool cross) {
    return cross && (net.kind == "local" || net.kind == "lsh") ? "dot" : net.kind;
}

// One head's logits [n * m] (causal entries -inf), already divided by T.
Vec headLogits(const Net& net, const Call& call, const std::string& kind, const Mat& q, const Mat& k, int h, double T) {
    const int n = static_cast<int>(q.size()), m = static_cast<int>(k.size()), d = net.d;
    const auto& p = call.prefix;
    Vec s(static_cast<std::size_t>(n) * m, 0.0);
    const bool relative = net.config.value("positions", "absolute") == "relative" && !call.cross;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < m; ++j) {
            double score = 0;
            if (kind == "additive") {
                const Vec& aq = net.get(p + ".aq");
                const Vec& ak = net.get(p + ".ak");
                const Vec& av = net.get(p + ".av");
                for (int u = 0; u < net.w; ++u) {
                    double pre = 0;
                    for (int a = 0; a < d; ++a)
                        pre += q[i][h * d + a] * aq[(h * d + a) * net.w + u] +
                               k[j][h * d + a] * ak[(h * d + a) * net.w + u];
                    score += av[h * net.w + u] * std::tanh(pre);
                }
            } else {
                for (int a = 0; a < d; ++a) score += q[i][h * d + a] * k[j][h * d + a];
                score /= std::sqrt(static_cast<double>(d));
                if (relative) {  // Shaw et al.: bias over the clipped distance j - i
                    const int K = net.config.at("relative_clip").get<int>();
                    const int r = std::max(-K, std::min(K, j - (i + m - n)));
                    score += net.get(p + ".rel")[static_cast<std::size_t>(h) * (2 * K + 1) + (r + K)];
                }
            }
            s[static_cast<std::size_t>(i) * m + j] =
                    call.causal && j > i ? -std::numeric_limits<double>::infinity() : score / T;
        }
    return s;
}

Vec headProbs(const Net& net, const Call& call, const Mat& q, const Mat& k, int h, double T) {
    const int n = static_cast<int>(q.size()), m = static_cast<int>(k.size()), d = net.d;
    const std::string kind = siteKind(net, call.cross);
    const KeepMask all(static_cast<std::size_t>(n) * m, 1);
    if (kind == "linear") {
        Vec probs(static_cast<std::size_t>(n) * m, 0.0);
        for (int i = 0; i < n; ++i) {
            double sum = 0;
            for (int j = 0; j < m && (!call.causal || j <= i); ++j) {
                double score = 0;
                for (int a = 0; a < d; ++a) score += phi(q[i][h * d + a]) * phi(k[j][h * d + a]);
                sum += probs[static_cast<std::size_t>(i) * m + j] = score;
            }
            for (int j = 0; j < m; ++j) probs[static_cast<std::size_t>(i) * m + j] /= sum;
        }
        return probs;
    }
    if (kind == "dot" || kind == "additive") return softmaxKeptRef(headLogits(net, call, kind, q, k, h, T), all, n, m);
    if (kind == "hybrid") {  // g_i = σ(q_i·gw_h + gb_h) mixes the additive and dot maps
        const Vec add = softmaxKeptRef(headLogits(net, call, "additive", q, k, h, T), all, n, m);
        Vec probs = softmaxKeptRef(headLogits(net, call, "dot", q, k, h, T), all, n, m);
        const Vec& gw = net.get(call.prefix + ".gw");
        const Vec& gb = net.get(call.prefix + ".gb");
        for (int i = 0; i < n; ++i) {
            double z = gb[h];
            for (int a = 0; a < d; ++a) z += q[i][h * d + a] * gw[h * d + a];
            const double g = 1 / (1 + std::exp(-z));
            for (int j = 0; j < m; ++j) {
                double& pv = probs[static_cast<std::size_t>(i) * m + j];
                pv = g * add[static_cast<std::size_t>(i) * m + j] + (1 - g) * pv;
            }
        }
        return probs;
    }
    const Vec logits = headLogits(net, call, "dot", q, k, h, T);
    KeepMask keep;
    if (kind == "local")
        keep = localKeepRef(n, m, net.config.at("window").get<int>(), net.config.at("two_sided").get<bool>());
    if (kind == "topk") keep = topkKeepRef(logits, all, n, m, net.config.at("keep").get<int>());
    if (kind == "lsh") {
        Vec x(static_cast<std::size_t>(n) * d);
        for (int i = 0; i < n; ++i)
            for (int a = 0; a < d; ++a) x[static_cast<std::size_t>(i) * d + a] = q[i][h * d + a];
        keep = lshKeepRef(x, n, d, net.config.at("buckets").get<int>(), net.config.at("rounds").get<int>(), 0,
                          net.config.at("lsh_seed").get<std::uint64_t>(), call.causal);
    }
    if (keep.empty()) throw std::runtime_error("reference: unknown attention kind " + kind);
    return softmaxKeptRef(logits, keep, n, m);
}

// Attention of xq over xkv; appends one layer's maps to `block`.
Mat attention(const Net& net, const Call& call, const Mat& xq, const Mat& xkv, const BuiltinRefOptions& opt,
              RefBlock& block) {
    const int n = static_cast<int>(xq.size()), m = static_cast<int>(xkv.size()), H = net.H, d = net.d;
    const auto& p = call.prefix;
    Mat q, k, v;
    for (const Vec& x : xq) q.push_back(affine(net, p + ".wq", p + ".bq", x));
    if (siteKind(net, call.cross) == "lsh") {  // shared QK: k = q / |q| per head
        for (const Vec& row : q) {
            Vec kr(row);
            for (int h = 0; h < H; ++h) {
                double norm = 0;
                for (int a = 0; a < d; ++a) norm += row[h * d + a] * row[h * d + a];
                for (int a = 0; a < d; ++a) kr[h * d + a] = row[h * d + a] / std::max(std::sqrt(norm), 1e-6);
            }
            k.push_back(kr);
        }
    } else {
        for (const Vec& x : xkv) k.push_back(affine(net, p + ".wk", p + ".bk", x));
    }
    for (const Vec& x : xkv) v.push_back(affine(net, p + ".wv", p + ".bv", x));
    const auto& tl = opt.temperatureLayers;
    const double T = tl.empty() || std::find(tl.begin(), tl.end(), call.layer) != tl.end() ? opt.temperature : 1.0;
    Mat context(n, Vec(net.E, 0.0));
    std::vector<std::vector<double>> maps;
    const Vec& wo = net.get(p + ".wo");  // nn.Linear [E, H·d]: head h reads columns h·d ..
    std::vector<Mat> f(H, Mat(m, Vec(net.E, 0.0)));
    for (int h = 0; h < H; ++h) {
        const Vec probs = headProbs(net, call, q, k, h, T);
        bool masked = false;
        for (const auto& mh : opt.masked)
            masked |= (mh.block.empty() || mh.block == call.block) && mh.layer == call.layer && mh.head == h;
        if (!masked) {
            for (int i = 0; i < n; ++i)
                for (int j = 0; j < m; ++j)
                    for (int a = 0; a < d; ++a)
                        context[i][h * d + a] += probs[static_cast<std::size_t>(i) * m + j] * v[j][h * d + a];
            for (int j = 0; j < m; ++j)
                for (int e = 0; e < net.E; ++e)
                    for (int a = 0; a < d; ++a)
                        f[h][j][e] += v[j][h * d + a] * wo[static_cast<std::size_t>(e) * H * d + h * d + a];
        }
        maps.push_back(probs);
    }
    block.rows = n;
    block.cols = m;
    block.maps.push_back(maps);
    block.q.push_back(q);
    block.k.push_back(k);
    block.f.push_back(f);
    block.outBias.push_back(net.get(p + ".bo"));
    Mat out;
    for (const Vec& c : context) out.push_back(affine(net, p + ".wo", p + ".bo", c));
    return out;
}

void addInPlace(Mat& x, const Mat& y) {
    for (std::size_t i = 0; i < x.size(); ++i)
        for (std::size_t j = 0; j < x[i].size(); ++j) x[i][j] += y[i][j];
}

Mat embed(const Net& net, const std::string& table, const std::string& positions, const std::vector<long long>& ids,
          bool fromEnd) {
    Mat x;
    const Vec& t = net.get(table);
    const bool relative = net.config.value("positions", "absolute") == "relative";  // no position embeddings
    const Vec none;
    const Vec& pos = relative ? none : net.get(positions);
    const int n = static_cast<int>(ids.size());
    for (int i = 0; i < n; ++i) {
        const int p = fromEnd ? n - 1 - i : i;
        Vec row(net.E);
        for (int a = 0; a < net.E; ++a) row[a] = t[ids[i] * net.E + a] + (relative ? 0.0 : pos[p * net.E + a]);
        x.push_back(row);
    }
    return x;
}

Mat encoder(const Net& net, const std::vector<long long>& ids, const std::string& blockName,
            const BuiltinRefOptions& opt, RefBlock& block) {
    const bool fromEnd = net.config.value("source_positions", "from_start") == "from_end";
    Mat x = embed(net, "src_embed", "src_pos", ids, fromEnd);
    const int layers = net.config.value("encoder_layers", net.config.value("n_layers", 0));
    for (int l = 0; l < layers; ++l) {
        const std::string p = "encoder." + std::to_string(l);
        Mat h = layerNorm(net, p + ".ln1", x);
        block.residual.push_back(x);
        addInPlace(x, attention(net, Call{p + ".attn", blockName, l, false}, h, h, opt, block));
        addInPlace(x, ffn(net, p + ".ffn", layerNorm(net, p + ".ln2", x)));
    }
    return layerNorm(net, "encoder.ln", x);
}

}  // namespace reference_builtin
}  // namespace

RefClassifier referenceClassifier(const std::filesystem::path& folder, const std::vector<long long>& ids,
                                  const BuiltinRefOptions& options) {
    using namespace reference_builtin;
    const Net net = loadNet(folder);
    RefClassifier out;
    const Mat encoded = encoder(net, ids, "self", options, out.self);
    const Vec logits = affine(net, "head.weight", "head.bias", encoded[0]);
    double top = *std::max_element(logits.begin(), logits.end()), sum = 0;
    for (double l : logits) sum += std::exp(l - top);
    for (double l : logits) out.probabilities.push_back(std::exp(l - top) / sum);
    return out;
}

RefSeq2seq referenceSeq2seq(const std::filesystem::path& folder, const std::vector<long long>& source,
                            const std::vector<long long>& decoderInput, const BuiltinRefOptions& options) {
    using namespace reference_builtin;
    const Net net = loadNet(folder);
    RefSeq2seq out;
    const Mat memory = encoder(net, source, "encoder", options, out.encoder);
    Mat x = embed(net, "tgt_embed", "tgt_pos", decoderInput, false);
    const int layers = net.config.at("decoder_layers").get<int>();
    for (int l = 0; l < layers; ++l) {
        const std::string p = "decoder." + std::to_string(l);
        Mat h = layerNorm(net, p + ".ln1", x);
        addInPlace(x, attention(net, Call{p + ".self", "decoder", l, true}, h, h, options, out.decoder));
        h = layerNorm(net, p + ".ln2", x);
        addInPlace(x, attention(net, Call{p + ".cross", "cross", l, false, true}, h, memory, options, out.cross));
        addInPlace(x, ffn(net, p + ".ffn", layerNorm(net, p + ".ln3", x)));
    }
    for (const Vec& row : layerNorm(net, "decoder.ln", x))
        out.logits.push_back(affine(net, "head.weight", "head.bias", row));
    return out;
}

}  // namespace attnscope::testing
