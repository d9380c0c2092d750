// Llama family (model_type "llama", "mistral", "qwen2", and configs that follow them such as
// SmolLM and TinyLlama): pre-norm decoder with RMSNorm, SwiGLU MLP, rotary positions (rope.h),
// grouped-query attention, optional q/k/v(/o) biases, tied or untied lm_head, Mistral's sliding
// window. Weights are nn.Linear [out, in] under "model.".
#include "attnscope/runtime/error.h"
#include "families.h"
#include "family_common.h"
#include "runtime/memory.h"
#include "rope.h"
#include "io/weights.h"

#include <c10/core/InferenceMode.h>

#include <cmath>

namespace attnscope {

namespace {

struct LlamaConfig {
    std::string type;
    int vocab = 0, hidden = 0, inner = 0, layers = 0, heads = 0, kvHeads = 0, headDim = 0, positions = 0;
    double eps = 1e-6;
    bool tied = false;
    bool qkvBias = false, oBias = false, mlpBias = false;
    std::int64_t window = 0;
    RopeSpec rope;
};

LlamaConfig parseLlamaConfig(const JsonConfig& c) {
    LlamaConfig g;
    g.type = c.string("model_type");
    g.vocab = c.positiveInt("vocab_size");
    g.hidden = c.positiveInt("hidden_size");
    g.inner = c.positiveInt("intermediate_size");
    g.layers = c.positiveInt("num_hidden_layers");
    g.heads = c.positiveInt("num_attention_heads");
    g.kvHeads = c.optionalPositiveInt("num_key_value_heads").value_or(g.heads);
    g.positions = c.positiveInt("max_position_embeddings");
    g.eps = c.positiveNumber("rms_norm_eps", 1e-6);
    g.tied = c.boolean("tie_word_embeddings", false);
    if (g.heads % g.kvHeads != 0)
        c.fail("num_key_value_heads",
               "(" + std::to_string(g.kvHeads) + ") must divide num_attention_heads (" + std::to_string(g.heads) + ")");
    if (c.has("head_dim")) {
        g.headDim = c.positiveInt("head_dim");
    } else {
        if (g.hidden % g.heads != 0)
            c.fail("hidden_size", "(" + std::to_string(g.hidden) + ") must be divisible by num_attention_heads (" +
                                          std::to_string(g.heads) + ") when head_dim is not given");
        g.headDim = g.hidden / g.heads;
    }
    const std::string act = c.string("hidden_act", "silu");
    if (act != "silu" && act != "swish") c.fail("hidden_act", "'" + act + "' is not supported (silu)");
    g.qkvBias = g.type == "qwen2" || c.boolean("attention_bias", false);
    g.oBias = c.boolean("attention_bias", false);
    g.mlpBias = c.boolean("mlp_bias", false);
    if (g.type == "mistral" && c.has("sliding_window")) g.window = c.positiveInt("sliding_window");
    if (g.type == "qwen2" && c.boolean("use_sliding_window", false))
        c.fail("use_sliding_window", "is true: Qwen2's per-layer sliding window is not supported");
    // Llama-family checkpoints rotate every dimension.
    if (c.has("partial_rotary_factor") && c.json().at("partial_rotary_factor") != 1.0)
        c.fail("partial_rotary_factor", "is not supported (only 1.0)");
    g.rope = readRope(c, g.headDim);
    return g;
}

struct LlamaLayer {
    at::Tensor inNorm, postNorm;
    Linear q, k, v, o, gate, up, down;
};

// RMSNorm in float32, scaled by the weight in the compute dtype (as Hugging Face's LlamaRMSNorm).
at::Tensor rmsNorm(const at::Tensor& x, const at::Tensor& weight, double eps) {
    at::Tensor xf = x.to(at::kFloat);
    xf = xf * at::rsqrt(xf.pow(2).mean(-1, /*keepdim=*/true) + eps);
    return weight * xf.to(x.scalar_type());
}

class LlamaModel final : public TextFamilyModel<LlamaConfig> {
public:
    LlamaModel(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
               const LoadOptions& options)
        : TextFamilyModel(parseLlamaConfig(config), folder, device) {
        c10::InferenceMode guard;
        WeightStore w(folder, device);
        stream_ = planWeights(w, options);
        w.setPrefix("model.");
        const std::int64_t E = cfg_.hidden, I = cfg_.inner, H = cfg_.heads, G = cfg_.kvHeads, d = cfg_.headDim;
        const long long total = 2 + cfg_.layers;
        auto step = [&](long long done) { reportProgress(options.progress, done, total); };
        auto linear = [&](const std::string& name, std::int64_t out, std::int64_t in, bool bias) {
            return w.linear(name, out, in, bias);
        };
        embed_ = w.rows("embed_tokens.weight", {cfg_.vocab, E});
        step(1);
        for (int l = 0; l < cfg_.layers; ++l) {
            const std::string p = "layers." + std::to_string(l) + ".";
            LlamaLayer L;
            L.inNorm = w.get(p + "input_layernorm.weight", {E});
            L.q = linear(p + "self_attn.q_proj", H * d, E, cfg_.qkvBias);
            L.k = linear(p + "self_attn.k_proj", G * d, E, cfg_.qkvBias);
            L.v = linear(p + "self_attn.v_proj", G * d, E, cfg_.qkvBias);
            L.o = linear(p + "self_attn.o_proj", E, H * d, cfg_.oBias);
            L.postNorm = w.get(p + "post_attention_layernorm.weight", {E});
            L.gate = linear(p + "mlp.gate_proj", I, E, cfg_.mlpBias);
            L.up = linear(p + "mlp.up_proj", I, E, cfg_.mlpBias);
            L.down = linear(p + "mlp.down_proj", E, I, cfg_.mlpBias);
            layers_.push_back(std::move(L));
            step(2 + l);
        }
        norm_ = w.get("norm.weight", {E});
        // Tied: the output projection is the input embedding (config tie_word_embeddings).
        head_ = cfg_.tied ? embed_ : w.rows("lm_head.weight", {cfg_.vocab, E});
        step(total);

        info_ = familyInfo(cfg_.type, folder, w, device, cfg_.layers, cfg_.heads, cfg_.kvHeads, cfg_.headDim,
                           cfg_.hidden);
        info_.vocabSize = cfg_.vocab;
        info_.maxPositions = cfg_.positions;
        if (cfg_.window > 0) info_.notes.push_back("sliding window " + std::to_string(cfg_.window) + " on every layer");
        if (cfg_.kvHeads != cfg_.heads) info_.notes.push_back(std::to_string(cfg_.kvHeads) + " kv groups");
        if (cfg_.rope.type != "default") info_.notes.push_back("rope scaling " + cfg_.rope.type);
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
        mask.window = cfg_.window;

        at::Tensor x = gatherRows(embed_, ids, device_);
        const RopeTables rope = ropeTables(cfg_.rope, n, device_);
        ScoreSpec score;
        score.scale = 1.0 / std::sqrt(static_cast<double>(d));
        StreamPass pass(stream_, options.progress);
        for (int l = 0; l < cfg_.layers; ++l) {
            pass.layer(l);
            const LlamaLayer& L = layers_[l];
            at::Tensor h = rmsNorm(x, L.inNorm, cfg_.eps);
            auto heads = [&](const Linear& proj, std::int64_t count) { return splitHeads(proj(h), count, d); };
            at::Tensor q = applyRope(heads(L.q, H), rope), k = applyRope(heads(L.k, G), rope), v = heads(L.v, G);
            at::Tensor context = mergeHeads(attendDot(q, k, v, mask, score, layerRun(options, "self", l)));
            x = x + L.o(context);
            h = rmsNorm(x, L.postNorm, cfg_.eps);
            x = x + L.down(at::silu(L.gate(h)) * L.up(h));
            capture.layers.push_back(dotCapture(q, k, score, mask));
            reportProgress(options.progress, l + 1, cfg_.layers);
        }
        impl->nextTokenLogits = nextLogits(rmsNorm(x.narrow(0, n - 1, 1), norm_, cfg_.eps), head_);
        impl->infos.push_back(selfBlock(cfg_.layers, cfg_.heads, cfg_.kvHeads, true, impl->displayTokens));
        if (cfg_.window > 0) impl->infos.back().layerWindows.assign(cfg_.layers, cfg_.window);
        impl->blocks.push_back(std::move(capture));
        return std::make_shared<const Trace>(std::move(impl));
    }

private:
    at::Tensor embed_, norm_, head_;
    std::vector<LlamaLayer> layers_;
};

}  // namespace

std::shared_ptr<const Model> loadLlama(const std::filesystem::path& folder, const JsonConfig& config,
                                       c10::Device device, const LoadOptions& options) {
    return std::make_shared<const LlamaModel>(folder, config, device, options);
}

}  // namespace attnscope
