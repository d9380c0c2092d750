// GPT-2 (model_type "gpt2"): pre-LN decoder, learned positions, Conv1D weights stored [in, out],
// fused c_attn producing q, k, v; output embedding tied to wte unless lm_head.weight is present.
#include "attnscope/runtime/error.h"
#include "families.h"
#include "family_common.h"
#include "runtime/memory.h"
#include "io/weights.h"

#include <c10/core/InferenceMode.h>

#include <cmath>

namespace attnscope {

namespace {

struct Gpt2Config {
    int vocab = 0, positions = 0, embd = 0, heads = 0, layers = 0, inner = 0;
    double eps = 1e-5;
    std::string activation;
    bool scaleWeights = true;
    bool scaleByLayer = false;
};

Gpt2Config parseGpt2Config(const JsonConfig& c) {
    Gpt2Config g;
    g.vocab = c.positiveInt("vocab_size");
    g.positions = c.positiveInt("n_positions");
    g.embd = c.positiveInt("n_embd");
    g.heads = c.positiveInt("n_head");
    g.layers = c.positiveInt("n_layer");
    g.inner = c.optionalPositiveInt("n_inner").value_or(4 * g.embd);
    g.eps = c.positiveNumber("layer_norm_epsilon", 1e-5);
    g.activation = c.string("activation_function", "gelu_new");
    g.scaleWeights = c.boolean("scale_attn_weights", true);
    g.scaleByLayer = c.boolean("scale_attn_by_inverse_layer_idx", false);
    if (g.embd % g.heads != 0)
        c.fail("n_embd",
               "(" + std::to_string(g.embd) + ") must be divisible by n_head (" + std::to_string(g.heads) + ")");
    requireKnown(c, "activation_function", g.activation,
                 {"gelu_new", "gelu_pytorch_tanh", "gelu_fast", "gelu", "relu"});
    return g;
}

struct Gpt2Layer {
    Norm ln1, ln2;
    at::Tensor attnW, attnB, projW, projB, fcW, fcB, outW, outB;
};

class Gpt2Model final : public TextFamilyModel<Gpt2Config> {
public:
    Gpt2Model(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
              const LoadOptions& options)
        : TextFamilyModel(parseGpt2Config(config), folder, device) {
        c10::InferenceMode guard;
        WeightStore w(folder, device);
        stream_ = planWeights(w, options);
        if (w.anyNameStartsWith("transformer.")) w.setPrefix("transformer.");
        const std::int64_t E = cfg_.embd, I = cfg_.inner;
        const long long total = 4 + cfg_.layers;
        auto step = [&](long long done) { reportProgress(options.progress, done, total); };
        wte_ = w.rows("wte.weight", {cfg_.vocab, E});
        wpe_ = w.get("wpe.weight", {cfg_.positions, E});
        step(2);
        for (int l = 0; l < cfg_.layers; ++l) {
            const std::string p = "h." + std::to_string(l) + ".";
            Gpt2Layer L;
            L.ln1 = loadNorm(w, p + "ln_1", E);
            L.attnW = w.get(p + "attn.c_attn.weight", {E, 3 * E});
            L.attnB = w.get(p + "attn.c_attn.bias", {3 * E});
            L.projW = w.get(p + "attn.c_proj.weight", {E, E});
            L.projB = w.get(p + "attn.c_proj.bias", {E});
            L.ln2 = loadNorm(w, p + "ln_2", E);
            L.fcW = w.get(p + "mlp.c_fc.weight", {E, I});
            L.fcB = w.get(p + "mlp.c_fc.bias", {I});
            L.outW = w.get(p + "mlp.c_proj.weight", {I, E});
            L.outB = w.get(p + "mlp.c_proj.bias", {E});
            layers_.push_back(std::move(L));
            step(3 + l);
        }
        lnf_ = loadNorm(w, "ln_f", E);
        // An untied head is a top-level "lm_head.weight"; GPT2LMHeadModel ties it to wte otherwise.
        head_ = w.has("lm_head.weight") ? w.rows("lm_head.weight", {cfg_.vocab, E}) : wte_;
        step(total);

        info_ = familyInfo("gpt2", folder, w, device, cfg_.layers, cfg_.heads, cfg_.heads, cfg_.embd / cfg_.heads,
                           cfg_.embd);
        info_.vocabSize = cfg_.vocab;
        info_.maxPositions = cfg_.positions;
    }

protected:
    std::shared_ptr<const Trace> runForward(const std::vector<std::int64_t>& ids,
                                            const RunOptions& options) const override {
        checkIds(ids, cfg_.vocab, cfg_.positions);
        c10::InferenceMode guard;
        const std::int64_t n = static_cast<std::int64_t>(ids.size()), E = cfg_.embd, H = cfg_.heads, d = E / H;
        requireForwardMemory({cfg_.layers, H, H, d, E, cfg_.inner, n, n, computeElementSize(wte_)}, device_);

        auto impl = newTrace(ids);
        BlockCapture capture;
        MaskSpec mask;
        mask.causal = true;

        at::Tensor x = gatherRows(wte_, ids, device_) + wpe_.narrow(0, 0, n);
        StreamPass pass(stream_, options.progress);
        for (int l = 0; l < cfg_.layers; ++l) {
            pass.layer(l);
            const Gpt2Layer& L = layers_[l];
            at::Tensor h = layerNorm(x, L.ln1, cfg_.eps);
            at::Tensor qkv = at::addmm(L.attnB, h, L.attnW);  // [n, 3E]
            auto heads = [&](int part) { return splitHeads(qkv.narrow(1, part * E, E), H, d); };
            at::Tensor q = heads(0), k = heads(1), v = heads(2);
            ScoreSpec score;
            score.scale = cfg_.scaleWeights ? 1.0 / std::sqrt(static_cast<double>(d)) : 1.0;
            if (cfg_.scaleByLayer) score.scale /= static_cast<double>(l + 1);
            at::Tensor context = mergeHeads(attendDot(q, k, v, mask, score, layerRun(options, "self", l)));
            x = x + at::addmm(L.projB, context, L.projW);
            h = layerNorm(x, L.ln2, cfg_.eps);
            x = x + at::addmm(L.outB, activate(cfg_.activation, at::addmm(L.fcB, h, L.fcW)), L.outW);
            capture.layers.push_back(dotCapture(q, k, score, mask));
            reportProgress(options.progress, l + 1, cfg_.layers);
        }
        // Only the last position's logits: the next-token distribution is what the app shows,
        // and [n, vocab] logits would cost more than the rest of a small model's forward.
        impl->nextTokenLogits = nextLogits(layerNorm(x.narrow(0, n - 1, 1), lnf_, cfg_.eps), head_);
        impl->infos.push_back(selfBlock(cfg_.layers, cfg_.heads, cfg_.heads, true, impl->displayTokens));
        impl->blocks.push_back(std::move(capture));
        return std::make_shared<const Trace>(std::move(impl));
    }

private:
    at::Tensor wte_, wpe_, head_;
    Norm lnf_;
    std::vector<Gpt2Layer> layers_;
};

}  // namespace

std::shared_ptr<const Model> loadGpt2(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
                                      const LoadOptions& options) {
    return std::make_shared<const Gpt2Model>(folder, config, device, options);
}

}  // namespace attnscope
