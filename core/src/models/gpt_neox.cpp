// GPT-NeoX (model_type "gpt_neox": Pythia, GPT-NeoX-20B): pre-LN decoder with LayerNorm (with
// bias), a fused query_key_value laid out per head ([H, 3, d] along its output), rotary positions
// on the first int(d · rotary_pct) dims of each head (rotate-half, base rotary_emb_base), the
// parallel residual x + attn(ln1(x)) + mlp(ln2(x)) or the sequential one, and an untied embed_out.
// Weights are nn.Linear [out, in] under "gpt_neox."; embed_out is top level.
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

struct NeoxConfig {
    int vocab = 0, hidden = 0, inner = 0, layers = 0, heads = 0, headDim = 0, positions = 0;
    double eps = 1e-5;
    std::string activation;
    bool parallel = true, bias = true, tied = false;
    RopeSpec rope;
};

NeoxConfig parseNeoxConfig(const JsonConfig& c) {
    NeoxConfig g;
    g.vocab = c.positiveInt("vocab_size");
    g.hidden = c.positiveInt("hidden_size");
    g.inner = c.positiveInt("intermediate_size");
    g.layers = c.positiveInt("num_hidden_layers");
    g.heads = c.positiveInt("num_attention_heads");
    g.positions = c.positiveInt("max_position_embeddings");
    g.eps = c.positiveNumber("layer_norm_eps", 1e-5);
    g.activation = c.string("hidden_act", "gelu");
    requireActivation(c, "hidden_act", g.activation);
    g.parallel = c.boolean("use_parallel_residual", true);
    g.bias = c.boolean("attention_bias", true);  // older configs have no key: always biased
    g.tied = c.boolean("tie_word_embeddings", false);
    if (g.hidden % g.heads != 0)
        c.fail("hidden_size", "(" + std::to_string(g.hidden) + ") must be divisible by num_attention_heads (" +
                                      std::to_string(g.heads) + ")");
    g.headDim = g.hidden / g.heads;
    // rotary_pct (older configs) wins over partial_rotary_factor, as in Hugging Face's config.
    const int rotary = partialRotaryDims(c, g.headDim, {"rotary_pct", "partial_rotary_factor"}, 0.25);
    // Theta is rotary_emb_base; configs written by newer versions also (or only) have rope_theta.
    g.rope = readRope(c, rotary, false, RopeKeys{c.has("rotary_emb_base") ? "rotary_emb_base" : "rope_theta", 10000.0});
    return g;
}

struct NeoxLayer {
    Norm ln1, ln2;
    Linear qkv, dense, up, down;
};

class NeoxModel final : public TextFamilyModel<NeoxConfig> {
public:
    NeoxModel(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
              const LoadOptions& options)
        : TextFamilyModel(parseNeoxConfig(config), folder, device) {
        c10::InferenceMode guard;
        WeightStore w(folder, device);
        stream_ = planWeights(w, options);
        w.setPrefix("gpt_neox.");
        const std::int64_t E = cfg_.hidden, I = cfg_.inner;
        const long long total = 2 + cfg_.layers;
        auto step = [&](long long done) { reportProgress(options.progress, done, total); };
        embed_ = w.rows("embed_in.weight", {cfg_.vocab, E});
        step(1);
        for (int l = 0; l < cfg_.layers; ++l) {
            const std::string p = "layers." + std::to_string(l) + ".";
            NeoxLayer L;
            L.ln1 = loadNorm(w, p + "input_layernorm", E);
            L.qkv = w.linear(p + "attention.query_key_value", 3 * E, E, cfg_.bias);
            L.dense = w.linear(p + "attention.dense", E, E, cfg_.bias);
            L.ln2 = loadNorm(w, p + "post_attention_layernorm", E);
            L.up = w.linear(p + "mlp.dense_h_to_4h", I, E);
            L.down = w.linear(p + "mlp.dense_4h_to_h", E, I);
            layers_.push_back(std::move(L));
            step(2 + l);
        }
        finalNorm_ = loadNorm(w, "final_layer_norm", E);
        head_ = cfg_.tied ? embed_ : w.rows("embed_out.weight", {cfg_.vocab, E});
        step(total);

        info_ = familyInfo("gpt_neox", folder, w, device, cfg_.layers, cfg_.heads, cfg_.heads, cfg_.headDim,
                           cfg_.hidden);
        info_.vocabSize = cfg_.vocab;
        info_.maxPositions = cfg_.positions;
        info_.notes.push_back(rotaryNote(cfg_.rope.rotaryDim, cfg_.headDim));
        if (cfg_.parallel) info_.notes.push_back("parallel attention and MLP");
    }

protected:
    std::shared_ptr<const Trace> runForward(const std::vector<std::int64_t>& ids,
                                            const RunOptions& options) const override {
        checkIds(ids, cfg_.vocab, cfg_.positions);
        c10::InferenceMode guard;
        const std::int64_t n = static_cast<std::int64_t>(ids.size()), H = cfg_.heads, d = cfg_.headDim;
        requireForwardMemory({cfg_.layers, H, H, d, cfg_.hidden, cfg_.inner, n, n, computeElementSize(embed_)},
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
            const NeoxLayer& L = layers_[l];
            // The fused output is per head: [n, H, 3, d] with q, k, v of head h side by side.
            at::Tensor qkv = L.qkv(layerNorm(x, L.ln1, cfg_.eps)).view({n, H, 3, d});
            auto part = [&](int i) { return qkv.select(2, i).transpose(0, 1).contiguous(); };  // [H, n, d]
            at::Tensor q = applyRope(part(0), rope), k = applyRope(part(1), rope), v = part(2);
            at::Tensor attn = L.dense(mergeHeads(attendDot(q, k, v, mask, score, layerRun(options, "self", l))));
            auto mlp = [&](const at::Tensor& in) {
                return L.down(activate(cfg_.activation, L.up(layerNorm(in, L.ln2, cfg_.eps))));
            };
            if (cfg_.parallel) {
                x = x + attn + mlp(x);
            } else {
                x = x + attn;
                x = x + mlp(x);
            }
            capture.layers.push_back(dotCapture(q, k, score, mask));
            reportProgress(options.progress, l + 1, cfg_.layers);
        }
        impl->nextTokenLogits = nextLogits(layerNorm(x.narrow(0, n - 1, 1), finalNorm_, cfg_.eps), head_);
        impl->infos.push_back(selfBlock(cfg_.layers, cfg_.heads, cfg_.heads, true, impl->displayTokens));
        impl->blocks.push_back(std::move(capture));
        return std::make_shared<const Trace>(std::move(impl));
    }

private:
    at::Tensor embed_, head_;
    Norm finalNorm_;
    std::vector<NeoxLayer> layers_;
};

}  // namespace

std::shared_ptr<const Model> loadGptNeox(const std::filesystem::path& folder, const JsonConfig& config,
                                         c10::Device device, const LoadOptions& options) {
    return std::make_shared<const NeoxModel>(folder, config, device, options);
}

}  // namespace attnscope
