#include "rms_decoder.h"

#include "attnscope/runtime/error.h"
#include "family_common.h"
#include "io/json_util.h"
#include "io/weights.h"
#include "runtime/memory.h"

#include <c10/core/InferenceMode.h>

#include <cmath>
#include <cstdio>
#include <optional>

namespace attnscope {

namespace {

struct RmsLayer {
    at::Tensor inNorm, postAttnNorm, preFfNorm, postFfNorm;  // undefined where the layout has none
    at::Tensor qNorm, kNorm;
    Linear q, k, v, qkv, o, gate, up, gateUp, down;
};

// A norm's weight as the forward multiplies it: (1 + w) in float32 for Gemma, float32 for the
// float-product form, else as stored.
at::Tensor normWeight(const DecoderSpec& s, const at::Tensor& w) {
    if (!w.defined()) return w;
    if (s.normPlusOne) return w.to(at::kFloat) + 1.0;
    return s.normInFloat ? w.to(at::kFloat) : w;
}

at::Tensor rmsNorm(const DecoderSpec& s, const at::Tensor& x, const at::Tensor& weight) {
    at::Tensor xf = x.to(at::kFloat);
    xf = xf * at::rsqrt(xf.pow(2).mean(-1, /*keepdim=*/true) + s.eps);
    if (s.normPlusOne || s.normInFloat) return (xf * weight).to(x.scalar_type());
    return weight * xf.to(x.scalar_type());
}

class DecoderModel final : public TextFamilyModel<DecoderSpec> {
public:
    DecoderModel(const std::filesystem::path& folder, DecoderSpec spec, c10::Device device, const LoadOptions& options)
        : TextFamilyModel(std::move(spec), folder, device) {
        c10::InferenceMode guard;
        WeightStore w(folder, device);
        stream_ = planWeights(w, options);
        w.setPrefix("model.");
        const DecoderSpec& s = cfg_;
        const std::int64_t E = s.hidden, I = s.inner, H = s.heads, G = s.kvHeads, d = s.headDim;
        const long long total = 2 + s.layers;
        auto step = [&](long long done) { reportProgress(options.progress, done, total); };
        auto norm = [&](const std::string& name, std::int64_t size) {
            return normWeight(s, w.get(name + ".weight", {size}));
        };
        const bool b = s.attentionBias;
        embed_ = w.rows("embed_tokens.weight", {s.vocab, E});
        step(1);
        for (int l = 0; l < s.layers; ++l) {
            const std::string p = "layers." + std::to_string(l) + ".";
            RmsLayer L;
            if (s.blocks != DecoderSpec::Blocks::PostNorm) L.inNorm = norm(p + "input_layernorm", E);
            L.postAttnNorm = norm(p + "post_attention_layernorm", E);
            if (s.blocks == DecoderSpec::Blocks::Sandwich) L.preFfNorm = norm(p + "pre_feedforward_layernorm", E);
            if (s.blocks != DecoderSpec::Blocks::PreNorm) L.postFfNorm = norm(p + "post_feedforward_layernorm", E);
            if (s.qkNorm == DecoderSpec::QkNorm::PerHead) {
                L.qNorm = norm(p + "self_attn.q_norm", d);
                L.kNorm = norm(p + "self_attn.k_norm", d);
            } else if (s.qkNorm == DecoderSpec::QkNorm::Flat) {
                L.qNorm = norm(p + "self_attn.q_norm", H * d);
                L.kNorm = norm(p + "self_attn.k_norm", G * d);
            }
            if (s.fusedQkv) {
                L.qkv = w.linear(p + "self_attn.qkv_proj", (H + 2 * G) * d, E, b);
            } else {
                L.q = w.linear(p + "self_attn.q_proj", H * d, E, b);
                L.k = w.linear(p + "self_attn.k_proj", G * d, E, b);
                L.v = w.linear(p + "self_attn.v_proj", G * d, E, b);
            }
            L.o = w.linear(p + "self_attn.o_proj", E, H * d, b);
            if (s.fusedGateUp) {
                L.gateUp = w.linear(p + "mlp.gate_up_proj", 2 * I, E, false);
            } else {
                L.gate = w.linear(p + "mlp.gate_proj", I, E, false);
                L.up = w.linear(p + "mlp.up_proj", I, E, false);
            }
            L.down = w.linear(p + "mlp.down_proj", E, I, false);
            layers_.push_back(std::move(L));
            step(2 + l);
        }
        norm_ = norm("norm", E);
        head_ = s.tied ? embed_ : w.rows("lm_head.weight", {s.vocab, E});
        step(total);

        info_ = familyInfo(s.family, folder, w, device, s.layers, s.heads, s.kvHeads, s.headDim, s.hidden);
        info_.vocabSize = s.vocab;
        info_.maxPositions = s.positions;
        info_.notes = s.notes;
    }

protected:
    std::shared_ptr<const Trace> runForward(const std::vector<std::int64_t>& ids,
                                            const RunOptions& options) const override {
        const DecoderSpec& s = cfg_;
        checkIds(ids, s.vocab, s.positions);
        c10::InferenceMode guard;
        const std::int64_t n = static_cast<std::int64_t>(ids.size()), H = s.heads, G = s.kvHeads, d = s.headDim;
        requireForwardMemory({s.layers, H, G, d, s.hidden, s.inner, n, n, computeElementSize(embed_)}, device_);
        auto impl = newTrace(ids);
        BlockCapture capture;

        at::Tensor x = gatherRows(embed_, ids, device_);
        // Gemma's normalizer is a tensor in the compute dtype, so BF16 models multiply by the
        // rounded sqrt(hidden) (Hugging Face's GemmaModel).
        if (s.embedScale) x = x * at::scalar_tensor(std::sqrt(static_cast<double>(s.hidden)), x.options());
        std::vector<RopeTables> tables;
        for (const RopeSpec& r : s.ropes) tables.push_back(ropeTables(r, n, device_));

        StreamPass pass(stream_, options.progress);
        for (int l = 0; l < s.layers; ++l) {
            pass.layer(l);
            const RmsLayer& L = layers_[l];
            const bool post = s.blocks == DecoderSpec::Blocks::PostNorm;
            at::Tensor h = post ? x : rmsNorm(s, x, L.inNorm);
            at::Tensor q, k, v;
            if (s.fusedQkv) {  // [q (H·d) | k (Hkv·d) | v (Hkv·d)]
                at::Tensor qkv = L.qkv(h);
                q = qkv.narrow(1, 0, H * d);
                k = qkv.narrow(1, H * d, G * d);
                v = qkv.narrow(1, (H + G) * d, G * d);
            } else {
                q = L.q(h);
                k = L.k(h);
                v = L.v(h);
            }
            if (s.qkNorm == DecoderSpec::QkNorm::Flat) {
                q = rmsNorm(s, q, L.qNorm);
                k = rmsNorm(s, k, L.kNorm);
            }
            q = splitHeads(q, H, d);
            k = splitHeads(k, G, d);
            v = splitHeads(v, G, d);
            if (s.qkNorm == DecoderSpec::QkNorm::PerHead) {
                q = rmsNorm(s, q, L.qNorm);
                k = rmsNorm(s, k, L.kNorm);
            }
            const RopeTables& rope = tables[static_cast<std::size_t>(s.ropeOf[l])];
            q = applyRope(q, rope);
            k = applyRope(k, rope);
            MaskSpec mask;
            mask.causal = true;
            mask.window = s.windows[l];
            at::Tensor a = L.o(mergeHeads(attendDot(q, k, v, mask, s.score, layerRun(options, "self", l))));
            if (s.blocks != DecoderSpec::Blocks::PreNorm) a = rmsNorm(s, a, L.postAttnNorm);
            x = x + a;
            if (s.blocks == DecoderSpec::Blocks::PreNorm)
                h = rmsNorm(s, x, L.postAttnNorm);
            else if (s.blocks == DecoderSpec::Blocks::Sandwich)
                h = rmsNorm(s, x, L.preFfNorm);
            else
                h = x;
            at::Tensor gate, up;
            if (s.fusedGateUp) {
                at::Tensor both = L.gateUp(h);
                gate = both.narrow(1, 0, s.inner);
                up = both.narrow(1, s.inner, s.inner);
            } else {
                gate = L.gate(h);
                up = L.up(h);
            }
            const bool silu = s.activation == "silu" || s.activation == "swish";
            at::Tensor m = L.down((silu ? at::silu(gate) : activate(s.activation, gate)) * up);
            if (s.blocks != DecoderSpec::Blocks::PreNorm) m = rmsNorm(s, m, L.postFfNorm);
            x = x + m;
            capture.layers.push_back(dotCapture(q, k, s.score, mask));
            reportProgress(options.progress, l + 1, s.layers);
        }
        std::vector<float> logits = nextLogits(rmsNorm(s, x.narrow(0, n - 1, 1), norm_), head_);
        if (s.finalSoftcap > 0)
            for (float& v : logits) v = static_cast<float>(s.finalSoftcap * std::tanh(v / s.finalSoftcap));
        impl->nextTokenLogits = std::move(logits);
        BlockInfo block = selfBlock(s.layers, s.heads, s.kvHeads, true, impl->displayTokens);
        for (std::int64_t wnd : s.windows)
            if (wnd > 0) block.layerWindows = s.windows;
        impl->infos.push_back(std::move(block));
        impl->blocks.push_back(std::move(capture));
        return std::make_shared<const Trace>(std::move(impl));
    }

private:
    at::Tensor embed_, norm_, head_;
    std::vector<RmsLayer> layers_;
};

}  // namespace

std::shared_ptr<const Model> loadDecoder(const std::filesystem::path& folder, DecoderSpec spec, c10::Device device,
                                         const LoadOptions& options) {
    return std::make_shared<const DecoderModel>(folder, std::move(spec), device, options);
}

void readHeads(const JsonConfig& c, DecoderSpec& s, int defaultHeadDim, int defaultKvHeads) {
    s.heads = c.positiveInt("num_attention_heads");
    s.kvHeads = c.optionalPositiveInt("num_key_value_heads").value_or(defaultKvHeads > 0 ? defaultKvHeads : s.heads);
    if (s.heads % s.kvHeads != 0)
        c.fail("num_key_value_heads",
               "(" + std::to_string(s.kvHeads) + ") must divide num_attention_heads (" + std::to_string(s.heads) + ")");
    if (c.has("head_dim")) {
        s.headDim = c.positiveInt("head_dim");
    } else if (defaultHeadDim > 0) {
        s.headDim = defaultHeadDim;
    } else {
        if (s.hidden % s.heads != 0)
            c.fail("hidden_size", "(" + std::to_string(s.hidden) + ") must be divisible by num_attention_heads (" +
                                          std::to_string(s.heads) + ") when head_dim is not given");
        s.headDim = s.hidden / s.heads;
    }
}

std::int64_t optionalWindow(const JsonConfig& c, const std::string& key, std::int64_t fallback) {
    if (!c.json().contains(key)) return fallback;
    return c.has(key) ? c.positiveInt(key) : 0;
}

double softcapOf(const JsonConfig& c, const std::string& key, double fallback) {
    if (!c.json().contains(key)) return fallback;
    return c.has(key) ? c.positiveNumber(key) : 0.0;
}

std::optional<std::vector<bool>> readLayerTypes(const JsonConfig& c, int layers) {
    if (!c.has("layer_types")) return std::nullopt;
    const auto& list = c.json().at("layer_types");
    if (!list.is_array()) c.fail("layer_types", "must be a list, found " + list.dump());
    if (list.size() != static_cast<std::size_t>(layers))
        c.fail("layer_types", "has " + std::to_string(list.size()) + " entries for " + std::to_string(layers) +
                                      " layers (num_hidden_layers)");
    std::vector<bool> sliding;
    for (std::size_t i = 0; i < list.size(); ++i) {
        const auto& e = list[i];
        if (e == "sliding_attention")
            sliding.push_back(true);
        else if (e == "full_attention")
            sliding.push_back(false);
        else
            c.fail("layer_types",
                   "entry " + std::to_string(i) + " is " + e.dump() + " (known: full_attention, sliding_attention)");
    }
    return sliding;
}

void requireWindowFits(const JsonConfig& c, const std::string& key, std::int64_t window, int positions) {
    if (window > positions)
        c.fail(key, "(" + std::to_string(window) + ") is larger than max_position_embeddings (" +
                            std::to_string(positions) + ")");
}

std::string formatNumber(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", value);
    return text;
}

void readSizes(const JsonConfig& c, DecoderSpec& s, double eps) {
    s.family = c.string("model_type");
    s.vocab = c.positiveInt("vocab_size");
    s.hidden = c.positiveInt("hidden_size");
    s.inner = c.positiveInt("intermediate_size");
    s.layers = c.positiveInt("num_hidden_layers");
    s.eps = c.positiveNumber("rms_norm_eps", eps);
}

void addCommonNotes(DecoderSpec& s) {
    std::int64_t window = 0;
    std::string layers;
    int listed = 0, count = 0;
    bool uniform = true;
    for (int l = 0; l < static_cast<int>(s.windows.size()); ++l) {
        if (s.windows[l] <= 0) continue;
        if (window && s.windows[l] != window) uniform = false;
        window = s.windows[l];
        ++count;
        if (listed < 4)
            layers += (listed++ ? ", " : "") + std::to_string(l);
        else if (listed++ == 4)
            layers += ", …";
    }
    if (count == static_cast<int>(s.windows.size()) && count > 0 && uniform)
        s.notes.insert(s.notes.begin(), "sliding window " + std::to_string(window) + " on every layer");
    else if (count > 0)
        s.notes.insert(s.notes.begin(), "sliding window " + std::to_string(window) + " on layers " + layers);
    if (s.kvHeads != s.heads) s.notes.push_back(std::to_string(s.kvHeads) + " kv groups");
    for (const RopeSpec& r : s.ropes)
        if (r.type != "default") {
            s.notes.push_back("rope scaling " + r.type);
            break;
        }
    if (!s.ropes.empty() && s.ropes[0].rotaryDim != s.headDim)
        s.notes.push_back("rotary on " + std::to_string(100 * s.ropes[0].rotaryDim / s.headDim) + "% of dims");
}

}  // namespace attnscope
