// Falcon (model_type "falcon"; the legacy "RefinedWebModel" and "RefinedWeb" too): three layouts
// of the fused query_key_value, as FalconAttention._split_heads reads them,
//   multi_query (Falcon-7B): [n, heads + 2, d], the last two are the one key and value head;
//   new_decoder_architecture (Falcon-40B/180B, Falcon2): [n, kv, heads/kv + 2, d], each kv group's
//     queries followed by its key and value;
//   otherwise (Falcon-RW): [n, heads, 3, d], per head;
// rotary positions or ALiBi as `alibi` says (Falcon's ALiBi is (q·k + slope·j)/√d with the slopes
// rounded to bfloat16), attention and MLP in parallel (parallel_attn, from one input_layernorm or
// from ln_attn / ln_mlp), optional biases. Weights are nn.Linear [out, in], with or without
// "transformer."; the output head is the word embedding unless tie_word_embeddings is false.
#include "attnscope/runtime/error.h"
#include "alibi.h"
#include "families.h"
#include "family_common.h"
#include "runtime/memory.h"
#include "rope.h"
#include "io/weights.h"

#include <c10/core/InferenceMode.h>
#include <c10/util/BFloat16.h>

#include <cmath>

namespace attnscope {

namespace {

enum class QkvLayout { PerHead, MultiQuery, Grouped };

// Defaults are FalconConfig's (Falcon-7B).
struct FalconConfig {
    std::string type;
    int vocab = 65024, hidden = 4544, layers = 32, heads = 71, kvHeads = 71, positions = 2048, inner = 0;
    double eps = 1e-5;
    bool alibi = false, newArch = false, multiQuery = true, parallel = true, bias = false, tied = true;
    int normsInParallel = 1;  // 2: ln_attn and ln_mlp; 1: one input_layernorm
    std::string activation = "gelu";
    RopeSpec rope;
    QkvLayout layout() const {
        if (newArch) return QkvLayout::Grouped;
        return multiQuery ? QkvLayout::MultiQuery : QkvLayout::PerHead;
    }
    int kvUsed() const { return layout() == QkvLayout::MultiQuery ? 1 : kvHeads; }  // key/value heads of q·k
};

// The key, or the legacy RefinedWeb name it had.
int sizeKeyOrLegacy(const JsonConfig& c, const char* key, const char* legacy, int fallback) {
    if (c.has(key)) return c.positiveInt(key);
    return c.optionalPositiveInt(legacy).value_or(fallback);
}

FalconConfig parseFalconConfig(const JsonConfig& c) {
    FalconConfig g;
    g.type = c.string("model_type");
    g.vocab = c.optionalPositiveInt("vocab_size").value_or(g.vocab);
    const char* hiddenKey = c.has("n_embed") ? "n_embed" : "hidden_size";  // FalconConfig: n_embed wins
    g.hidden = c.optionalPositiveInt(hiddenKey).value_or(g.hidden);
    g.layers = sizeKeyOrLegacy(c, "num_hidden_layers", "n_layer", g.layers);
    g.heads = sizeKeyOrLegacy(c, "num_attention_heads", "n_head", g.heads);
    const char* kvKey = c.has("num_kv_heads") || !c.has("n_head_kv") ? "num_kv_heads" : "n_head_kv";
    g.kvHeads = c.optionalPositiveInt(kvKey).value_or(g.heads);
    g.positions = c.optionalPositiveInt("max_position_embeddings").value_or(g.positions);
    g.eps = c.positiveNumber("layer_norm_epsilon", 1e-5);
    g.alibi = c.boolean("alibi", false);
    // RefinedWeb (the 40B's original type) is the new decoder architecture under its old name.
    g.newArch = c.boolean("new_decoder_architecture", g.type == "RefinedWeb");
    g.multiQuery = c.boolean("multi_query", true);
    g.parallel = c.boolean("parallel_attn", true);
    g.bias = c.boolean("bias", false);
    g.tied = c.boolean("tie_word_embeddings", true);
    g.activation = c.string("activation", "gelu");
    requireKnown(c, "activation", g.activation, {"gelu", "gelu_new", "gelu_pytorch_tanh", "gelu_fast", "relu"});
    if (g.hidden % g.heads != 0)
        c.fail(hiddenKey, "(" + std::to_string(g.hidden) + ") must be divisible by num_attention_heads (" +
                                  std::to_string(g.heads) + ")");
    g.inner = c.optionalPositiveInt("ffn_hidden_size").value_or(4 * g.hidden);
    const std::string kv = "(" + std::to_string(g.kvHeads) + ")";
    if (g.newArch && g.heads % g.kvHeads != 0)
        c.fail(kvKey, kv + " must divide num_attention_heads (" + std::to_string(g.heads) + ")");
    if (g.layout() == QkvLayout::PerHead && g.kvHeads != g.heads)
        c.fail(kvKey, kv + " must equal num_attention_heads (" + std::to_string(g.heads) +
                              ") without multi_query or new_decoder_architecture");
    // FalconDecoderLayer: the new architecture has only the parallel path, and two norms unless
    // num_ln_in_parallel_attn says 1; the old one has ln_attn/ln_mlp nowhere in its forward.
    const int normsKey = c.optionalPositiveInt("num_ln_in_parallel_attn").value_or(g.newArch ? 2 : 1);
    if (normsKey > 2) c.fail("num_ln_in_parallel_attn", "must be 1 or 2, found " + std::to_string(normsKey));
    if (g.newArch && !g.parallel)
        c.fail("parallel_attn", "is false, but new_decoder_architecture runs attention and MLP in parallel only");
    if (!g.newArch && g.parallel && normsKey == 2)
        c.fail("num_ln_in_parallel_attn", "is 2, which Falcon uses only with new_decoder_architecture");
    g.normsInParallel = g.newArch ? normsKey : 1;
    if (!g.alibi) g.rope = readRope(c, g.hidden / g.heads);
    return g;
}

struct FalconLayer {
    Norm attnNorm, mlpNorm;  // input_layernorm / ln_attn; post_attention_layernorm / ln_mlp (may be unused)
    Linear qkv, dense, up, down;
};

class FalconModel final : public TextFamilyModel<FalconConfig> {
public:
    FalconModel(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
                const LoadOptions& options)
        : TextFamilyModel(parseFalconConfig(config), folder, device) {
        c10::InferenceMode guard;
        WeightStore w(folder, device);
        stream_ = planWeights(w, options);
        if (w.anyNameStartsWith("transformer.")) w.setPrefix("transformer.");
        const std::int64_t E = cfg_.hidden, H = cfg_.heads, d = E / H, I = cfg_.inner;
        // FalconAttention's qkv_out_dim per layout.
        const std::int64_t qkvOut = cfg_.layout() == QkvLayout::Grouped      ? (H + 2 * cfg_.kvHeads) * d
                                    : cfg_.layout() == QkvLayout::MultiQuery ? (H + 2) * d
                                                                             : 3 * E;
        const long long total = 2 + cfg_.layers;
        auto step = [&](long long done) { reportProgress(options.progress, done, total); };
        embed_ = w.rows("word_embeddings.weight", {cfg_.vocab, E});
        step(1);
        const bool twoNorms = cfg_.normsInParallel == 2, postNorm = !cfg_.parallel;
        for (int l = 0; l < cfg_.layers; ++l) {
            const std::string p = "h." + std::to_string(l) + ".";
            FalconLayer L;
            L.attnNorm = loadNorm(w, p + (twoNorms ? "ln_attn" : "input_layernorm"), E);
            if (twoNorms) L.mlpNorm = loadNorm(w, p + "ln_mlp", E);
            if (postNorm) L.mlpNorm = loadNorm(w, p + "post_attention_layernorm", E);
            L.qkv = w.linear(p + "self_attention.query_key_value", qkvOut, E, cfg_.bias);
            L.dense = w.linear(p + "self_attention.dense", E, E, cfg_.bias);
            L.up = w.linear(p + "mlp.dense_h_to_4h", I, E, cfg_.bias);
            L.down = w.linear(p + "mlp.dense_4h_to_h", E, I, cfg_.bias);
            layers_.push_back(std::move(L));
            step(2 + l);
        }
        finalNorm_ = loadNorm(w, "ln_f", E);
        head_ = cfg_.tied ? embed_ : w.rows("lm_head.weight", {cfg_.vocab, E});
        step(total);

        score_.scale = 1.0 / std::sqrt(static_cast<double>(d));
        if (cfg_.alibi) {
            // build_alibi_tensor in modeling_falcon casts the slopes to bfloat16; the logits are
            // (q·k + slope·j) / √d, so the ScoreSpec slope is slope / √d. Two things of Hugging
            // Face's code are not followed: with an integer attention mask it also rounds slope·j
            // to bfloat16 (≤ 2^-9 relative; ScoreSpec is linear in j), and recent versions fold
            // alibi/√d into the causal mask for SDPA, which their eager path (output_attentions
            // without head_mask) then adds a second time.
            for (double s : alibiSlopes(cfg_.heads))
                score_.alibiSlopes.push_back(static_cast<float>(c10::BFloat16(static_cast<float>(s))) * score_.scale);
        }
        info_ = familyInfo(cfg_.type, folder, w, device, cfg_.layers, cfg_.heads, cfg_.kvUsed(), static_cast<int>(d),
                           cfg_.hidden);
        info_.vocabSize = cfg_.vocab;
        info_.maxPositions = cfg_.positions;
        info_.notes.push_back(cfg_.alibi ? "ALiBi" : "rotary");
        if (cfg_.layout() == QkvLayout::MultiQuery) info_.notes.push_back("multi-query (one kv head)");
        if (cfg_.layout() == QkvLayout::Grouped) info_.notes.push_back(std::to_string(cfg_.kvHeads) + " kv groups");
        if (cfg_.parallel) info_.notes.push_back("parallel attention and MLP");
    }

protected:
    std::shared_ptr<const Trace> runForward(const std::vector<std::int64_t>& ids,
                                            const RunOptions& options) const override {
        checkIds(ids, cfg_.vocab, cfg_.positions);
        c10::InferenceMode guard;
        const std::int64_t n = static_cast<std::int64_t>(ids.size()), E = cfg_.hidden, H = cfg_.heads, d = E / H;
        const std::int64_t G = cfg_.kvUsed();
        requireForwardMemory({cfg_.layers, H, G, d, E, cfg_.inner, n, n, computeElementSize(embed_)}, device_);

        auto impl = newTrace(ids);
        BlockCapture capture;
        MaskSpec mask;
        mask.causal = true;
        RopeTables rope;
        if (!cfg_.alibi) rope = ropeTables(cfg_.rope, n, device_);
        const double eps = cfg_.eps;

        at::Tensor x = gatherRows(embed_, ids, device_);
        StreamPass pass(stream_, options.progress);
        for (int l = 0; l < cfg_.layers; ++l) {
            pass.layer(l);
            const FalconLayer& L = layers_[l];
            const at::Tensor a = layerNorm(x, L.attnNorm, eps);
            at::Tensor q, k, v;
            split(L.qkv(a), n, q, k, v);
            if (!cfg_.alibi) {
                q = applyRope(q, rope);
                k = applyRope(k, rope);
            }
            at::Tensor attn = L.dense(mergeHeads(attendDot(q, k, v, mask, score_, layerRun(options, "self", l))));
            at::Tensor m;  // the MLP's input
            if (cfg_.normsInParallel == 2) {
                m = layerNorm(x, L.mlpNorm, eps);
            } else if (cfg_.parallel) {
                m = a;
            } else {
                x = x + attn;
                m = layerNorm(x, L.mlpNorm, eps);
            }
            at::Tensor out = L.down(activate(cfg_.activation, L.up(m)));
            x = cfg_.parallel ? x + (out + attn) : x + out;
            capture.layers.push_back(dotCapture(q, k, score_, mask));
            reportProgress(options.progress, l + 1, cfg_.layers);
        }
        impl->nextTokenLogits = nextLogits(layerNorm(x.narrow(0, n - 1, 1), finalNorm_, eps), head_);
        impl->infos.push_back(selfBlock(cfg_.layers, cfg_.heads, static_cast<int>(G), true, impl->displayTokens));
        impl->blocks.push_back(std::move(capture));
        return std::make_shared<const Trace>(std::move(impl));
    }

private:
    // The fused projection [n, qkvOut] into q [H, n, d] and k, v [G, n, d] (FalconAttention._split_heads).
    void split(const at::Tensor& fused, std::int64_t n, at::Tensor& q, at::Tensor& k, at::Tensor& v) const {
        const std::int64_t H = cfg_.heads, d = cfg_.hidden / H;
        auto heads = [](const at::Tensor& t) { return t.transpose(0, 1).contiguous(); };  // [n, c, d] -> [c, n, d]
        switch (cfg_.layout()) {
            case QkvLayout::Grouped: {
                const std::int64_t G = cfg_.kvHeads, per = H / G;
                const at::Tensor t = fused.view({n, G, per + 2, d});
                q = heads(t.narrow(2, 0, per).reshape({n, H, d}));  // query head g·per + i
                k = heads(t.select(2, per));
                v = heads(t.select(2, per + 1));
                return;
            }
            case QkvLayout::MultiQuery: {
                const at::Tensor t = fused.view({n, H + 2, d});
                q = heads(t.narrow(1, 0, H));
                k = heads(t.narrow(1, H, 1));
                v = heads(t.narrow(1, H + 1, 1));
                return;
            }
            case QkvLayout::PerHead: {
                const at::Tensor t = fused.view({n, H, 3, d});
                q = heads(t.select(2, 0));
                k = heads(t.select(2, 1));
                v = heads(t.select(2, 2));
                return;
            }
        }
    }

    at::Tensor embed_, head_;
    Norm finalNorm_;
    std::vector<FalconLayer> layers_;
    ScoreSpec score_;
};

}  // namespace

std::shared_ptr<const Model> loadFalcon(const std::filesystem::path& folder, const JsonConfig& config,
                                        c10::Device device, const LoadOptions& options) {
    return std::make_shared<const FalconModel>(folder, config, device, options);
}

}  // namespace attnscope
