// OPT (model_type "opt"): decoder with learned positions offset by 2, q scaled by 1/√d before the
// product, pre-LN blocks (do_layer_norm_before, the default) or post-LN blocks (OPT-350m), and
// word embeddings narrower than the model (word_embed_proj_dim, with project_in / project_out).
// Weights are nn.Linear [out, in] under "model.decoder." (OPTForCausalLM) or "decoder." (OPTModel,
// as facebook's checkpoints are saved); lm_head is tied to embed_tokens unless the config says not.
#include "attnscope/runtime/error.h"
#include "families.h"
#include "family_common.h"
#include "runtime/memory.h"
#include "io/weights.h"

#include <c10/core/InferenceMode.h>

#include <cmath>

namespace attnscope {

namespace {

// Defaults are OPTConfig's.
struct OptConfig {
    int vocab = 50272, hidden = 768, inner = 3072, layers = 12, heads = 12, positions = 2048, projDim = 768;
    bool preNorm = true;    // do_layer_norm_before
    bool finalNorm = true;  // decoder.final_layer_norm exists (pre-LN and not _remove_final_layer_norm)
    bool bias = true;       // enable_bias
    bool affine = true;     // layer_norm_elementwise_affine
    bool tied = true;
    std::string activation = "relu";
};

OptConfig parseOptConfig(const JsonConfig& c) {
    OptConfig g;
    auto size = [&](const char* key, int fallback) { return c.optionalPositiveInt(key).value_or(fallback); };
    g.vocab = size("vocab_size", g.vocab);
    g.hidden = size("hidden_size", g.hidden);
    g.inner = size("ffn_dim", g.inner);
    g.layers = size("num_hidden_layers", g.layers);
    g.heads = size("num_attention_heads", g.heads);
    g.positions = size("max_position_embeddings", g.positions);
    g.projDim = size("word_embed_proj_dim", g.hidden);
    g.preNorm = c.boolean("do_layer_norm_before", true);
    g.finalNorm = g.preNorm && !c.boolean("_remove_final_layer_norm", false);
    g.bias = c.boolean("enable_bias", true);
    g.affine = c.boolean("layer_norm_elementwise_affine", true);
    g.tied = c.boolean("tie_word_embeddings", true);
    g.activation = c.string("activation_function", "relu");
    requireKnown(c, "activation_function", g.activation,
                 {"relu", "gelu", "gelu_new", "gelu_pytorch_tanh", "gelu_fast"});
    if (g.hidden % g.heads != 0)
        c.fail("hidden_size", "(" + std::to_string(g.hidden) + ") must be divisible by num_attention_heads (" +
                                      std::to_string(g.heads) + ")");
    return g;
}

struct OptLayer {
    Norm attnNorm, mlpNorm;  // self_attn_layer_norm, final_layer_norm (undefined tensors without affine)
    Linear q, k, v, o, fc1, fc2;
};

class OptModel final : public TextFamilyModel<OptConfig> {
public:
    OptModel(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
             const LoadOptions& options)
        : TextFamilyModel(parseOptConfig(config), folder, device) {
        c10::InferenceMode guard;
        WeightStore w(folder, device);
        stream_ = planWeights(w, options);
        if (w.anyNameStartsWith("model.")) w.setPrefix("model.");
        const std::int64_t E = cfg_.hidden, I = cfg_.inner, P = cfg_.projDim;
        const long long total = 2 + cfg_.layers;
        auto step = [&](long long done) { reportProgress(options.progress, done, total); };
        auto norm = [&](const std::string& name) { return cfg_.affine ? loadNorm(w, name, E) : Norm{}; };
        embed_ = w.rows("decoder.embed_tokens.weight", {cfg_.vocab, P});
        // OPTLearnedPositionalEmbedding keeps two rows before position 0.
        positions_ = w.get("decoder.embed_positions.weight", {cfg_.positions + 2, E});
        if (P != E) {
            projectIn_ = w.get("decoder.project_in.weight", {E, P});
            projectOut_ = w.get("decoder.project_out.weight", {P, E});
        }
        step(1);
        for (int l = 0; l < cfg_.layers; ++l) {
            const std::string p = "decoder.layers." + std::to_string(l) + ".";
            OptLayer L;
            L.attnNorm = norm(p + "self_attn_layer_norm");
            L.q = w.linear(p + "self_attn.q_proj", E, E, cfg_.bias);
            L.k = w.linear(p + "self_attn.k_proj", E, E, cfg_.bias);
            L.v = w.linear(p + "self_attn.v_proj", E, E, cfg_.bias);
            L.o = w.linear(p + "self_attn.out_proj", E, E, cfg_.bias);
            L.mlpNorm = norm(p + "final_layer_norm");
            L.fc1 = w.linear(p + "fc1", I, E, cfg_.bias);
            L.fc2 = w.linear(p + "fc2", E, I, cfg_.bias);
            layers_.push_back(std::move(L));
            step(2 + l);
        }
        if (cfg_.finalNorm) finalNorm_ = norm("decoder.final_layer_norm");
        head_ = cfg_.tied ? embed_ : w.rows("lm_head.weight", {cfg_.vocab, P});
        step(total);

        const int d = cfg_.hidden / cfg_.heads;
        info_ = familyInfo("opt", folder, w, device, cfg_.layers, cfg_.heads, cfg_.heads, d, cfg_.hidden);
        info_.vocabSize = cfg_.vocab;
        info_.maxPositions = cfg_.positions;
        info_.notes.push_back("q scaled by 1/√d before q·k");
        if (!cfg_.preNorm) info_.notes.push_back("post-LN blocks (do_layer_norm_before false)");
        if (P != E)
            info_.notes.push_back("word embeddings " + std::to_string(P) + " wide, projected to " + std::to_string(E));
    }

protected:
    std::shared_ptr<const Trace> runForward(const std::vector<std::int64_t>& ids,
                                            const RunOptions& options) const override {
        checkIds(ids, cfg_.vocab, cfg_.positions);
        c10::InferenceMode guard;
        const std::int64_t n = static_cast<std::int64_t>(ids.size()), E = cfg_.hidden, H = cfg_.heads, d = E / H;
        requireForwardMemory({cfg_.layers, H, H, d, E, cfg_.inner, n, n, computeElementSize(embed_)}, device_);

        auto impl = newTrace(ids);
        BlockCapture capture;
        MaskSpec mask;
        mask.causal = true;
        // OPTAttention multiplies q_proj's output by the scale and then takes q·k unscaled; the
        // captured q is that scaled q, so the layer's logits are plain q·k.
        const double scaling = 1.0 / std::sqrt(static_cast<double>(d));
        ScoreSpec score;
        score.scale = 1.0;
        auto norm = [&](const at::Tensor& x, const Norm& n) { return at::layer_norm(x, {E}, n.weight, n.bias, 1e-5); };

        at::Tensor x = gatherRows(embed_, ids, device_);
        if (projectIn_.defined()) x = at::mm(x, projectIn_.t());
        x = x + positions_.narrow(0, 2, n);
        StreamPass pass(stream_, options.progress);
        for (int l = 0; l < cfg_.layers; ++l) {
            pass.layer(l);
            const OptLayer& L = layers_[l];
            at::Tensor h = cfg_.preNorm ? norm(x, L.attnNorm) : x;
            at::Tensor q = splitHeads(L.q(h) * scaling, H, d), k = splitHeads(L.k(h), H, d),
                       v = splitHeads(L.v(h), H, d);
            x = x + L.o(mergeHeads(attendDot(q, k, v, mask, score, layerRun(options, "self", l))));
            if (!cfg_.preNorm) x = norm(x, L.attnNorm);
            h = cfg_.preNorm ? norm(x, L.mlpNorm) : x;
            x = x + L.fc2(activate(cfg_.activation, L.fc1(h)));
            if (!cfg_.preNorm) x = norm(x, L.mlpNorm);
            capture.layers.push_back(dotCapture(q, k, score, mask));
            reportProgress(options.progress, l + 1, cfg_.layers);
        }
        at::Tensor last = x.narrow(0, n - 1, 1);
        if (cfg_.finalNorm) last = norm(last, finalNorm_);
        if (projectOut_.defined()) last = at::mm(last, projectOut_.t());
        impl->nextTokenLogits = nextLogits(last, head_);
        impl->infos.push_back(selfBlock(cfg_.layers, cfg_.heads, cfg_.heads, true, impl->displayTokens));
        impl->blocks.push_back(std::move(capture));
        return std::make_shared<const Trace>(std::move(impl));
    }

private:
    at::Tensor embed_, positions_, projectIn_, projectOut_, head_;
    Norm finalNorm_;
    std::vector<OptLayer> layers_;
};

}  // namespace

std::shared_ptr<const Model> loadOpt(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
                                     const LoadOptions& options) {
    return std::make_shared<const OptModel>(folder, config, device, options);
}

}  // namespace attnscope
