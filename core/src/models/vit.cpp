// ViT (model_type "vit"): the image is cut into patch_size² patches (a strided convolution),
// a CLS token is prepended, learned positions added, then pre-LN encoder layers with GELU.
// ViTForImageClassification's classifier on the final CLS state gives the predicted class,
// named by config.json's id2label. Weights with or without the "vit." prefix.
#include "attnscope/runtime/error.h"
#include "io/json_util.h"
#include "families.h"
#include "family_common.h"
#include "gradient_runner.h"
#include "image_preprocess.h"
#include "layer_stack.h"
#include "runtime/memory.h"
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

class VitModel final : public Model, public GradientRunner {
public:
    VitModel(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
             const LoadOptions& options)
        : cfg_(parseVitConfig(config)), device_(device), preprocess_(readPreprocessor(folder, cfg_.imageSize)),
          spec_(scaledStack(cfg_.hidden, cfg_.heads, cfg_.inner, cfg_.eps, cfg_.activation)) {
        if (preprocess_.width != cfg_.imageSize || preprocess_.height != cfg_.imageSize)
            throw Error((folder / "preprocessor_config.json").string() + ": 'size' " +
                        std::to_string(preprocess_.width) + "×" + std::to_string(preprocess_.height) +
                        " differs from config.json's image_size " + std::to_string(cfg_.imageSize));
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
        spec_.preNorm = true;
        spec_.qkvBias = cfg_.qkvBias;
        layers_ = loadStack(w, spec_, kVitNames, "encoder.layer.", cfg_.layers, step);
        final_ = loadNorm(w, "layernorm", E);
        // ViTForImageClassification: a top-level classifier [labels, E]; ViTModel has none.
        if (const auto shape = w.shape("classifier.weight")) {
            const std::int64_t labels = shape->empty() ? 0 : shape->front();
            classifier_ = w.linear("classifier", labels, E);
            classNames_ = classNames(config, labels);
        }
        step();

        info_ = familyInfo("vit", folder, w, device, cfg_.layers, cfg_.heads, cfg_.heads, cfg_.hidden / cfg_.heads,
                           cfg_.hidden);
        info_.maxPositions = cfg_.tokens();
        info_.imageInput = true;
        info_.imageSize = cfg_.imageSize;
        info_.patchSize = cfg_.patch;
    }

    const ModelInfo& info() const override { return info_; }

    bool hasOutputToExplain() const override { return classifier_.weight.defined(); }
    std::string gradientRefusal() const override { return ""; }
    bool explainsClasses() const override { return true; }
    std::vector<std::string> classLabels() const override { return classNames_; }
    std::int64_t gradientTokens(const TextInput&, const std::optional<RgbImage>&) const override {
        return cfg_.tokens();
    }

    // The forward with autograd through the weights' aliases; outputs are the class logits.
    GradientRun runGradients(const TextInput&, const std::optional<RgbImage>& image,
                             const RunOptions& options) const override {
        if (!image) throw Error("vit model at " + info_.path.string() + " takes an image, not token ids (use --image)");
        if (!hasOutputToExplain()) throw Error("this vit model has no classification head");
        at::Tensor x;
        {
            c10::InferenceMode guard;
            x = embedPatches(preprocessImage(*image, preprocess_));
        }
        at::AutoGradMode enable(true);
        x = x.clone().requires_grad_(true);  // an ordinary tensor: autograd may not keep inference ones
        GradientRun out;
        StackPass pass;
        pass.progress = true;
        pass.alphas = &out.alphas;
        BlockCapture capture;
        x = runStack(spec_, aliasStack(layers_), x, pass, options, capture);
        const Norm final{autogradAlias(final_.weight), autogradAlias(final_.bias)};
        const Linear classifier{autogradAlias(classifier_.weight), autogradAlias(classifier_.bias)};
        out.outputs = classifier(layerNorm(x.narrow(0, 0, 1), final, cfg_.eps)).reshape({-1}).to(at::kFloat);
        return out;
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
        const std::int64_t n = cfg_.tokens(), E = cfg_.hidden, H = cfg_.heads, d = E / H, g = cfg_.grid();
        requireForwardMemory({cfg_.layers, H, H, d, E, cfg_.inner, n, n,
                              static_cast<std::int64_t>(c10::elementSize(cls_.scalar_type()))},
                             device_);
        auto impl = std::make_unique<Trace::Impl>();
        impl->tokens.push_back("[CLS]");
        for (std::int64_t r = 0; r < g; ++r)
            for (std::int64_t c = 0; c < g; ++c)
                impl->tokens.push_back("r" + std::to_string(r) + "c" + std::to_string(c));
        impl->device = device_;
        BlockCapture capture;

        at::Tensor x = embedPatches(pixels);
        StackPass pass;
        pass.progress = true;
        x = runStack(spec_, layers_, x, pass, options, capture);
        if (classifier_.weight.defined()) {
            at::Tensor cls = layerNorm(x.narrow(0, 0, 1), final_, cfg_.eps);
            at::Tensor probs = at::softmax(classifier_(cls).to(at::kFloat), -1).reshape({-1}).to(at::kCPU).contiguous();
            impl->classLabels = classNames_;
            impl->classProbabilities.assign(probs.data_ptr<float>(), probs.data_ptr<float>() + probs.numel());
        } else {  // ViTModel without a head: last_hidden_state (after the final LayerNorm) is the output
            recordFinalHidden(*impl, layerNorm(x, final_, cfg_.eps));
        }
        impl->infos.push_back(
                blockInfo("self", cfg_.layers, cfg_.heads, cfg_.heads, false, impl->tokens, impl->tokens));
        impl->blocks.push_back(std::move(capture));
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
    StackSpec spec_;
    std::vector<StackLayer> layers_;
    Norm final_;
    Linear classifier_;
    std::vector<std::string> classNames_;
};

}  // namespace

std::shared_ptr<const Model> loadVit(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
                                     const LoadOptions& options) {
    return std::make_shared<const VitModel>(folder, config, device, options);
}

}  // namespace attnscope
