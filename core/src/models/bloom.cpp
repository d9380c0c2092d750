// BLOOM (model_type "bloom"): ALiBi instead of positions (Hugging Face's slopes, alibi.h), a
// LayerNorm right after the word embeddings, a fused query_key_value laid out per head as
// [heads, 3, head_dim], tanh GELU, and apply_residual_connection_post_layernorm (the residual is
// taken after the norm). Weights are nn.Linear [out, in], with or without "transformer."; the
// output head is the word embedding unless tie_word_embeddings is false.
#include "attnscope/runtime/error.h"
#include "alibi.h"
#include "families.h"
#include "family_common.h"
#include "runtime/memory.h"
#include "io/weights.h"

#include <c10/core/InferenceMode.h>

#include <cmath>
#include <limits>

namespace attnscope {

namespace {

// Defaults are BloomConfig's.
struct BloomConfig {
    int vocab = 250880, hidden = 64, layers = 2, heads = 8;
    double eps = 1e-5;
    bool residualAfterNorm = false;  // apply_residual_connection_post_layernorm
    bool tied = true;
};

// BloomConfig reads n_layer / n_head (num_hidden_layers / num_attention_heads are their aliases)
// and n_embed before hidden_size.
int sizeKey(const JsonConfig& c, const char* key, const char* alias, int fallback) {
    if (c.has(alias)) return c.positiveInt(alias);
    return c.optionalPositiveInt(key).value_or(fallback);
}

BloomConfig parseBloomConfig(const JsonConfig& c) {
    BloomConfig g;
    g.vocab = c.optionalPositiveInt("vocab_size").value_or(g.vocab);
    const char* hiddenKey = c.has("n_embed") ? "n_embed" : "hidden_size";
    g.hidden = c.optionalPositiveInt(hiddenKey).value_or(g.hidden);
    g.layers = sizeKey(c, "n_layer", "num_hidden_layers", g.layers);
    g.heads = sizeKey(c, "n_head", "num_attention_heads", g.heads);
    g.eps = c.positiveNumber("layer_norm_epsilon", 1e-5);
    g.residualAfterNorm = c.boolean("apply_residual_connection_post_layernorm", false);
    g.tied = c.boolean("tie_word_embeddings", true);
    if (g.hidden % g.heads != 0)
        c.fail(hiddenKey, "(" + std::to_string(g.hidden) + ") must be divisible by the number of heads (" +
                                  std::to_string(g.heads) + ")");
    return g;
}

struct BloomLayer {
    Norm inNorm, postNorm;
    Linear qkv, dense, up, down;
};

class BloomModel final : public TextFamilyModel<BloomConfig> {
public:
    BloomModel(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
               const LoadOptions& options)
        : TextFamilyModel(parseBloomConfig(config), folder, device) {
        c10::InferenceMode guard;
        WeightStore w(folder, device);
        stream_ = planWeights(w, options);
        if (w.anyNameStartsWith("transformer.")) w.setPrefix("transformer.");
        const std::int64_t E = cfg_.hidden;
        const long long total = 2 + cfg_.layers;
        auto step = [&](long long done) { reportProgress(options.progress, done, total); };
        embed_ = w.rows("word_embeddings.weight", {cfg_.vocab, E});
        embedNorm_ = loadNorm(w, "word_embeddings_layernorm", E);
        step(1);
        for (int l = 0; l < cfg_.layers; ++l) {
            const std::string p = "h." + std::to_string(l) + ".";
            BloomLayer L;
            L.inNorm = loadNorm(w, p + "input_layernorm", E);
            L.qkv = w.linear(p + "self_attention.query_key_value", 3 * E, E);
            L.dense = w.linear(p + "self_attention.dense", E, E);
            L.postNorm = loadNorm(w, p + "post_attention_layernorm", E);
            L.up = w.linear(p + "mlp.dense_h_to_4h", 4 * E, E);  // BloomMLP is always 4 × hidden
            L.down = w.linear(p + "mlp.dense_4h_to_h", E, 4 * E);
            layers_.push_back(std::move(L));
            step(2 + l);
        }
        finalNorm_ = loadNorm(w, "ln_f", E);
        head_ = cfg_.tied ? embed_ : w.rows("lm_head.weight", {cfg_.vocab, E});
        step(total);

        score_.scale = 1.0 / std::sqrt(static_cast<double>(E / cfg_.heads));
        score_.alibiSlopes = alibiSlopes(cfg_.heads);
        info_ = familyInfo("bloom", folder, w, device, cfg_.layers, cfg_.heads, cfg_.heads,
                           static_cast<int>(E / cfg_.heads), cfg_.hidden);
        info_.vocabSize = cfg_.vocab;
        info_.maxPositions = 0;  // ALiBi: no position table, so no length limit but memory
        info_.notes.push_back("ALiBi");
        info_.notes.push_back("LayerNorm on the word embeddings");
        if (cfg_.residualAfterNorm) info_.notes.push_back("residual taken after the norm");
    }

protected:
    std::shared_ptr<const Trace> runForward(const std::vector<std::int64_t>& ids,
                                            const RunOptions& options) const override {
        checkIds(ids, cfg_.vocab, std::numeric_limits<std::int64_t>::max());
        c10::InferenceMode guard;
        const std::int64_t n = static_cast<std::int64_t>(ids.size()), E = cfg_.hidden, H = cfg_.heads, d = E / H;
        requireForwardMemory({cfg_.layers, H, H, d, E, 4 * E, n, n, computeElementSize(embed_)}, device_);

        auto impl = newTrace(ids);
        BlockCapture capture;
        MaskSpec mask;
        mask.causal = true;
        const double eps = cfg_.eps;

        at::Tensor x = layerNorm(gatherRows(embed_, ids, device_), embedNorm_, eps);
        StreamPass pass(stream_, options.progress);
        for (int l = 0; l < cfg_.layers; ++l) {
            pass.layer(l);
            const BloomLayer& L = layers_[l];
            at::Tensor h = layerNorm(x, L.inNorm, eps);
            at::Tensor residual = cfg_.residualAfterNorm ? h : x;
            // BloomAttention._split_heads: each head's q, k and v sit together, [n, H, 3, d].
            at::Tensor qkv = L.qkv(h).view({n, H, 3, d});
            auto part = [&](int i) { return qkv.select(2, i).transpose(0, 1).contiguous(); };
            at::Tensor q = part(0), k = part(1), v = part(2);
            at::Tensor attended =
                    residual + L.dense(mergeHeads(attendDot(q, k, v, mask, score_, layerRun(options, "self", l))));
            h = layerNorm(attended, L.postNorm, eps);
            residual = cfg_.residualAfterNorm ? h : attended;
            x = residual + L.down(at::gelu(L.up(h), "tanh"));
            capture.layers.push_back(dotCapture(q, k, score_, mask));
            reportProgress(options.progress, l + 1, cfg_.layers);
        }
        impl->nextTokenLogits = nextLogits(layerNorm(x.narrow(0, n - 1, 1), finalNorm_, eps), head_);
        impl->infos.push_back(selfBlock(cfg_.layers, cfg_.heads, cfg_.heads, true, impl->displayTokens));
        impl->blocks.push_back(std::move(capture));
        return std::make_shared<const Trace>(std::move(impl));
    }

private:
    at::Tensor embed_, head_;
    Norm embedNorm_, finalNorm_;
    std::vector<BloomLayer> layers_;
    ScoreSpec score_;  // scale 1/√d and the heads' slopes: logits = q·k/√d + slope·j, as BloomAttention
};

}  // namespace

std::shared_ptr<const Model> loadBloom(const std::filesystem::path& folder, const JsonConfig& config,
                                       c10::Device device, const LoadOptions& options) {
    return std::make_shared<const BloomModel>(folder, config, device, options);
}

}  // namespace attnscope
