// Independent forwards of the DeiT, DINOv2 and BEiT fixtures (fixtures_vision.h): plain loops in
// double precision written from Hugging Face's modeling_deit.py, modeling_dinov2.py,
// modeling_dinov2_with_registers.py and modeling_beit.py, and torch's bicubic interpolation
// (nothing shared with core).
#include "fixtures_vision.h"
#include "reference_math.h"

#include <algorithm>
#include <cmath>

namespace attnscope::testing {

namespace {
namespace reference_vision {  // this file's helpers, apart from the other support files' in a unity build

using Vec = std::vector<double>;

Vec affine(const Checkpoint& c, const std::string& name, const Vec& x) {
    const Tensor& w = c.get(name + ".weight");
    const auto bias = c.tensors.find(name + ".bias");  // BEiT's key has none
    const std::size_t out = w.shape[0], in = w.shape[1];
    Vec y(out);
    for (std::size_t o = 0; o < out; ++o) {
        double s = bias == c.tensors.end() ? 0.0 : bias->second.values[o];
        for (std::size_t i = 0; i < in; ++i) s += w.values[o * in + i] * x[i];
        y[o] = s;
    }
    return y;
}

// Keys' cubic convolution kernel with parameter a at distance x.
double keys(double x, double a) {
    x = std::fabs(x);
    if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
    if (x < 2) return a * x * x * x - 5 * a * x * x + 8 * a * x - 4 * a;
    return 0;
}

// The weights of output i over inputs 0..in-1 along one axis.
Vec axis(int in, int out, int i, bool antialias) {
    Vec w(in, 0.0);
    const double scale = static_cast<double>(in) / out;
    if (!antialias) {  // upsample_bicubic2d: source (i + ½)·scale − ½, taps −1..2, clamped indices
        const double src = (i + 0.5) * scale - 0.5;
        const double base = std::floor(src);
        for (int k = -1; k <= 2; ++k) {
            const int j = std::clamp(static_cast<int>(base) + k, 0, in - 1);
            w[j] += keys(src - (base + k), -0.75);
        }
        return w;
    }
    // _upsample_bicubic2d_aa: a = −0.5, support 2·max(scale, 1) around (i + ½)·scale, normalised.
    const double stretch = std::max(scale, 1.0), centre = (i + 0.5) * scale, support = 2 * stretch;
    const int lo = std::max(0, static_cast<int>(centre - support + 0.5));
    const int hi = std::min(in, static_cast<int>(centre + support + 0.5));
    double total = 0;
    for (int j = lo; j < hi; ++j) total += (w[j] = keys((j + 0.5 - centre) / stretch, -0.5));
    for (double& v : w) v /= total;
    return w;
}

// Multi-head self-attention over all tokens, with bias[h][i·n + j] added to the scaled logits when
// given; appends the maps to ref, returns the contexts.
std::vector<Vec> selfAttention(const std::vector<Vec>& q, const std::vector<Vec>& k, const std::vector<Vec>& v, int H,
                               int d, Reference& ref, const std::vector<Vec>* bias = nullptr) {
    const int n = static_cast<int>(q.size());
    std::vector<Vec> context(n, Vec(static_cast<std::size_t>(H) * d, 0.0));
    ref.probs.emplace_back();
    for (int h = 0; h < H; ++h) {
        Vec flat;
        for (int i = 0; i < n; ++i) {
            Vec p(n);
            double mx = -1e300, sum = 0;
            for (int j = 0; j < n; ++j) {
                double dot = 0;
                for (int e = 0; e < d; ++e) dot += q[i][h * d + e] * k[j][h * d + e];
                p[j] = dot / std::sqrt(static_cast<double>(d)) + (bias ? (*bias)[h][i * n + j] : 0.0);
                mx = std::max(mx, p[j]);
            }
            for (double& x : p) sum += (x = std::exp(x - mx));
            for (double& x : p) x /= sum;
            flat.insert(flat.end(), p.begin(), p.end());
        }
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j)
                for (int e = 0; e < d; ++e) context[i][h * d + e] += flat[i * n + j] * v[j][h * d + e];
        ref.probs.back().push_back(std::move(flat));
    }
    return context;
}

// BEiT's relative position bias [H][n·n] from its table [(2g-1)² + 3][H] (BeitRelativePositionBias).
std::vector<Vec> beitBias(const Tensor& table, int g, int H) {
    const int n = 1 + g * g, rows = static_cast<int>(table.shape[0]);
    std::vector<Vec> bias(H, Vec(static_cast<std::size_t>(n) * n));
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
            int row = 0;
            if (i == 0 && j == 0) {
                row = rows - 1;  // cls to cls
            } else if (i == 0) {
                row = rows - 3;  // cls to token
            } else if (j == 0) {
                row = rows - 2;  // token to cls
            } else {
                const int dr = (i - 1) / g - (j - 1) / g, dc = (i - 1) % g - (j - 1) % g;
                row = (dr + g - 1) * (2 * g - 1) + (dc + g - 1);
            }
            for (int h = 0; h < H; ++h) bias[h][static_cast<std::size_t>(i) * n + j] = table.values[row * H + h];
        }
    return bias;
}

// BeitForImageClassification at the checkpoint's own image size.
Reference referenceBeit(const Checkpoint& c, const VisionModelSpec& s, const std::vector<double>& pixels) {
    const int E = s.hidden, P = s.patch, g = s.imageSize / P, H = s.heads, d = E / H, S = s.imageSize, n = 1 + g * g;
    const std::string pre = s.prefix ? "beit." : "";
    const double eps = 1e-12;
    const Tensor& conv = c.get(pre + "embeddings.patch_embeddings.projection.weight");
    const Tensor& convB = c.get(pre + "embeddings.patch_embeddings.projection.bias");
    std::vector<Vec> x(n, Vec(E, 0.0));
    for (int e = 0; e < E; ++e) x[0][e] = c.get(pre + "embeddings.cls_token").values[e];
    for (int t = 1; t < n; ++t)
        for (int e = 0; e < E; ++e) {
            const int rr = (t - 1) / g, cc = (t - 1) % g;
            double sum = convB.values[e];
            for (int ch = 0; ch < 3; ++ch)
                for (int py = 0; py < P; ++py)
                    for (int px = 0; px < P; ++px)
                        sum += conv.values[((e * 3 + ch) * P + py) * P + px] *
                               pixels[(static_cast<std::size_t>(ch) * S + rr * P + py) * S + cc * P + px];
            x[t][e] = sum;
        }
    if (s.absolute)
        for (int t = 0; t < n; ++t)
            for (int e = 0; e < E; ++e) x[t][e] += c.get(pre + "embeddings.position_embeddings").values[t * E + e];
    const std::string table = "relative_position_bias.relative_position_bias_table";
    std::vector<Vec> shared;
    if (s.sharedBias) shared = beitBias(c.get(pre + "encoder." + table), g, H);
    auto ln = [&](const Vec& v, const std::string& name) {
        return layerNorm(v, c.get(name + ".weight"), c.get(name + ".bias"), eps);
    };
    Reference ref;
    for (int l = 0; l < s.layers; ++l) {
        const std::string p = pre + "encoder.layer." + std::to_string(l) + ".";
        std::vector<Vec> q(n), k(n), v(n);
        for (int t = 0; t < n; ++t) {
            const Vec h = ln(x[t], p + "layernorm_before");
            q[t] = affine(c, p + "attention.attention.query", h);
            k[t] = affine(c, p + "attention.attention.key", h);
            v[t] = affine(c, p + "attention.attention.value", h);
        }
        std::vector<Vec> bias(H, Vec(static_cast<std::size_t>(n) * n, 0.0));
        if (s.layerBias) bias = beitBias(c.get(p + "attention.attention." + table), g, H);
        for (int h = 0; h < H && s.sharedBias; ++h)
            for (std::size_t i = 0; i < bias[h].size(); ++i) bias[h][i] += shared[h][i];
        ref.values.push_back(v);
        ref.residuals.push_back(x);
        const auto context = selfAttention(q, k, v, H, d, ref, &bias);
        for (int t = 0; t < n; ++t) {
            const Vec o = affine(c, p + "attention.output.dense", context[t]);
            for (int e = 0; e < E; ++e) x[t][e] += s.layerScale ? c.get(p + "lambda_1").values[e] * o[e] : o[e];
            Vec inner = affine(c, p + "intermediate.dense", ln(x[t], p + "layernorm_after"));
            for (double& a : inner) a = geluErf(a);
            const Vec out = affine(c, p + "output.dense", inner);
            for (int e = 0; e < E; ++e) x[t][e] += s.layerScale ? c.get(p + "lambda_2").values[e] * out[e] : out[e];
        }
    }
    if (s.meanPooling) {  // the final LayerNorm is an identity; the pooler normalises the patches' mean
        ref.hidden = x;
        Vec mean(E, 0.0);
        for (int t = 1; t < n; ++t)
            for (int e = 0; e < E; ++e) mean[e] += x[t][e] / (n - 1);
        if (s.labels > 0) ref.logits = affine(c, "classifier", ln(mean, pre + "pooler.layernorm"));
    } else {
        for (const Vec& row : x) ref.hidden.push_back(ln(row, pre + "layernorm"));
        if (s.labels > 0) ref.logits = affine(c, "classifier", ref.hidden[0]);
    }
    return ref;
}

}  // namespace reference_vision
}  // namespace

std::vector<double> referenceBicubic(const std::vector<double>& grid, int g, int E, int rows, int cols,
                                     bool antialias) {
    using namespace reference_vision;
    std::vector<double> out(static_cast<std::size_t>(rows) * cols * E, 0.0);
    for (int r = 0; r < rows; ++r) {
        const Vec wy = axis(g, rows, r, antialias);
        for (int c = 0; c < cols; ++c) {
            const Vec wx = axis(g, cols, c, antialias);
            for (int i = 0; i < g; ++i)
                for (int j = 0; j < g; ++j)
                    for (int e = 0; e < E; ++e)
                        out[(static_cast<std::size_t>(r) * cols + c) * E + e] +=
                                wy[i] * wx[j] * grid[(static_cast<std::size_t>(i) * g + j) * E + e];
        }
    }
    return out;
}

Reference referenceVisionModel(const Checkpoint& c, const VisionModelSpec& s, const std::vector<double>& pixels,
                               int size) {
    using namespace reference_vision;
    if (s.type == "beit") return referenceBeit(c, s, pixels);
    const bool deit = s.type == "deit", withRegisters = s.type == "dinov2_with_registers";
    const int E = s.hidden, P = s.patch, g = s.imageSize / P, r = size / P, H = s.heads, d = E / H;
    const int lead = deit ? 2 : 1, R = withRegisters ? s.registers : 0;
    const std::string pre = s.prefix ? s.type + "." : "";
    const double eps = deit ? 1e-12 : 1e-6;
    const auto& pos = c.get(pre + "embeddings.position_embeddings").values;  // [lead + g², E]
    // Patch positions: the stored g×g grid, interpolated when the input's grid differs.
    std::vector<double> patchPos(pos.begin() + static_cast<std::ptrdiff_t>(lead) * E, pos.end());
    if (r != g) patchPos = referenceBicubic(patchPos, g, E, r, r, withRegisters);
    const Tensor& conv = c.get(pre + "embeddings.patch_embeddings.projection.weight");  // [E, 3, P, P]
    const Tensor& convB = c.get(pre + "embeddings.patch_embeddings.projection.bias");
    std::vector<Vec> x;
    const char* leadNames[2] = {"embeddings.cls_token", "embeddings.distillation_token"};
    for (int t = 0; t < lead; ++t) {
        Vec row(E);
        for (int e = 0; e < E; ++e) row[e] = c.get(pre + leadNames[t]).values[e] + pos[t * E + e];
        x.push_back(row);
    }
    for (int rr = 0; rr < r; ++rr)
        for (int cc = 0; cc < r; ++cc) {
            Vec row(E);
            for (int e = 0; e < E; ++e) {
                double sum = convB.values[e];
                for (int ch = 0; ch < 3; ++ch)
                    for (int py = 0; py < P; ++py)
                        for (int px = 0; px < P; ++px)
                            sum += conv.values[((e * 3 + ch) * P + py) * P + px] *
                                   pixels[(static_cast<std::size_t>(ch) * size + rr * P + py) * size + cc * P + px];
                row[e] = sum + patchPos[(static_cast<std::size_t>(rr) * r + cc) * E + e];
            }
            x.push_back(row);
        }
    for (int k = 0; k < R; ++k) {  // registers after [CLS], after the positions were added
        const auto& reg = c.get(pre + "embeddings.register_tokens").values;
        x.insert(x.begin() + 1 + k, Vec(reg.begin() + k * E, reg.begin() + (k + 1) * E));
    }
    const int n = static_cast<int>(x.size());
    auto ln = [&](const Vec& v, const std::string& name) {
        return layerNorm(v, c.get(name + ".weight"), c.get(name + ".bias"), eps);
    };
    Reference ref;
    for (int l = 0; l < s.layers; ++l) {
        const std::string p = pre + "encoder.layer." + std::to_string(l) + ".";
        std::vector<Vec> q(n), k(n), v(n);
        for (int t = 0; t < n; ++t) {
            const Vec h = ln(x[t], p + (deit ? "layernorm_before" : "norm1"));
            q[t] = affine(c, p + "attention.attention.query", h);
            k[t] = affine(c, p + "attention.attention.key", h);
            v[t] = affine(c, p + "attention.attention.value", h);
        }
        ref.values.push_back(v);
        ref.residuals.push_back(x);
        const auto context = selfAttention(q, k, v, H, d, ref);
        for (int t = 0; t < n; ++t) {
            Vec o = affine(c, p + "attention.output.dense", context[t]);
            for (int e = 0; e < E; ++e) x[t][e] += deit ? o[e] : o[e] * c.get(p + "layer_scale1.lambda1").values[e];
            const Vec h2 = ln(x[t], p + (deit ? "layernorm_after" : "norm2"));
            Vec out;
            if (s.swiglu) {  // Dinov2SwiGLUFFN: weights_in's first half through SiLU times its second half
                const Vec both = affine(c, p + "mlp.weights_in", h2);
                const std::size_t half = both.size() / 2;
                Vec hidden(half);
                for (std::size_t i = 0; i < half; ++i) hidden[i] = both[i] / (1 + std::exp(-both[i])) * both[half + i];
                out = affine(c, p + "mlp.weights_out", hidden);
            } else {
                Vec inner = affine(c, p + (deit ? "intermediate.dense" : "mlp.fc1"), h2);
                for (double& a : inner) a = geluErf(a);
                out = affine(c, p + (deit ? "output.dense" : "mlp.fc2"), inner);
            }
            for (int e = 0; e < E; ++e) x[t][e] += deit ? out[e] : out[e] * c.get(p + "layer_scale2.lambda1").values[e];
        }
    }
    for (const Vec& row : x) ref.hidden.push_back(ln(row, pre + "layernorm"));
    if (s.labels > 0) {
        if (deit && s.teacher) {
            const Vec a = affine(c, "cls_classifier", ref.hidden[0]),
                      b = affine(c, "distillation_classifier", ref.hidden[1]);
            for (std::size_t i = 0; i < a.size(); ++i) ref.logits.push_back((a[i] + b[i]) / 2);
        } else if (deit) {
            ref.logits = affine(c, "classifier", ref.hidden[0]);
        } else {  // [CLS] concatenated with the mean of the patch tokens (after [CLS] and the registers)
            Vec in = ref.hidden[0], mean(E, 0.0);
            for (int t = 1 + R; t < n; ++t)
                for (int e = 0; e < E; ++e) mean[e] += ref.hidden[t][e] / (n - 1 - R);
            in.insert(in.end(), mean.begin(), mean.end());
            ref.logits = affine(c, "classifier", in);
        }
    }
    return ref;
}

}  // namespace attnscope::testing
