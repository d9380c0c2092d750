// CLIP (model_type "clip"; Hugging Face's CLIPModel, modeling_clip.py): two towers and their
// similarity.
//   vision: patch convolution without bias, the class embedding first, learned positions,
//     pre_layrnorm, pre-LN encoder layers (hidden_act, quick_gelu by default), post_layernorm on
//     the final [CLS] state, visual_projection (no bias).
//   text: token and position embeddings, the same layers under a causal mask, final_layer_norm,
//     pooled at the end token (text_config.eos_token_id == 2, the legacy configs: the largest id's
//     position; else the first eos_token_id), text_projection (no bias).
//   logit = exp(logit_scale) · cosine of the two embeddings.
// The Trace has the blocks "vision" ([CLS] and the patches rRcC) and "text" (causal), and the
// similarity with the patch contributions (attention/image_text.h).
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

// CLIPConfig with its CLIPTextConfig and CLIPVisionConfig defaults (configuration_clip.py).
struct ClipConfig : ImageTextSizes {
    ClipConfig()
        : ImageTextSizes{{512, 12, 8, 2048, 1e-5, "quick_gelu"},
                         {768, 12, 12, 3072, 1e-5, "quick_gelu"},
                         49408,
                         77,
                         224,
                         32} {}
    std::int64_t eos = 49407;
    int projection = 512;
};

ClipConfig readClipConfig(const JsonConfig& c) {
    ClipConfig k;
    const JsonConfig text = subConfig(c, "text_config"), vision = subConfig(c, "vision_config");
    readImageTextSizes(text, vision, k);
    k.eos = configTokenId(text, "eos_token_id", k.eos).value_or(k.eos);
    if (c.has("projection_dim")) k.projection = c.positiveInt("projection_dim", 1 << 20);
    return k;
}

class ClipModel final : public ImageTextModel<ClipConfig> {
public:
    ClipModel(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
              const LoadOptions& options)
        : ImageTextModel(readClipConfig(config), folder, device, "clip", "CLIP") {
        c10::InferenceMode guard;
        WeightStore w(folder, device);
        w.requireMemory(options.memoryLimitBytes);
        const std::int64_t E = cfg_.vision.hidden, T = cfg_.text.hidden, P = cfg_.projection, p = cfg_.patch;
        const std::int64_t g = cfg_.imageSize / p;
        long long done = 0;
        const auto step = [&] { reportProgress(options.progress, ++done, cfg_.vision.layers + cfg_.text.layers + 2); };
        classEmbedding_ = w.get("vision_model.embeddings.class_embedding", {E});
        patchW_ = w.get("vision_model.embeddings.patch_embedding.weight", {E, 3, p, p});
        imagePositions_ = w.get("vision_model.embeddings.position_embedding.weight", {g * g + 1, E});
        preNorm_ = loadNorm(w, "vision_model.pre_layrnorm", E);
        vision_ = loadTower(w, cfg_.vision, "vision_model.encoder.layers.", step);
        postNorm_ = loadNorm(w, "vision_model.post_layernorm", E);
        visualProjection_ = w.get("visual_projection.weight", {P, E});
        step();
        textTower_ = loadTextTower(w, cfg_, step);
        textProjection_ = w.get("text_projection.weight", {P, T});
        logitScale_ = std::exp(loadScalar(w, "logit_scale"));
        step();
        describe(folder, w);
    }

protected:
    void runTowers(const at::Tensor& pixels, const TextInput& text, const RunOptions& options,
                   Trace::Impl& impl) const override {
        // Vision: the [CLS] row of the last states, post_layernorm, the projection.
        at::Tensor lastInput;
        const at::Tensor states = vision_.run(layerNorm(embedImage(pixels), preNorm_, cfg_.vision.eps), {}, "vision",
                                              imageTokenLabels(info_), options, impl, &lastInput);
        const at::Tensor cls = states.narrow(0, 0, 1);
        const at::Tensor imageEmb = at::linear(layerNorm(cls, postNorm_, cfg_.vision.eps), visualProjection_);
        // Text: causal, final_layer_norm, the end token's row, the projection.
        MaskSpec causal;
        causal.causal = true;
        const at::Tensor words = textTower_.run(text.ids, causal, impl.displayTokens, options, impl);
        const at::Tensor textEmb = at::linear(words.narrow(0, endPosition(text.ids), 1), textProjection_);
        scoreSimilarity(impl.imageText, imageEmb, textEmb, logitScale_, 0.0);
        decompose(impl.imageText, lastInput, cls, textEmb, options);
    }

private:
    // CLIPTextTransformer's pooled row: legacy configs (eos_token_id 2) take the largest id's
    // first position, the others the first eos_token_id (position 0 when there is none, as argmax
    // over all-false rows gives).
    std::int64_t endPosition(const std::vector<std::int64_t>& ids) const {
        std::size_t at = 0;
        for (std::size_t i = 0; i < ids.size(); ++i) {
            if (cfg_.eos == 2 ? ids[i] > ids[at] : ids[i] == cfg_.eos) at = i;
            if (cfg_.eos != 2 && ids[i] == cfg_.eos) break;
        }
        return static_cast<std::int64_t>(at);
    }

    void describe(const std::filesystem::path& folder, const WeightStore& w) {
        const TowerConfig& v = cfg_.vision;
        const TowerConfig& t = cfg_.text;
        info_ = familyInfo("clip", folder, w, device_, v.layers, v.heads, v.heads, v.hidden / v.heads, v.hidden);
        info_.imageInput = info_.imageText = true;
        info_.imageSize = cfg_.imageSize;
        info_.patchSize = cfg_.patch;
        info_.imageSpecialTokens = {"[CLS]"};
        info_.vocabSize = static_cast<int>(cfg_.vocab);
        info_.maxPositions = cfg_.positions;
        info_.notes = {"two towers: blocks vision and text",
                       "text: " + std::to_string(t.layers) + " layers, " + std::to_string(t.heads) + " heads, width " +
                               std::to_string(t.hidden) + ", causal, pooled at " +
                               (cfg_.eos == 2 ? std::string("the largest id (legacy eos_token_id 2)")
                                              : "the first end token " + std::to_string(cfg_.eos)),
                       "projection " + std::to_string(cfg_.projection) + ", logit scale " +
                               std::to_string(logitScale_)};
    }

    // Preprocessed pixels [3, S, S] -> [CLS] and the patches row by row, with their positions.
    at::Tensor embedImage(at::Tensor pixels) const {
        pixels = pixels.to(device_, patchW_.scalar_type()).unsqueeze(0);
        const std::int64_t p = cfg_.patch;
        const at::Tensor patches = at::conv2d(pixels, patchW_, {}, {p, p}).flatten(2)[0].t();
        return at::cat({classEmbedding_.unsqueeze(0), patches}, 0) + imagePositions_;
    }

    // The patch contributions (attention/image_text.h): the last vision layer recomputed in double
    // from its input at [CLS], post_layernorm's centring and scale 1/σ (σ frozen at the actual
    // [CLS] state's), the projection, ·t̂·s/‖u‖.
    void decompose(ImageTextScore& s, const at::Tensor& lastInput, const at::Tensor& cls, const at::Tensor& text,
                   const RunOptions& options) const {
        const StackLayer& L = vision_.layers.back();
        const int layer = cfg_.vision.layers - 1;
        const double eps = cfg_.vision.eps;
        const at::Tensor r = cpuDouble(lastInput);
        const at::Tensor h1 = layerNorm(r, cpuDouble(L.selfNorm), eps);
        const at::Tensor pieces =
                attentionPieces(L.self, h1.narrow(0, 0, 1), h1, cfg_.vision.heads, layerRun(options, "vision", layer));
        const Linear o = cpuDouble(L.self.o);
        const at::Tensor outBias = o.bias.defined() ? o.bias : at::zeros({cfg_.vision.hidden}, at::kDouble);
        const at::Tensor mid = r[0] + pieces.sum(at::IntArrayRef{0, 1}) + outBias;
        const at::Tensor mlp = cpuDouble(L.out)(
                activate(cfg_.vision.activation, cpuDouble(L.inner)(layerNorm(mid, cpuDouble(L.ffNorm), eps))));
        const at::Tensor h = cpuDouble(cls).reshape({-1});
        const double sigma = std::sqrt((h - h.mean()).pow(2).mean().item<double>() + eps);
        const Norm post = cpuDouble(postNorm_);
        const at::Tensor P = cpuDouble(visualProjection_), t = cpuDouble(text).reshape({-1});
        const double k = s.logitScale / s.imageNorm;
        const at::Tensor direction = at::matmul(P.t(), t / t.norm()) * post.weight / sigma * k;  // [E]
        const auto f = [&](const at::Tensor& v) { return at::matmul(v - v.mean(-1, true), direction); };
        const at::Tensor c = f(pieces);  // [H, n]: column 0 is [CLS]
        const std::int64_t n = c.size(1);
        s.block = "vision";
        s.layer = layer;
        s.heads = cfg_.vision.heads;
        const auto labels = imageTokenLabels(info_);
        s.positions.assign(labels.begin() + 1, labels.end());
        const at::Tensor patches = c.narrow(1, 1, n - 1).contiguous();
        s.contributions.assign(patches.data_ptr<double>(), patches.data_ptr<double>() + patches.numel());
        s.remainderParts = {{"residual", f(r[0]).item<double>()},
                            {"cls", c.select(1, 0).sum().item<double>()},
                            {"out_bias", f(outBias).item<double>()},
                            {"mlp", f(mlp).item<double>()},
                            {"norm_bias", at::matmul(P, post.bias).dot(t / t.norm()).item<double>() * k}};
    }

    at::Tensor classEmbedding_, patchW_, imagePositions_, visualProjection_, textProjection_;
    Norm preNorm_, postNorm_;
    Tower vision_;
    TextTower textTower_;
    double logitScale_ = 1;
};

}  // namespace

std::shared_ptr<const Model> loadClip(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
                                      const LoadOptions& options) {
    return std::make_shared<const ClipModel>(folder, config, device, options);
}

}  // namespace attnscope
