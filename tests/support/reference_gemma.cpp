// The RMSNorm decoder families' forward in double precision, plain loops, written from Hugging
// Face's modeling_gemma.py, modeling_gemma2.py, modeling_gemma3.py, modeling_qwen3.py,
// modeling_olmo2.py, modeling_phi3.py, their configuration defaults and modeling_rope_utils.py.
#include "fixtures_gemma.h"
#include "reference_math.h"

#include <algorithm>
#include <cmath>

namespace attnscope::testing {

namespace {
namespace reference_gemma {  // this file's helpers, apart from the other support files' in a unity build

using Vec = std::vector<double>;
constexpr double kPi = 3.14159265358979323846;

Vec matVec(const Tensor& w, const Vec& x, std::size_t rowStart = 0, std::size_t rows = 0) {
    const std::size_t in = w.shape[1];
    if (rows == 0) rows = w.shape[0];
    Vec y(rows, 0.0);
    for (std::size_t o = 0; o < rows; ++o)
        for (std::size_t i = 0; i < in; ++i) y[o] += w.values[(rowStart + o) * in + i] * x[i];
    return y;
}

Vec linear(const Checkpoint& c, const std::string& name, const Vec& x) {
    Vec y = matVec(c.get(name + ".weight"), x);
    auto b = c.tensors.find(name + ".bias");
    if (b != c.tensors.end())
        for (std::size_t o = 0; o < y.size(); ++o) y[o] += b->second.values[o];
    return y;
}

// x / sqrt(mean(x²) + eps) · w, or · (1 + w) for Gemma's norms; over x[start, start + size).
void rmsNormInPlace(Vec& x, std::size_t start, std::size_t size, const Tensor& w, double eps, bool plusOne) {
    double ms = 0;
    for (std::size_t i = 0; i < size; ++i) ms += x[start + i] * x[start + i];
    ms /= static_cast<double>(size);
    const double inv = 1.0 / std::sqrt(ms + eps);
    for (std::size_t i = 0; i < size; ++i) x[start + i] *= inv * (plusOne ? 1.0 + w.values[i] : w.values[i]);
}

Vec rmsNorm(Vec x, const Tensor& w, double eps, bool plusOne) {
    rmsNormInPlace(x, 0, x.size(), w, eps, plusOne);
    return x;
}

double silu(double x) { return x / (1 + std::exp(-x)); }

// The frequencies theta^(-2i/r) and the cos/sin multiplier of the spec's rope_scaling for a
// sequence of n tokens (modeling_rope_utils.py; Phi-3's original_max_position_embeddings).
struct Rotary {
    Vec inv;
    double attention = 1.0;
};

Rotary rotary(const RmsFamilySpec& s, double theta, const nlohmann::json& scaling, int r, int n) {
    Rotary out;
    auto base = [&](double th) {
        Vec inv(static_cast<std::size_t>(r / 2));
        for (int i = 0; i < r / 2; ++i) inv[i] = 1.0 / std::pow(th, 2.0 * i / r);
        return inv;
    };
    out.inv = base(theta);
    if (!scaling.is_object()) return out;
    const std::string type = scaling.value("rope_type", scaling.value("type", std::string("default")));
    const double factor = scaling.value("factor", 1.0);
    if (type == "linear") {
        for (double& f : out.inv) f /= factor;
    } else if (type == "dynamic") {
        const double seq = std::max<double>(n, s.positions);
        out.inv = base(theta * std::pow(factor * seq / s.positions - (factor - 1), r / (r - 2.0)));
    } else if (type == "yarn") {
        const double original = scaling.value("original_max_position_embeddings", static_cast<double>(s.positions));
        const double fast = scaling.value("beta_fast", 32.0), slow = scaling.value("beta_slow", 1.0);
        out.attention = scaling.contains("attention_factor") ? scaling.at("attention_factor").get<double>()
                                                             : (factor <= 1 ? 1.0 : 0.1 * std::log(factor) + 1.0);
        auto dim = [&](double rot) { return r * std::log(original / (rot * 2 * kPi)) / (2 * std::log(theta)); };
        double low = std::max(std::floor(dim(fast)), 0.0), high = std::min(std::ceil(dim(slow)), r - 1.0);
        if (low == high) high += 0.001;
        for (int i = 0; i < r / 2; ++i) {
            const double ramp = std::min(1.0, std::max(0.0, (i - low) / (high - low)));
            const double extrapolate = 1 - ramp;
            out.inv[i] = out.inv[i] / factor * ramp + out.inv[i] * extrapolate;
        }
    } else if (type == "longrope") {
        const double original = s.originalPositions > 0 ? s.originalPositions : 4096;  // Phi3Config's default
        const double scale = s.positions / original;
        out.attention = scale <= 1 ? 1.0 : std::sqrt(1 + std::log(scale) / std::log(original));
        const auto& factors = n > original ? scaling.at("long_factor") : scaling.at("short_factor");
        for (int i = 0; i < r / 2; ++i) out.inv[i] /= factors.at(i).get<double>();
    } else if (type == "llama3") {
        const double low = scaling.at("low_freq_factor"), high = scaling.at("high_freq_factor");
        const double old = scaling.at("original_max_position_embeddings");
        for (double& f : out.inv) {
            const double wavelength = 2 * kPi / f;
            if (wavelength > old / low) {
                f /= factor;
            } else if (wavelength >= old / high) {
                const double t = (old / wavelength - low) / (high - low);
                f = (1 - t) * f / factor + t * f;
            }
        }
    }
    return out;
}

// Rotate-half on the first r dims of each head: pairs (e, e + r/2).
void rotate(Vec& row, int heads, int d, int r, int position, const Rotary& rot) {
    for (int h = 0; h < heads; ++h)
        for (int e = 0; e < r / 2; ++e) {
            const double a = position * rot.inv[e];
            const double cs = std::cos(a) * rot.attention, sn = std::sin(a) * rot.attention;
            double& x1 = row[h * d + e];
            double& x2 = row[h * d + e + r / 2];
            const double r1 = x1 * cs - x2 * sn, r2 = x2 * cs + x1 * sn;
            x1 = r1;
            x2 = r2;
        }
}

bool layerTypeSliding(const RmsFamilySpec& s, int l) { return s.layerTypes.at(l) == "sliding_attention"; }

// The window of layer l (0 = global), from each configuration's defaults.
int windowOf(const RmsFamilySpec& s, int l) {
    const bool listed = s.layerTypes.is_array();
    bool sliding = false;
    if (s.type == "gemma2") sliding = listed ? layerTypeSliding(s, l) : l % 2 == 0;
    if (s.type == "gemma3_text")
        sliding = listed ? layerTypeSliding(s, l) : (l + 1) % (s.slidingPattern ? s.slidingPattern : 6) != 0;
    if (s.type == "qwen3") sliding = s.useSlidingWindow && (listed ? layerTypeSliding(s, l) : l >= s.maxWindowLayers);
    if (s.type == "phi3") sliding = true;
    return sliding ? s.window : 0;
}

}  // namespace reference_gemma
}  // namespace

Reference referenceRmsFamily(const Checkpoint& c, const RmsFamilySpec& s, const std::vector<long long>& ids,
                             double temperature, const std::vector<std::pair<int, int>>& maskHeads) {
    using namespace reference_gemma;
    const std::string& t = s.type;
    const bool gemma = t == "gemma" || t == "gemma2" || t == "gemma3_text";
    const bool sandwich = t == "gemma2" || t == "gemma3_text";
    const int n = static_cast<int>(ids.size()), E = s.hidden, H = s.heads, G = s.kvHeads, d = rmsHeadDim(s);
    const int I = s.inner, r = static_cast<int>(d * s.partialRotary);
    const std::string pre = s.prefix ? "model." : "";
    const double scale = sandwich ? 1.0 / std::sqrt(s.queryPreAttnScalar) : 1.0 / std::sqrt(static_cast<double>(d));
    const double cap = sandwich ? s.attnSoftcap : 0.0;

    std::vector<Vec> x(n, Vec(E));
    for (int i = 0; i < n; ++i)
        for (int e = 0; e < E; ++e)
            x[i][e] = c.get(pre + "embed_tokens.weight").values[ids[i] * E + e] * (gemma ? std::sqrt(double(E)) : 1.0);
    const Rotary global = rotary(s, s.theta, s.ropeScaling, r, n);
    const Rotary local = rotary(s, s.localTheta, nlohmann::json(), r, n);

    Reference ref;
    for (int l = 0; l < s.layers; ++l) {
        applyActivationHook(ActivationSite::Resid, l, x);
        const std::string p = pre + "layers." + std::to_string(l) + ".";
        auto W = [&](const std::string& name) -> const Tensor& { return c.get(p + name + ".weight"); };
        const int window = windowOf(s, l);
        const Rotary& rot = t == "gemma3_text" && window > 0 ? local : global;
        std::vector<Vec> q(n), k(n), v(n);
        for (int i = 0; i < n; ++i) {
            const Vec h = t == "olmo2" ? x[i] : rmsNorm(x[i], W("input_layernorm"), s.eps, gemma);
            if (t == "phi3") {
                const Tensor& qkv = W("self_attn.qkv_proj");
                q[i] = matVec(qkv, h, 0, H * d);
                k[i] = matVec(qkv, h, H * d, G * d);
                v[i] = matVec(qkv, h, (H + G) * d, G * d);
            } else {
                q[i] = linear(c, p + "self_attn.q_proj", h);
                k[i] = linear(c, p + "self_attn.k_proj", h);
                v[i] = linear(c, p + "self_attn.v_proj", h);
            }
            if (t == "olmo2") {  // over the whole projection, before the heads are split
                q[i] = rmsNorm(q[i], W("self_attn.q_norm"), s.eps, false);
                k[i] = rmsNorm(k[i], W("self_attn.k_norm"), s.eps, false);
            }
            if (t == "gemma3_text" || t == "qwen3") {  // per head, over head_dim
                for (int hh = 0; hh < H; ++hh) rmsNormInPlace(q[i], hh * d, d, W("self_attn.q_norm"), s.eps, gemma);
                for (int g = 0; g < G; ++g) rmsNormInPlace(k[i], g * d, d, W("self_attn.k_norm"), s.eps, gemma);
            }
            rotate(q[i], H, d, r, i, rot);
            rotate(k[i], G, d, r, i, rot);
        }
        std::vector<Vec> context(n, Vec(static_cast<std::size_t>(H) * d, 0.0));
        ref.probs.emplace_back();
        for (int hh = 0; hh < H; ++hh) {
            const int g = hh / (H / G);
            const bool masked = std::find(maskHeads.begin(), maskHeads.end(), std::make_pair(l, hh)) != maskHeads.end();
            Vec flat;
            for (int i = 0; i < n; ++i) {
                Vec logit(n, 0.0);
                double mx = -1e300;
                for (int j = 0; j <= i; ++j) {
                    if (window > 0 && i - j >= window) continue;
                    double dot = 0;
                    for (int e = 0; e < d; ++e) dot += q[i][hh * d + e] * k[j][g * d + e];
                    double a = dot * scale;
                    if (cap > 0) a = cap * std::tanh(a / cap);
                    logit[j] = a / temperature;
                    mx = std::max(mx, logit[j]);
                }
                Vec prob(n, 0.0);
                double sum = 0;
                for (int j = 0; j <= i; ++j)
                    if (!(window > 0 && i - j >= window)) sum += (prob[j] = std::exp(logit[j] - mx));
                for (int j = 0; j < n; ++j) prob[j] /= sum;
                flat.insert(flat.end(), prob.begin(), prob.end());
            }
            applyProbsHook(l, hh, flat);
            for (int i = 0; i < n && !masked; ++i)
                for (int j = 0; j < n; ++j)
                    for (int e = 0; e < d; ++e) context[i][hh * d + e] += flat[i * n + j] * v[j][g * d + e];
            ref.probs.back().push_back(std::move(flat));
        }
        ref.values.push_back(v);  // what the heads read, and the stream entering the block (value sources)
        ref.residuals.push_back(x);
        applyActivationHook(ActivationSite::Context, l, context);
        ref.contexts.push_back(context);
        std::vector<Vec> attn(n), mlp(n);
        for (int i = 0; i < n; ++i) {
            attn[i] = linear(c, p + "self_attn.o_proj", context[i]);
            if (sandwich || t == "olmo2") attn[i] = rmsNorm(attn[i], W("post_attention_layernorm"), s.eps, gemma);
        }
        applyActivationHook(ActivationSite::AttnAdded, l, attn);
        for (int i = 0; i < n; ++i) {
            for (int e = 0; e < E; ++e) x[i][e] += attn[i][e];
            Vec h = x[i];
            if (sandwich)
                h = rmsNorm(x[i], W("pre_feedforward_layernorm"), s.eps, gemma);
            else if (t != "olmo2")
                h = rmsNorm(x[i], W("post_attention_layernorm"), s.eps, gemma);
            Vec gate, up;
            if (t == "phi3") {
                gate = matVec(W("mlp.gate_up_proj"), h, 0, I);
                up = matVec(W("mlp.gate_up_proj"), h, I, I);
            } else {
                gate = linear(c, p + "mlp.gate_proj", h);
                up = linear(c, p + "mlp.up_proj", h);
            }
            for (int e = 0; e < I; ++e)
                gate[e] = (gemma ? activate(gate[e], "gelu_pytorch_tanh") : silu(gate[e])) * up[e];
            mlp[i] = linear(c, p + "mlp.down_proj", gate);
            if (sandwich || t == "olmo2") mlp[i] = rmsNorm(mlp[i], W("post_feedforward_layernorm"), s.eps, gemma);
        }
        applyActivationHook(ActivationSite::MlpAdded, l, mlp);
        for (int i = 0; i < n; ++i)
            for (int e = 0; e < E; ++e) x[i][e] += mlp[i][e];
        ref.mlpOut.push_back(mlp);
    }
    ref.residuals.push_back(x);
    const Vec last = rmsNorm(x[n - 1], c.get(pre + "norm.weight"), s.eps, gemma);
    ref.logits = matVec(c.get(s.tied ? pre + "embed_tokens.weight" : "lm_head.weight"), last);
    if (sandwich && s.finalSoftcap > 0)
        for (double& z : ref.logits) z = s.finalSoftcap * std::tanh(z / s.finalSoftcap);
    return ref;
}

}  // namespace attnscope::testing
