// SigLIP (model_type "siglip"; Hugging Face's SiglipModel, modeling_siglip.py): two towers and
// their similarity.
//   vision: patch convolution with bias, learned positions, no [CLS]; pre-LN encoder layers,
//     post_layernorm, then the MAP head: a learned probe attends over the patches
//     (nn.MultiheadAttention: in_proj q, k, v, out_proj), its output x plus the MLP of
//     layernorm(x); pooled = that one row. The pooled output is the image embedding.
//   text: token and position embeddings, the same layers without a mask, final_layer_norm, the
//     last token's row through `head` (a linear with bias). The text is used as given: no padding
//     to 64 unless the caller pads (the CLI's --pad-text-to N, with text_config.pad_token_id).
//   logit = exp(logit_scale) · cosine + logit_bias.
// The Trace has the blocks "vision" (the patches rRcC), "probe" (one layer, one query row
// "[PROBE]" over the patches) and "text", and the similarity with the patch contributions
// through the probe (attention/image_text.h).
#include "families.h"

#include "attnscope/runtime/error.h"
#include "family_common.h"
#include "image_text.h"
#include "io/image_preprocess.h"
#include "io/weights.h"

#include <c10/core/InferenceMode.h>

#include <cmath>

namespace attnscope {

namespace {

// SiglipConfig with its SiglipTextConfig and SiglipVisionConfig defaults (configuration_siglip.py).
struct SiglipConfig : ImageTextSizes {
    SiglipConfig()
        : ImageTextSizes{{768, 12, 12, 3072, 1e-6, "gelu_pytorch_tanh"},
                         {768, 12, 12, 3072, 1e-6, "gelu_pytorch_tanh"},
                         32000,
                         64,
                         224,
                         16} {}
    std::int64_t pad = 1;
    int projection = 768;
};

SiglipConfig readSiglipConfig(const JsonConfig& c) {
    SiglipConfig k;
    const JsonConfig text = subConfig(c, "text_config"), vision = subConfig(c, "vision_config");
    readImageTextSizes(text, vision, k);
    k.pad = configTokenId(text, "pad_token_id", k.pad).value_or(k.pad);
    k.projection = text.has("projection_size") ? text.positiveInt("projection_size", 1 << 20) : k.text.hidden;
    if (!vision.boolean("vision_use_head", true))
        vision.fail("vision_use_head", "false is not supported (SiglipModel's image embedding is the MAP head's)");
    if (k.projection != k.vision.hidden)
        text.fail("projection_size", "(" + std::to_string(k.projection) + ") must equal vision_config's hidden_size (" +
                                             std::to_string(k.vision.hidden) + "): the two embeddings are compared");
    return k;
}

// SiglipMultiheadAttentionPoolingHead.
struct MapHead {
    at::Tensor probe;  // [1, E]
    AttentionWeights attention;
    Norm norm;
    Linear inner, out;
};

class SiglipModel final : public ImageTextModel<SiglipConfig> {
public:
    SiglipModel(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
                const LoadOptions& options)
        : ImageTextModel(readSiglipConfig(config), folder, device, "siglip", "Siglip") {
        c10::InferenceMode guard;
        WeightStore w(folder, device);
        w.requireMemory(options.memoryLimitBytes);
        const std::int64_t E = cfg_.vision.hidden, T = cfg_.text.hidden, p = cfg_.patch, g = cfg_.imageSize / p;
        long long done = 0;
        const auto step = [&] { reportProgress(options.progress, ++done, cfg_.vision.layers + cfg_.text.layers + 2); };
        patchW_ = w.get("vision_model.embeddings.patch_embedding.weight", {E, 3, p, p});
        patchB_ = w.get("vision_model.embeddings.patch_embedding.bias", {E});
        imagePositions_ = w.get("vision_model.embeddings.position_embedding.weight", {g * g, E});
        vision_ = loadTower(w, cfg_.vision, "vision_model.encoder.layers.", step);
        postNorm_ = loadNorm(w, "vision_model.post_layernorm", E);
        loadHead(w);
        step();
        textTower_ = loadTextTower(w, cfg_, step);
        textHead_ = w.linear("text_model.head", cfg_.projection, T);
        logitScale_ = std::exp(loadScalar(w, "logit_scale"));
        logitBias_ = loadScalar(w, "logit_bias");
        step();
        describe(folder, w);
    }

protected:
    void runTowers(const at::Tensor& pixels, const TextInput& text, const RunOptions& options,
                   Trace::Impl& impl) const override {
        const std::vector<std::string> patches = imageTokenLabels(info_);
        // Vision: the layers, post_layernorm, the MAP head's probe over the patches.
        const at::Tensor hidden = layerNorm(vision_.run(embedImage(pixels), {}, "vision", patches, options, impl),
                                            postNorm_, cfg_.vision.eps);
        const std::int64_t H = cfg_.vision.heads, E = cfg_.vision.hidden;
        ScoreSpec score;
        score.scale = 1.0 / std::sqrt(static_cast<double>(E / H));
        BlockCapture probe;
        const at::Tensor pooledAttention = attentionBlock(head_.attention, head_.probe, hidden, H, E / H, score, {},
                                                          layerRun(options, "probe", 0), probe);
        const at::Tensor imageEmb = pooledAttention + mlp(pooledAttention);
        impl.infos.push_back(
                blockInfo("probe", 1, static_cast<int>(H), static_cast<int>(H), false, {"[PROBE]"}, patches));
        impl.blocks.push_back(std::move(probe));
        // Text: no mask, final_layer_norm, the last token, the head.
        const at::Tensor words = textTower_.run(text.ids, {}, impl.displayTokens, options, impl);
        const at::Tensor textEmb = textHead_(words.narrow(0, words.size(0) - 1, 1));
        scoreSimilarity(impl.imageText, imageEmb, textEmb, logitScale_, logitBias_);
        decompose(impl.imageText, hidden, textEmb, options, patches);
    }

private:
    void loadHead(WeightStore& w) {
        const std::int64_t E = cfg_.vision.hidden, I = cfg_.vision.inner;
        const std::string p = "vision_model.head.";
        head_.probe = w.get(p + "probe", {1, 1, E})[0];
        const at::Tensor in = w.get(p + "attention.in_proj_weight", {3 * E, E});
        const at::Tensor bias = w.get(p + "attention.in_proj_bias", {3 * E});
        const auto part = [&](std::int64_t i) { return Linear{in.narrow(0, i * E, E), bias.narrow(0, i * E, E)}; };
        head_.attention = {part(0), part(1), part(2), w.linear(p + "attention.out_proj", E, E)};
        head_.norm = loadNorm(w, p + "layernorm", E);
        head_.inner = w.linear(p + "mlp.fc1", I, E);
        head_.out = w.linear(p + "mlp.fc2", E, I);
    }

    // The MAP head's residual branch: mlp(layernorm(x)).
    at::Tensor mlp(const at::Tensor& x) const {
        return head_.out(activate(cfg_.vision.activation, head_.inner(layerNorm(x, head_.norm, cfg_.vision.eps))));
    }

    void describe(const std::filesystem::path& folder, const WeightStore& w) {
        const TowerConfig& v = cfg_.vision;
        const TowerConfig& t = cfg_.text;
        info_ = familyInfo("siglip", folder, w, device_, v.layers, v.heads, v.heads, v.hidden / v.heads, v.hidden);
        info_.imageInput = info_.imageText = true;
        info_.imageSize = cfg_.imageSize;
        info_.patchSize = cfg_.patch;
        info_.vocabSize = static_cast<int>(cfg_.vocab);
        info_.maxPositions = cfg_.positions;
        info_.padTokenId = cfg_.pad;
        info_.notes = {"two towers: blocks vision, probe (the MAP head) and text",
                       "text: " + std::to_string(t.layers) + " layers, " + std::to_string(t.heads) + " heads, width " +
                               std::to_string(t.hidden) + ", no mask, pooled at the last token",
                       "logit scale " + std::to_string(logitScale_) + ", logit bias " + std::to_string(logitBias_)};
    }

    // Preprocessed pixels [3, S, S] -> the patches row by row with their positions.
    at::Tensor embedImage(at::Tensor pixels) const {
        pixels = pixels.to(device_, patchW_.scalar_type()).unsqueeze(0);
        const std::int64_t p = cfg_.patch;
        return at::conv2d(pixels, patchW_, patchB_, {p, p}).flatten(2)[0].t() + imagePositions_;
    }

    // The patch contributions (attention/image_text.h) through the probe's attention, recomputed
    // in double from what it read; the image embedding is the MAP output itself.
    void decompose(ImageTextScore& s, const at::Tensor& hidden, const at::Tensor& text, const RunOptions& options,
                   const std::vector<std::string>& patches) const {
        const std::int64_t H = cfg_.vision.heads;
        const at::Tensor pieces =
                attentionPieces(head_.attention, head_.probe, hidden, H, layerRun(options, "probe", 0));
        const Linear o = cpuDouble(head_.attention.o);
        const at::Tensor a = pieces.sum(at::IntArrayRef{0, 1}) + o.bias;
        const Norm norm = cpuDouble(head_.norm);
        const at::Tensor branch = cpuDouble(head_.out)(
                activate(cfg_.vision.activation, cpuDouble(head_.inner)(layerNorm(a, norm, cfg_.vision.eps))));
        const at::Tensor t = cpuDouble(text).reshape({-1});
        const at::Tensor direction = t / t.norm() * (s.logitScale / s.imageNorm);
        const at::Tensor c = at::matmul(pieces, direction).contiguous();  // [H, patches]
        s.block = "probe";
        s.layer = 0;
        s.heads = static_cast<int>(H);
        s.positions = patches;
        s.contributions.assign(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
        s.remainderParts = {{"out_bias", o.bias.dot(direction).item<double>()},
                            {"mlp", branch.dot(direction).item<double>()},
                            {"logit_bias", s.logitBias}};
    }

    at::Tensor patchW_, patchB_, imagePositions_;
    Norm postNorm_;
    MapHead head_;
    Linear textHead_;
    Tower vision_;
    TextTower textTower_;
    double logitScale_ = 1, logitBias_ = 0;
};

}  // namespace

std::shared_ptr<const Model> loadSiglip(const std::filesystem::path& folder, const JsonConfig& config,
                                        c10::Device device, const LoadOptions& options) {
    return std::make_shared<const SiglipModel>(folder, config, device, options);
}

}  // namespace attnscope
