// ViT (model_type "vit"): the image is cut into patch_size² patches (a strided convolution),
// a CLS token is prepended, learned positions added, then pre-LN encoder layers with GELU.
// ViTForImageClassification's classifier on the final CLS state gives the predicted class,
// named by config.json's id2label. Weights with or without the "vit." prefix.
#include "attnscope/runtime/error.h"
#include "io/json_util.h"
#include "families.h"
#include "family_common.h"
#include "io/image_preprocess.h"
#include "layer_stack.h"
#include "io/weights.h"

#include <c10/core/InferenceMode.h>

#include <cmath>

namespace attnscope {

namespace {

struct VitConfig {
    int hidden = 0, layers = 0, heads = 0, inner = 0, imageSize = 0, patch = 0;
    double eps = 1e-12;
    std::string activation;
    bool qkvBias = true;
    int grid() const { return imageSize / patch; }
    int tokens() const { return grid() * grid() + 1; }
};

VitConfig parseVitConfig(const JsonConfig& c) {
    VitConfig g;
    g.hidden = c.positiveInt("hidden_size");
    g.layers = c.positiveInt("num_hidden_layers");
    g.heads = c.positiveInt("num_attention_heads");
    g.inner = c.positiveInt("intermediate_size");
    g.imageSize = c.positiveInt("image_size", 1 << 14);
    g.patch = c.positiveInt("patch_size", 1 << 14);
    g.eps = c.positiveNumber("layer_norm_eps", 1e-12);
    g.activation = c.string("hidden_act", "gelu");
    g.qkvBias = c.boolean("qkv_bias", true);
    if (c.has("num_channels") && c.positiveInt("num_channels") != 3) c.fail("num_channels", "must be 3 (RGB)");
    if (g.imageSize % g.patch != 0)
        c.fail("image_size", "(" + std::to_string(g.imageSize) + ") must be a multiple of patch_size (" +
                                     std::to_string(g.patch) + ")");
    if (g.hidden % g.heads != 0)
        c.fail("num_attention_heads",
               "(" + std::to_string(g.heads) + ") must divide hidden_size (" + std::to_string(g.hidden) + ")");
    requireKnown(c, "hidden_act", g.activation, {"gelu", "gelu_new", "gelu_pytorch_tanh", "relu"});
    return g;
}

const StackNames kVitNames{"attention.",
                           {"attention.query", "attention.key", "attention.value", "output.dense"},
                           "layernorm_before",
                           "",
                           "",
                           "intermediate.dense",
                           "",
                           "output.dense",
                           "layernorm_after"};

class VitModel final : public Model, public EncoderStack {
public:
    VitModel(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
             const LoadOptions& options)
        : cfg_(parseVitConfig(config)), device_(device), preprocess_(readPreprocessor(folder, cfg_.imageSize)) {
        if (preprocess_.width != cfg_.imageSize || preprocess_.height != cfg_.imageSize)
            throw Error((folder / "preprocessor_config.json").string() + ": 'size' " +
                        std::to_string(preprocess_.width) + "×" + std::to_string(preprocess_.height) +
                        " differs from config.json's image_size " + std::to_string(cfg_.imageSize));
        spec_ = scaledStack(cfg_.hidden, cfg_.heads, cfg_.inner, cfg_.eps, cfg_.activation);
        spec_.preNorm = true;
        spec_.qkvBias = cfg_.qkvBias;
        c10::InferenceMode guard;
        WeightStore w(folder, device);
        w.requireMemory(options.memoryLimitBytes);
        if (w.anyNameStartsWith("vit.")) w.setPrefix("vit.");
        const std::int64_t E = cfg_.hidden, p = cfg_.patch;
        const long long total = 2 + cfg_.layers;
        long long done = 0;
        auto step = [&] { reportProgress(options.progress, ++done, total); };
        cls_ = w.get("embeddings.cls_token", {1, 1, E});
        positions_ = w.get("embeddings.position_embeddings", {1, cfg_.tokens(), E});
        patchW_ = w.get("embeddings.patch_embeddings.projection.weight", {E, 3, p, p});
        patchB_ = w.get("embeddings.patch_embeddings.projection.bias", {E});
        step();
        layers_ = loadStack(w, spec_, kVitNames, "encoder.layer.", cfg_.layers, step);
        final_ = loadNorm(w, "layernorm", E);
        loadHead(w, config, "", "classifier", false);  // ViTForImageClassification's; ViTModel has none
        step();

        info_ = familyInfo("vit", folder, w, device, cfg_.layers, cfg_.heads, cfg_.heads, cfg_.hidden / cfg_.heads,
                           cfg_.hidden);
        info_.maxPositions = cfg_.tokens();
        info_.imageInput = true;
        info_.imageSize = cfg_.imageSize;
        info_.patchSize = cfg_.patch;
    }

    const ModelInfo& info() const override { return info_; }

    std::int64_t gradientTokens(const TextInput&, const std::optional<RgbImage>&) const override {
        return cfg_.tokens();
    }

    GradientRun runGradients(const TextInput&, const std::optional<RgbImage>& image,
                             const RunOptions& options) const override {
        if (!image) throw Error("vit model at " + info_.path.string() + " takes an image, not token ids (use --image)");
        if (!hasOutputToExplain()) throw Error("this vit model has no classification head");
        at::Tensor x;
        {
            c10::InferenceMode guard;
            x = embedPatches(preprocessImage(*image, preprocess_));
        }
        return runWithGradients(x, {}, options);
    }

    std::vector<std::string> tokenLabels(const std::vector<std::int64_t>&) const override {
        throw Error("vit model at " + info_.path.string() + " takes an image, not token ids");
    }

protected:
    std::shared_ptr<const Trace> runForward(const std::vector<std::int64_t>&, const RunOptions&) const override {
        throw Error("vit model at " + info_.path.string() + " takes an image, not token ids (use --image)");
    }

    std::shared_ptr<const Trace> runForwardImage(const RgbImage& image, const RunOptions& options) const override {
        at::Tensor pixels = preprocessImage(image, preprocess_);
        c10::InferenceMode guard;
        auto impl = std::make_unique<Trace::Impl>();
        impl->tokens.push_back("[CLS]");
        for (int r = 0; r < cfg_.grid(); ++r)
            for (int c = 0; c < cfg_.grid(); ++c)
                impl->tokens.push_back("r" + std::to_string(r) + "c" + std::to_string(c));
        impl->device = device_;
        runInto(*impl, embedPatches(pixels), {}, options, impl->tokens);
        return std::make_shared<const Trace>(std::move(impl));
    }

private:
    // Preprocessed pixels [3, size, size] -> the embeddings [1 + g·g, E]: [CLS], then the patches in
    // row-major order (row r, column c at 1 + r·g + c), positions added.
    at::Tensor embedPatches(at::Tensor pixels) const {
        pixels = pixels.to(device_, cls_.scalar_type()).unsqueeze(0);
        at::Tensor patches = at::conv2d(pixels, patchW_, patchB_, {cfg_.patch, cfg_.patch}).flatten(2)[0].t();
        return at::cat({cls_[0], patches}, 0) + positions_[0];
    }

    VitConfig cfg_;
    c10::Device device_;
    ImagePreprocess preprocess_;
    ModelInfo info_;
    at::Tensor cls_, positions_, patchW_, patchB_;
};

}  // namespace

std::shared_ptr<const Model> loadVit(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
                                     const LoadOptions& options) {
    return std::make_shared<const VitModel>(folder, config, device, options);
}

}  // namespace attnscope
