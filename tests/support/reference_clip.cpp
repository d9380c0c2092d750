// Independent forwards of the CLIP and SigLIP fixtures (fixtures_clip.h): plain loops in double
// precision written from Hugging Face's modeling_clip.py and modeling_siglip.py (nothing shared
// with core), and the patch contributions term by term from their definition in
// attention/image_text.h.
#include "fixtures_clip.h"
#include "reference_math.h"

#include <algorithm>
#include <cmath>

namespace attnscope::testing {

namespace {
namespace reference_clip {  // this file's helpers, apart from the other support files' in a unity build

using Vec = std::vector<double>;

Vec affine(const Checkpoint& c, const std::string& name, const Vec& x) {
    const Tensor& w = c.get(name + ".weight");
    const auto bias = c.tensors.find(name + ".bias");
    const std::size_t out = w.shape[0], in = w.shape[1];
    Vec y(out);
    for (std::size_t o = 0; o < out; ++o) {
        double s = bias == c.tensors.end() ? 0.0 : bias->second.values[o];
        for (std::size_t i = 0; i < in; ++i) s += w.values[o * in + i] * x[i];
        y[o] = s;
    }
    return y;
}

Vec norm(const Checkpoint& c, const std::string& name, const Vec& x, double eps) {
    return layerNorm(x, c.get(name + ".weight"), c.get(name + ".bias"), eps);
}

double act(double x, const std::string& name) {
    if (name == "quick_gelu") return x / (1 + std::exp(-1.702 * x));
    return activate(x, name);
}

double dot(const Vec& a, const Vec& b) {
    double s = 0;
    for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
    return s;
}

struct Tower {
    std::string prefix;  // "vision_model." / "text_model."
    int layers = 0, heads = 0;
    double eps = 1e-5;
    std::string act;
    bool causal = false;
};

// Multi-head attention of queries q over keys k, values v (rows [H·d]); probs[h][i·m + j].
std::vector<Vec> attend(const std::vector<Vec>& q, const std::vector<Vec>& k, const std::vector<Vec>& v, int H,
                        bool causal, std::vector<Vec>& probs) {
    const std::size_t n = q.size(), m = k.size(), d = q[0].size() / H;
    std::vector<Vec> context(n, Vec(q[0].size(), 0.0));
    probs.assign(H, Vec(n * m, 0.0));
    for (int h = 0; h < H; ++h)
        for (std::size_t i = 0; i < n; ++i) {
            Vec logits(m, -1e300);
            for (std::size_t j = 0; j < m; ++j) {
                if (causal && j > i) continue;
                double s = 0;
                for (std::size_t e = 0; e < d; ++e) s += q[i][h * d + e] * k[j][h * d + e];
                logits[j] = s / std::sqrt(static_cast<double>(d));
            }
            const double mx = *std::max_element(logits.begin(), logits.end());
            double sum = 0;
            for (std::size_t j = 0; j < m; ++j) sum += logits[j] = logits[j] <= -1e299 ? 0 : std::exp(logits[j] - mx);
            for (std::size_t j = 0; j < m; ++j) {
                const double p = logits[j] / sum;
                probs[h][i * m + j] = p;
                for (std::size_t e = 0; e < d; ++e) context[i][h * d + e] += p * v[j][h * d + e];
            }
        }
    return context;
}

// CLIPEncoder / SiglipEncoder: pre-LN layers. The last layer's input goes to lastInput.
std::vector<Vec> encode(const Checkpoint& c, const Tower& t, std::vector<Vec> x, std::vector<std::vector<Vec>>& probs,
                        std::vector<Vec>* lastInput) {
    for (int l = 0; l < t.layers; ++l) {
        const std::string p = t.prefix + "encoder.layers." + std::to_string(l) + ".";
        if (lastInput && l + 1 == t.layers) *lastInput = x;
        std::vector<Vec> q, k, v;
        for (const Vec& row : x) {
            const Vec h = norm(c, p + "layer_norm1", row, t.eps);
            q.push_back(affine(c, p + "self_attn.q_proj", h));
            k.push_back(affine(c, p + "self_attn.k_proj", h));
            v.push_back(affine(c, p + "self_attn.v_proj", h));
        }
        probs.emplace_back();
        const std::vector<Vec> context = attend(q, k, v, t.heads, t.causal, probs.back());
        for (std::size_t i = 0; i < x.size(); ++i) {
            const Vec o = affine(c, p + "self_attn.out_proj", context[i]);
            for (std::size_t e = 0; e < o.size(); ++e) x[i][e] += o[e];
            Vec a = affine(c, p + "mlp.fc1", norm(c, p + "layer_norm2", x[i], t.eps));
            for (double& z : a) z = act(z, t.act);
            const Vec m = affine(c, p + "mlp.fc2", a);
            for (std::size_t e = 0; e < m.size(); ++e) x[i][e] += m[e];
        }
    }
    return x;
}

// The patches' embeddings: a strided convolution, row by row, with the bias when there is one.
std::vector<Vec> patchEmbeddings(const Checkpoint& c, const ClipSpec& s, const Vec& pixels) {
    const Tensor& w = c.get("vision_model.embeddings.patch_embedding.weight");
    const auto bias = c.tensors.find("vision_model.embeddings.patch_embedding.bias");
    const int E = s.visionHidden, p = s.patch, g = s.imageSize / p, S = s.imageSize;
    std::vector<Vec> out;
    for (int r = 0; r < g; ++r)
        for (int col = 0; col < g; ++col) {
            Vec e(E, 0.0);
            for (int o = 0; o < E; ++o) {
                double sum = bias == c.tensors.end() ? 0.0 : bias->second.values[o];
                for (int ch = 0; ch < 3; ++ch)
                    for (int y = 0; y < p; ++y)
                        for (int x = 0; x < p; ++x)
                            sum += w.values[((o * 3 + ch) * p + y) * p + x] *
                                   pixels[(ch * S + r * p + y) * S + col * p + x];
                e[o] = sum;
            }
            out.push_back(e);
        }
    return out;
}

Vec row(const Tensor& t, std::size_t i) {
    const std::size_t w = t.shape.back();
    return Vec(t.values.begin() + i * w, t.values.begin() + (i + 1) * w);
}

// Rows [from, from + out) of a stacked projection (nn.MultiheadAttention's in_proj) applied to x.
Vec stackedAffine(const Checkpoint& c, const std::string& name, std::size_t from, std::size_t out, const Vec& x) {
    const Tensor& w = c.get(name + "_weight");
    const Tensor& b = c.get(name + "_bias");
    const std::size_t in = w.shape[1];
    Vec y(out);
    for (std::size_t o = 0; o < out; ++o) {
        double s = b.values[from + o];
        for (std::size_t i = 0; i < in; ++i) s += w.values[(from + o) * in + i] * x[i];
        y[o] = s;
    }
    return y;
}

// SiglipModel: the vision tower without [CLS] or pre-norm, post_layernorm, the MAP head; the text
// tower without a mask, pooled at the last token through `head`; logit = exp(scale)·cos + bias.
ImageTextReference referenceSiglip(const Checkpoint& c, const ClipSpec& s, const std::vector<double>& pixels,
                                   const std::vector<long long>& ids) {
    ImageTextReference ref;
    const int E = s.visionHidden, H = s.visionHeads, d = E / H;
    const double eps = 1e-6;
    const Tower vision{"vision_model.", s.visionLayers, H, eps, s.visionAct, false};
    const Tower text{"text_model.", s.textLayers, s.textHeads, eps, s.textAct, false};
    std::vector<Vec> x = patchEmbeddings(c, s, pixels);
    const Tensor& positions = c.get("vision_model.embeddings.position_embedding.weight");
    for (std::size_t i = 0; i < x.size(); ++i) {
        const Vec pos = row(positions, i);
        for (int e = 0; e < E; ++e) x[i][e] += pos[e];
    }
    std::vector<Vec> hidden = encode(c, vision, x, ref.vision, nullptr);
    for (Vec& h : hidden) h = norm(c, "vision_model.post_layernorm", h, eps);
    // The MAP head: the probe's query over the patches' keys and values.
    const std::string head = "vision_model.head.";
    const Vec probe = row(c.get(head + "probe"), 0);
    const std::vector<Vec> q{stackedAffine(c, head + "attention.in_proj", 0, E, probe)};
    std::vector<Vec> k, v;
    for (const Vec& h : hidden) {
        k.push_back(stackedAffine(c, head + "attention.in_proj", E, E, h));
        v.push_back(stackedAffine(c, head + "attention.in_proj", 2 * E, E, h));
    }
    std::vector<Vec> probs;
    const std::vector<Vec> context = attend(q, k, v, H, false, probs);
    ref.probe = probs;
    const Vec a = affine(c, head + "attention.out_proj", context[0]);
    Vec inner = affine(c, head + "mlp.fc1", norm(c, head + "layernorm", a, eps));
    for (double& z : inner) z = act(z, s.visionAct);
    const Vec branch = affine(c, head + "mlp.fc2", inner);
    ref.image = a;
    for (int e = 0; e < E; ++e) ref.image[e] += branch[e];
    // Text.
    const Tensor& tokens = c.get("text_model.embeddings.token_embedding.weight");
    const Tensor& textPositions = c.get("text_model.embeddings.position_embedding.weight");
    std::vector<Vec> y;
    for (std::size_t i = 0; i < ids.size(); ++i) {
        Vec e = row(tokens, static_cast<std::size_t>(ids[i]));
        const Vec pos = row(textPositions, i);
        for (std::size_t j = 0; j < e.size(); ++j) e[j] += pos[j];
        y.push_back(e);
    }
    const std::vector<Vec> words = encode(c, text, y, ref.text, nullptr);
    ref.words = affine(c, "text_model.head", norm(c, "text_model.final_layer_norm", words.back(), eps));
    const double nu = std::sqrt(dot(ref.image, ref.image)), nt = std::sqrt(dot(ref.words, ref.words));
    ref.cosine = dot(ref.image, ref.words) / (nu * nt);
    const double scale = std::exp(s.logitScale);
    ref.logit = scale * ref.cosine + s.logitBias;
    // Contributions: α_hj · v_j^h W_O^h · t̂ · s / ‖u‖.
    const Tensor& wo = c.get(head + "attention.out_proj.weight");
    ref.contributions.assign(H, Vec());
    for (std::size_t j = 0; j < hidden.size(); ++j)
        for (int h = 0; h < H; ++h) {
            double total = 0;
            for (int e = 0; e < E; ++e) {
                double piece = 0;
                for (int m = 0; m < d; ++m) piece += wo.values[e * E + h * d + m] * v[j][h * d + m];
                total += probs[h][j] * piece * ref.words[e] / nt;
            }
            ref.contributions[h].push_back(total * scale / nu);
        }
    return ref;
}

}  // namespace reference_clip
}  // namespace

ImageTextReference referenceClip(const Checkpoint& c, const ClipSpec& s, const std::vector<double>& pixels,
                                 const std::vector<long long>& ids) {
    using namespace reference_clip;
    if (s.type == "siglip") return referenceSiglip(c, s, pixels, ids);
    ImageTextReference ref;
    const int E = s.visionHidden, H = s.visionHeads, d = E / H;
    const Tower vision{"vision_model.", s.visionLayers, H, 1e-5, s.visionAct, false};
    const Tower text{"text_model.", s.textLayers, s.textHeads, 1e-5, s.textAct, true};
    // Vision: [CLS] and the patches with their positions, pre_layrnorm, the layers.
    std::vector<Vec> x{row(c.get("vision_model.embeddings.class_embedding"), 0)};
    for (const Vec& e : patchEmbeddings(c, s, pixels)) x.push_back(e);
    const Tensor& positions = c.get("vision_model.embeddings.position_embedding.weight");
    for (std::size_t i = 0; i < x.size(); ++i) {
        const Vec pos = row(positions, i);
        for (int e = 0; e < E; ++e) x[i][e] += pos[e];
        x[i] = norm(c, "vision_model.pre_layrnorm", x[i], vision.eps);
    }
    std::vector<Vec> lastInput;
    const std::vector<Vec> states = encode(c, vision, x, ref.vision, &lastInput);
    const Vec cls = states[0];
    ref.image = affine(c, "visual_projection", norm(c, "vision_model.post_layernorm", cls, vision.eps));
    // Text: tokens and positions, causal layers, final_layer_norm, the end token's row.
    const Tensor& tokens = c.get("text_model.embeddings.token_embedding.weight");
    const Tensor& textPositions = c.get("text_model.embeddings.position_embedding.weight");
    std::vector<Vec> y;
    for (std::size_t i = 0; i < ids.size(); ++i) {
        Vec e = row(tokens, static_cast<std::size_t>(ids[i]));
        const Vec pos = row(textPositions, i);
        for (std::size_t k = 0; k < e.size(); ++k) e[k] += pos[k];
        y.push_back(e);
    }
    const std::vector<Vec> words = encode(c, text, y, ref.text, nullptr);
    std::size_t end = 0;
    if (s.eos == 2) {
        end = static_cast<std::size_t>(std::max_element(ids.begin(), ids.end()) - ids.begin());
    } else {
        const auto at = std::find(ids.begin(), ids.end(), s.eos);
        end = at == ids.end() ? 0 : static_cast<std::size_t>(at - ids.begin());
    }
    ref.words = affine(c, "text_projection", norm(c, "text_model.final_layer_norm", words[end], text.eps));
    const double nu = std::sqrt(dot(ref.image, ref.image)), nt = std::sqrt(dot(ref.words, ref.words));
    ref.cosine = dot(ref.image, ref.words) / (nu * nt);
    const double scale = std::exp(s.logitScale);
    ref.logit = scale * ref.cosine;

    // Contributions: head h, patch j: α_{h,cls,j} · v_j^h W_O^h, through post_layernorm's centring
    // and weight over the actual σ, the projection, · t̂ · s / ‖u‖.
    const std::string last = "vision_model.encoder.layers." + std::to_string(s.visionLayers - 1) + ".";
    double mean = 0, var = 0;
    for (double v : cls) mean += v / E;
    for (double v : cls) var += (v - mean) * (v - mean) / E;
    const double sigma = std::sqrt(var + vision.eps);
    const Tensor& wo = c.get(last + "self_attn.out_proj.weight");
    const Tensor& gamma = c.get("vision_model.post_layernorm.weight");
    const Tensor& P = c.get("visual_projection.weight");
    ref.contributions.assign(H, Vec());
    for (std::size_t j = 1; j < lastInput.size(); ++j) {
        const Vec v = affine(c, last + "self_attn.v_proj", norm(c, last + "layer_norm1", lastInput[j], vision.eps));
        for (int h = 0; h < H; ++h) {
            const double alpha = ref.vision.back()[h][j];  // row 0 ([CLS]), column j
            Vec piece(E, 0.0);
            for (int e = 0; e < E; ++e)
                for (int k = 0; k < d; ++k) piece[e] += alpha * wo.values[e * E + h * d + k] * v[h * d + k];
            double pm = 0;
            for (double z : piece) pm += z / E;
            double total = 0;
            for (int q = 0; q < s.projection; ++q) {
                double projected = 0;
                for (int e = 0; e < E; ++e)
                    projected += P.values[q * E + e] * gamma.values[e] * (piece[e] - pm) / sigma;
                total += projected * ref.words[q] / nt;
            }
            ref.contributions[h].push_back(total * scale / nu);
        }
    }
    return ref;
}

}  // namespace attnscope::testing
