// GPT-J (model_type "gptj"): one LayerNorm ln_1 feeds attention and the MLP in parallel,
// x + attn(ln_1(x)) + mlp(ln_1(x)); q/k/v/out projections without biases; rotary positions on
// the first rotary_dim dims of each head with interleaved pairs (2i, 2i+1) and base 10000 fixed
// in the model (the config has no theta); lm_head with a bias. Hugging Face computes q·k in
// float32 whatever the weights' dtype. Weights are nn.Linear [out, in] under "transformer.".
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

struct GptjConfig {
    int vocab = 0, hidden = 0, inner = 0, layers = 0, heads = 0, headDim = 0, positions = 0;
    double eps = 1e-5;
    std::string activation;
    bool tied = false;
    RopeSpec rope;
};

GptjConfig parseGptjConfig(const JsonConfig& c) {
    GptjConfig g;
    g.vocab = c.positiveInt("vocab_size");
    g.positions = c.positiveInt("n_positions");
    g.hidden = c.positiveInt("n_embd");
    g.layers = c.positiveInt("n_layer");
    g.heads = c.positiveInt("n_head");
    g.inner = c.optionalPositiveInt("n_inner").value_or(4 * g.hidden);
    g.eps = c.positiveNumber("layer_norm_epsilon", 1e-5);
    g.activation = c.string("activation_function", "gelu_new");
    requireActivation(c, "activation_function", g.activation);
    g.tied = c.boolean("tie_word_embeddings", false);
    if (g.hidden % g.heads != 0)
        c.fail("n_embd",
               "(" + std::to_string(g.hidden) + ") must be divisible by n_head (" + std::to_string(g.heads) + ")");
    g.headDim = g.hidden / g.heads;
    // rotary_dim: 64 when absent; null rotates whole heads (Hugging Face's only working case of
    // null is a single head, where the two agree).
    int rotary = 64;
    if (c.json().contains("rotary_dim")) rotary = c.has("rotary_dim") ? c.positiveInt("rotary_dim") : g.headDim;
    if (rotary > g.headDim || rotary % 2 != 0)
        c.fail("rotary_dim", "(" + std::to_string(rotary) + ") must be even and at most the head dim (" +
                                     std::to_string(g.headDim) + ")");
    // GPT-J's frequencies ignore any rope keys of the config: theta 10000, no scaling.
    g.rope = readRope(JsonConfig(nlohmann::json::object(), c.file()), rotary, /*interleaved=*/true);
    return g;
}

struct GptjLayer {
    Norm ln1;
    Linear q, k, v, out, fcIn, fcOut;
};

class GptjModel final : public TextFamilyModel<GptjConfig> {
public:
    GptjModel(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
              const LoadOptions& options)
        : TextFamilyModel(parseGptjConfig(config), folder, device) {
        c10::InferenceMode guard;
        WeightStore w(folder, device);
        stream_ = planWeights(w, options);
        w.setPrefix("transformer.");
        const std::int64_t E = cfg_.hidden, I = cfg_.inner;
        const long long total = 2 + cfg_.layers;
        auto step = [&](long long done) { reportProgress(options.progress, done, total); };
        wte_ = w.rows("wte.weight", {cfg_.vocab, E});
        step(1);
        for (int l = 0; l < cfg_.layers; ++l) {
            const std::string p = "h." + std::to_string(l) + ".";
            GptjLayer L;
            L.ln1 = loadNorm(w, p + "ln_1", E);
            L.q = w.linear(p + "attn.q_proj", E, E, false);
            L.k = w.linear(p + "attn.k_proj", E, E, false);
            L.v = w.linear(p + "attn.v_proj", E, E, false);
            L.out = w.linear(p + "attn.out_proj", E, E, false);
            L.fcIn = w.linear(p + "mlp.fc_in", I, E);
            L.fcOut = w.linear(p + "mlp.fc_out", E, I);
            layers_.push_back(std::move(L));
            step(2 + l);
        }
        lnf_ = loadNorm(w, "ln_f", E);
        head_.weight = cfg_.tied ? wte_ : w.rows("lm_head.weight", {cfg_.vocab, E});
        head_.bias = w.get("lm_head.bias", {cfg_.vocab});
        step(total);

        info_ = familyInfo("gptj", folder, w, device, cfg_.layers, cfg_.heads, cfg_.heads, cfg_.headDim, cfg_.hidden);
        info_.vocabSize = cfg_.vocab;
        info_.maxPositions = cfg_.positions;
        info_.notes = {rotaryNote(cfg_.rope.rotaryDim, cfg_.headDim, true), "parallel attention and MLP"};
    }

protected:
    std::shared_ptr<const Trace> runForward(const std::vector<std::int64_t>& ids,
                                            const RunOptions& options) const override {
        checkIds(ids, cfg_.vocab, cfg_.positions);
        c10::InferenceMode guard;
        const std::int64_t n = static_cast<std::int64_t>(ids.size()), H = cfg_.heads, d = cfg_.headDim;
        requireForwardMemory({cfg_.layers, H, H, d, cfg_.hidden, cfg_.inner, n, n, 4}, device_);
        auto impl = newTrace(ids);
        BlockCapture capture;
        MaskSpec mask;
        mask.causal = true;
        ScoreSpec score;
        score.scale = 1.0 / std::sqrt(static_cast<double>(d));
        const RopeTables rope = ropeTables(cfg_.rope, n, device_);

        at::Tensor x = gatherRows(wte_, ids, device_);
        StreamPass pass(stream_, options.progress);
        for (int l = 0; l < cfg_.layers; ++l) {
            pass.layer(l);
            const GptjLayer& L = layers_[l];
            const at::Tensor h = layerNorm(x, L.ln1, cfg_.eps);
            // q and k rotate and meet in float32 (Hugging Face's float32 sin/cos promote them).
            auto rotated = [&](const Linear& proj) {
                return applyRope(splitHeads(proj(h), H, d).to(at::kFloat), rope);
            };
            at::Tensor q = rotated(L.q), k = rotated(L.k), v = splitHeads(L.v(h), H, d);
            at::Tensor attn = L.out(mergeHeads(attendDot(q, k, v, mask, score, layerRun(options, "self", l))));
            x = x + attn + L.fcOut(activate(cfg_.activation, L.fcIn(h)));
            capture.layers.push_back(dotCapture(q, k, score, mask));
            reportProgress(options.progress, l + 1, cfg_.layers);
        }
        impl->nextTokenLogits = nextLogitsBiased(layerNorm(x.narrow(0, n - 1, 1), lnf_, cfg_.eps), head_);
        impl->infos.push_back(selfBlock(cfg_.layers, cfg_.heads, cfg_.heads, true, impl->displayTokens));
        impl->blocks.push_back(std::move(capture));
        return std::make_shared<const Trace>(std::move(impl));
    }

private:
    at::Tensor wte_;
    Linear head_;
    Norm lnf_;
    std::vector<GptjLayer> layers_;
};

}  // namespace

std::shared_ptr<const Model> loadGptj(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
                                      const LoadOptions& options) {
    return std::make_shared<const GptjModel>(folder, config, device, options);
}

}  // namespace attnscope
