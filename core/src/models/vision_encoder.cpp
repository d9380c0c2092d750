#include "vision_encoder.h"

#include "attnscope/runtime/error.h"
#include "family_common.h"
#include "io/weights.h"

#include <c10/core/InferenceMode.h>

namespace attnscope {

VisionSizes readVisionSizes(const JsonConfig& c, VisionSizes d, bool readInner) {
    auto integer = [&](const char* key, int fallback, int max = 1 << 30) {
        return c.has(key) ? c.positiveInt(key, max) : fallback;
    };
    VisionSizes g;
    g.hidden = integer("hidden_size", d.hidden);
    g.layers = integer("num_hidden_layers", d.layers);
    g.heads = integer("num_attention_heads", d.heads);
    g.inner = readInner ? integer("intermediate_size", d.inner) : d.inner;
    g.imageSize = integer("image_size", d.imageSize, 1 << 14);
    g.patch = integer("patch_size", d.patch, 1 << 14);
    g.eps = c.positiveNumber("layer_norm_eps", d.eps);
    g.activation = c.string("hidden_act", d.activation);
    g.qkvBias = c.boolean("qkv_bias", d.qkvBias);
    if (c.has("num_channels") && c.positiveInt("num_channels") != 3) c.fail("num_channels", "must be 3 (RGB)");
    if (g.patch > g.imageSize)
        c.fail("patch_size",
               "(" + std::to_string(g.patch) + ") is larger than image_size (" + std::to_string(g.imageSize) + ")");
    if (g.hidden % g.heads != 0)
        c.fail("num_attention_heads",
               "(" + std::to_string(g.heads) + ") must divide hidden_size (" + std::to_string(g.hidden) + ")");
    requireKnown(c, "hidden_act", g.activation, {"gelu", "gelu_new", "gelu_pytorch_tanh", "relu"});
    return g;
}

namespace {

class VisionEncoder final : public Model, public EncoderStack {
public:
    VisionEncoder(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
                  const LoadOptions& options, VisionSpec spec)
        : v_(std::move(spec)), device_(device), preprocess_(readPreprocessor(folder, v_.processor)) {
        const VisionSizes& z = v_.sizes;
        inputSize_ = checkInputSize(folder);
        spec_ = scaledStack(z.hidden, z.heads, z.inner, z.eps, z.activation);
        spec_.preNorm = true;
        spec_.qkvBias = z.qkvBias;
        c10::InferenceMode guard;
        WeightStore w(folder, device);
        w.requireMemory(options.memoryLimitBytes);
        for (const std::string& p : v_.prefixes)
            if (w.anyNameStartsWith(p)) {
                w.setPrefix(p);
                break;
            }
        long long done = 0;
        auto step = [&] { reportProgress(options.progress, ++done, 2 + z.layers); };
        loadEmbeddings(w);
        step();
        layers_ = loadStack(w, spec_, v_.names, "encoder.layer.", z.layers, step);
        if (v_.loadExtras) v_.loadExtras(w, layers_, sharedBias_);
        if (!v_.finalNorm.empty()) final_ = loadNorm(w, v_.finalNorm, z.hidden);
        loadClassifier(w, config);
        step();
        describe(folder, w);
    }

    const ModelInfo& info() const override { return info_; }

    std::int64_t gradientTokens(const TextInput&, const std::optional<RgbImage>&) const override {
        return static_cast<std::int64_t>(imageTokenLabels(info_).size());
    }

    at::Tensor gradientInput(const TextInput&, const std::optional<RgbImage>& image, StackPass& pass) const override {
        if (!image) throw Error(takesImage());
        requireHead(v_.family);
        pass.bias = autogradAlias(sharedBias_);
        c10::InferenceMode guard;
        return embed(preprocessImage(*image, preprocess_));
    }

    std::vector<std::string> tokenLabels(const std::vector<std::int64_t>&) const override {
        throw Error(v_.family + " model at " + info_.path.string() + " takes an image, not token ids");
    }

protected:
    std::shared_ptr<const Trace> runForward(const std::vector<std::int64_t>&, const RunOptions&) const override {
        throw Error(takesImage());
    }

    std::shared_ptr<const Trace> runForwardImage(const RgbImage& image, const RunOptions& options) const override {
        at::Tensor pixels = preprocessImage(image, preprocess_);
        c10::InferenceMode guard;
        auto impl = std::make_unique<Trace::Impl>();
        impl->tokens = imageTokenLabels(info_);
        impl->device = device_;
        StackPass pass;
        pass.bias = sharedBias_;
        runInto(*impl, embed(pixels), pass, options, impl->tokens);
        return std::make_shared<const Trace>(std::move(impl));
    }

private:
    std::string takesImage() const {
        return v_.family + " model at " + info_.path.string() + " takes an image, not token ids (use --image)";
    }

    int storedGrid() const { return v_.sizes.imageSize / v_.sizes.patch; }

    // The preprocessor's output side (fixed and square); ViT and DeiT need their image_size.
    int checkInputSize(const std::filesystem::path& folder) const {
        const std::string file = (folder / "preprocessor_config.json").string();
        const char* key = preprocess_.crop ? "crop_size" : "size";
        const auto [w, h] = fixedOutputSize(preprocess_);
        if (w == 0)
            throw Error(file + ": 'size' is a shortest edge without a center crop, so the input size would vary "
                               "with the image; give 'crop_size' or a fixed 'size'");
        const std::string given = file + ": '" + key + "' " + std::to_string(w) + "×" + std::to_string(h);
        if (w != h) throw Error(given + " is not square (not supported)");
        if (v_.positions == PositionFit::Exact && w != v_.sizes.imageSize)
            throw Error(given + " differs from config.json's image_size " + std::to_string(v_.sizes.imageSize));
        if (w < v_.sizes.patch)
            throw Error(given + " is smaller than one patch (" + std::to_string(v_.sizes.patch) + ")");
        return w;
    }

    void loadEmbeddings(WeightStore& w) {
        const std::int64_t E = v_.sizes.hidden, p = v_.sizes.patch, g = storedGrid();
        const auto lead = static_cast<std::int64_t>(v_.leading.size());
        for (const auto& [label, name] : v_.leading) leading_.push_back(w.get(name, {1, 1, E})[0]);
        if (v_.registers > 0) registers_ = w.get("embeddings.register_tokens", {1, v_.registers, E})[0];
        patchW_ = w.get("embeddings.patch_embeddings.projection.weight", {E, 3, p, p});
        patchB_ = w.get("embeddings.patch_embeddings.projection.bias", {E});
        if (!v_.absolutePositions) return;
        const at::Tensor positions = w.get("embeddings.position_embeddings", {1, lead + g * g, E})[0];
        leadingPositions_ = positions.narrow(0, 0, lead);
        patchPositions_ = positions.narrow(0, lead, g * g);
        const int rows = inputSize_ / v_.sizes.patch;
        if (rows != g)
            patchPositions_ = interpolatePositions(patchPositions_.reshape({g, g, E}), rows, rows,
                                                   v_.positions == PositionFit::BicubicAntialias)
                                      .reshape({rows * rows, E});
    }

    void loadClassifier(WeightStore& w, const JsonConfig& config) {
        if (v_.loadClassifier) {
            v_.loadClassifier(w, head_);
        } else {
            head_.out = optionalClassifier(w, "classifier", v_.sizes.hidden);
        }
        if (head_.out.weight.defined()) classNames_ = classNames(config, head_.out.weight.size(0));
    }

    void describe(const std::filesystem::path& folder, const WeightStore& w) {
        const VisionSizes& z = v_.sizes;
        info_ = familyInfo(v_.family, folder, w, device_, z.layers, z.heads, z.heads, z.hidden / z.heads, z.hidden);
        info_.imageInput = true;
        info_.imageSize = inputSize_;
        info_.patchSize = z.patch;
        for (std::size_t i = 0; i < v_.leading.size(); ++i) {
            info_.imageSpecialTokens.push_back(v_.leading[i].first);
            for (int r = 0; i == 0 && r < v_.registers; ++r)
                info_.imageSpecialTokens.push_back("[REG " + std::to_string(r + 1) + "]");
        }
        info_.maxPositions = static_cast<int>(imageTokenLabels(info_).size());
        info_.notes = v_.notes;
        const int g = storedGrid(), rows = inputSize_ / z.patch;
        if (rows != g)
            info_.notes.push_back("positions interpolated " +
                                  std::string(v_.positions == PositionFit::BicubicAntialias ? "(bicubic, antialiased)"
                                                                                            : "(bicubic)") +
                                  " from " + std::to_string(g) + "×" + std::to_string(g) + " to " +
                                  std::to_string(rows) + "×" + std::to_string(rows));
    }

    // Preprocessed pixels [3, S, S] -> the embeddings: the leading tokens with their positions,
    // the registers after the first, then the patches row by row with theirs.
    at::Tensor embed(at::Tensor pixels) const {
        pixels = pixels.to(device_, patchW_.scalar_type()).unsqueeze(0);
        const std::int64_t p = v_.sizes.patch;
        const at::Tensor patches = at::conv2d(pixels, patchW_, patchB_, {p, p}).flatten(2)[0].t();
        std::vector<at::Tensor> parts;
        const bool pos = v_.absolutePositions;
        if (!leading_.empty()) parts.push_back(pos ? at::cat(leading_, 0) + leadingPositions_ : at::cat(leading_, 0));
        parts.push_back(pos ? patches + patchPositions_ : patches);
        at::Tensor x = at::cat(parts, 0);
        if (registers_.defined()) x = at::cat({x.narrow(0, 0, 1), registers_, x.narrow(0, 1, x.size(0) - 1)}, 0);
        return x;
    }

    VisionSpec v_;
    c10::Device device_;
    ImagePreprocess preprocess_;
    int inputSize_ = 0;
    ModelInfo info_;
    std::vector<at::Tensor> leading_;  // [1, E] each
    at::Tensor registers_, leadingPositions_, patchPositions_, patchW_, patchB_;
    at::Tensor sharedBias_;  // the bias every layer's self-attention adds (BEiT's shared one), or undefined
};

}  // namespace

std::shared_ptr<const Model> loadVisionEncoder(const std::filesystem::path& folder, const JsonConfig& config,
                                               c10::Device device, const LoadOptions& options, VisionSpec spec) {
    return std::make_shared<const VisionEncoder>(folder, config, device, options, std::move(spec));
}

}  // namespace attnscope
