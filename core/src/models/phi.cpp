// Phi (model_type "phi": phi-1, phi-1.5, phi-2): one input_layernorm (LayerNorm with bias) feeds
// attention and the MLP in parallel, x + dense(attn(ln(x))) + fc2(act(fc1(ln(x)))); q/k/v/dense
// with biases; optional per-head q/k LayerNorm (qk_layernorm) before rotary; rotary (rotate-half)
// on the first int(d · partial_rotary_factor) dims, default 0.5; grouped kv heads when
// num_key_value_heads says so; final_layernorm; lm_head with a bias. Weights under "model.".
#include "attnscope/runtime/error.h"
#include "decoder_parts.h"
#include "families.h"
#include "family_common.h"
#include "io/weights.h"
#include "rope.h"
#include "runtime/memory.h"

#include <c10/core/InferenceMode.h>

#include <cmath>

namespace attnscope {

namespace {

struct PhiConfig {
    int vocab = 0, hidden = 0, inner = 0, layers = 0, heads = 0, kvHeads = 0, headDim = 0, positions = 0;
    double eps = 1e-5;
    std::string activation;
    bool qkNorm = false, tied = false;
    RopeSpec rope;
};

PhiConfig parsePhiConfig(const JsonConfig& c) {
    PhiConfig g;
    g.vocab = c.positiveInt("vocab_size");
    g.hidden = c.positiveInt("hidden_size");
    g.inner = c.positiveInt("intermediate_size");
    g.layers = c.positiveInt("num_hidden_layers");
    g.heads = c.positiveInt("num_attention_heads");
    g.kvHeads = c.optionalPositiveInt("num_key_value_heads").value_or(g.heads);
    g.positions = c.positiveInt("max_position_embeddings");
    g.eps = c.positiveNumber("layer_norm_eps", 1e-5);
    g.activation = c.string("hidden_act", "gelu_new");
    requireActivation(c, "hidden_act", g.activation);
    g.qkNorm = c.boolean("qk_layernorm", false);
    g.tied = c.boolean("tie_word_embeddings", false);
    if (g.hidden % g.heads != 0)
        c.fail("hidden_size", "(" + std::to_string(g.hidden) + ") must be divisible by num_attention_heads (" +
                                      std::to_string(g.heads) + ")");
    if (g.heads % g.kvHeads != 0)
        c.fail("num_key_value_heads",
               "(" + std::to_string(g.kvHeads) + ") must divide num_attention_heads (" + std::to_string(g.heads) + ")");
    g.headDim = g.hidden / g.heads;
    g.rope = readRope(c, partialRotaryDims(c, g.headDim, {"partial_rotary_factor"}, 0.5));
    return g;
}

struct PhiLayer {
    Norm ln, qNorm, kNorm;
    Linear q, k, v, dense, fc1, fc2;
};

class PhiModel final : public TextFamilyModel<PhiConfig> {
public:
    PhiModel(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
             const LoadOptions& options)
        : TextFamilyModel(parsePhiConfig(config), folder, device) {
        c10::InferenceMode guard;
        WeightStore w(folder, device);
        stream_ = planWeights(w, options);
        w.setPrefix("model.");
        const std::int64_t E = cfg_.hidden, I = cfg_.inner, H = cfg_.heads, G = cfg_.kvHeads, d = cfg_.headDim;
        const long long total = 2 + cfg_.layers;
        auto step = [&](long long done) { reportProgress(options.progress, done, total); };
        embed_ = w.rows("embed_tokens.weight", {cfg_.vocab, E});
        step(1);
        for (int l = 0; l < cfg_.layers; ++l) {
            const std::string p = "layers." + std::to_string(l) + ".";
            PhiLayer L;
            L.ln = loadNorm(w, p + "input_layernorm", E);
            L.q = w.linear(p + "self_attn.q_proj", H * d, E);
            L.k = w.linear(p + "self_attn.k_proj", G * d, E);
            L.v = w.linear(p + "self_attn.v_proj", G * d, E);
            L.dense = w.linear(p + "self_attn.dense", E, H * d);
            if (cfg_.qkNorm) {
                L.qNorm = loadNorm(w, p + "self_attn.q_layernorm", d);
                L.kNorm = loadNorm(w, p + "self_attn.k_layernorm", d);
            }
            L.fc1 = w.linear(p + "mlp.fc1", I, E);
            L.fc2 = w.linear(p + "mlp.fc2", E, I);
            layers_.push_back(std::move(L));
            step(2 + l);
        }
        finalNorm_ = loadNorm(w, "final_layernorm", E);
        head_.weight = cfg_.tied ? embed_ : w.rows("lm_head.weight", {cfg_.vocab, E});
        head_.bias = w.get("lm_head.bias", {cfg_.vocab});
        step(total);

        info_ = familyInfo("phi", folder, w, device, cfg_.layers, cfg_.heads, cfg_.kvHeads, cfg_.headDim, cfg_.hidden);
        info_.vocabSize = cfg_.vocab;
        info_.maxPositions = cfg_.positions;
        info_.notes = {rotaryNote(cfg_.rope.rotaryDim, cfg_.headDim), "parallel attention and MLP"};
        if (cfg_.qkNorm) info_.notes.push_back("q/k LayerNorm");
        if (cfg_.kvHeads != cfg_.heads) info_.notes.push_back(std::to_string(cfg_.kvHeads) + " kv groups");
    }

protected:
    std::shared_ptr<const Trace> runForward(const std::vector<std::int64_t>& ids,
                                            const RunOptions& options) const override {
        checkIds(ids, cfg_.vocab, cfg_.positions);
        c10::InferenceMode guard;
        const std::int64_t n = static_cast<std::int64_t>(ids.size()), H = cfg_.heads, G = cfg_.kvHeads,
                           d = cfg_.headDim;
        requireForwardMemory({cfg_.layers, H, G, d, cfg_.hidden, cfg_.inner, n, n, computeElementSize(embed_)},
                             device_);
        auto impl = newTrace(ids);
        BlockCapture capture;
        MaskSpec mask;
        mask.causal = true;
        ScoreSpec score;
        score.scale = 1.0 / std::sqrt(static_cast<double>(d));
        const RopeTables rope = ropeTables(cfg_.rope, n, device_);

        at::Tensor x = gatherRows(embed_, ids, device_);
        StreamPass pass(stream_, options.progress);
        for (int l = 0; l < cfg_.layers; ++l) {
            pass.layer(l);
            const PhiLayer& L = layers_[l];
            const at::Tensor h = layerNorm(x, L.ln, cfg_.eps);
            // q/k LayerNorm acts on each head's d values, before the rotation.
            auto heads = [&](const Linear& proj, std::int64_t count, const Norm* norm) {
                at::Tensor t = splitHeads(proj(h), count, d);
                return norm ? layerNorm(t, *norm, cfg_.eps) : t;
            };
            at::Tensor q = applyRope(heads(L.q, H, cfg_.qkNorm ? &L.qNorm : nullptr), rope);
            at::Tensor k = applyRope(heads(L.k, G, cfg_.qkNorm ? &L.kNorm : nullptr), rope);
            at::Tensor v = heads(L.v, G, nullptr);
            at::Tensor attn = L.dense(mergeHeads(attendDot(q, k, v, mask, score, layerRun(options, "self", l))));
            x = x + attn + L.fc2(activate(cfg_.activation, L.fc1(h)));
            capture.layers.push_back(dotCapture(q, k, score, mask));
            reportProgress(options.progress, l + 1, cfg_.layers);
        }
        impl->nextTokenLogits = nextLogitsBiased(layerNorm(x.narrow(0, n - 1, 1), finalNorm_, cfg_.eps), head_);
        impl->infos.push_back(selfBlock(cfg_.layers, cfg_.heads, cfg_.kvHeads, true, impl->displayTokens));
        impl->blocks.push_back(std::move(capture));
        return std::make_shared<const Trace>(std::move(impl));
    }

private:
    at::Tensor embed_;
    Linear head_;
    Norm finalNorm_;
    std::vector<PhiLayer> layers_;
};

}  // namespace

std::shared_ptr<const Model> loadPhi(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
                                     const LoadOptions& options) {
    return std::make_shared<const PhiModel>(folder, config, device, options);
}

}  // namespace attnscope
