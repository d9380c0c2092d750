// Swin Transformer (model_type "swin"; Hugging Face's SwinModel and SwinForImageClassification,
// modeling_swin.py): the image is cut into patch_size² patches (padded to a multiple, bottom and
// right), LayerNorm'ed, and run through stages of pre-LN blocks attending within windows of
// window_size² patches, every odd block's windows cyclically shifted by window_size / 2 with
// -100 between the regions the roll brings together; each block adds its own relative position
// bias. Between stages, patch merging concatenates each 2×2 neighbourhood ([0::2, 0::2],
// [1::2, 0::2], [0::2, 1::2], [1::2, 1::2]), LayerNorm'ed then reduced to twice the width. The
// final LayerNorm, the mean over the last stage's tokens, and the classifier when there is one.
//
// The Trace has one block per stage, "stage1", "stage2", ..., its layers the stage's blocks: each
// layer's map is the whole stage grid's, block-sparse (swin_windows.h): zero outside a query's
// window, with the window padding as extra keys after the tokens (attention/window_padding.h).
// The forward attends through the same description (attendDot over the grid, the windows as a
// blocked mask), so a map from the Trace is the one the model used.
#include "families.h"

#include "attnscope/runtime/error.h"
#include "family_common.h"
#include "io/image_preprocess.h"
#include "io/weights.h"
#include "runtime/memory.h"
#include "swin_windows.h"

#include <c10/core/InferenceMode.h>

#include <cmath>
#include <numeric>

namespace attnscope {

namespace {

// SwinConfig's fields and defaults (configuration_swin.py).
struct SwinConfig {
    int imageSize = 224, patch = 4, embed = 96, window = 7;
    std::vector<int> depths{2, 2, 6, 2}, heads{3, 6, 12, 24};
    double mlpRatio = 4.0, eps = 1e-5;
    bool qkvBias = true;
    std::string activation = "gelu";

    int stages() const { return static_cast<int>(depths.size()); }
    std::int64_t width(int stage) const { return static_cast<std::int64_t>(embed) << stage; }
    // SwinIntermediate's int(mlp_ratio * dim).
    std::int64_t inner(int stage) const { return static_cast<std::int64_t>(mlpRatio * width(stage)); }
};

std::vector<int> readIntList(const JsonConfig& c, const char* key, std::vector<int> fallback) {
    if (!c.has(key)) return fallback;
    const nlohmann::json& v = c.json().at(key);
    if (!v.is_array() || v.empty() || v.size() > 8) c.fail(key, "must be a list of 1 to 8 positive integers");
    std::vector<int> out;
    for (const auto& x : v) {
        if (!x.is_number_integer() || x.get<long long>() < 1 || x.get<long long>() > 4096)
            c.fail(key, "must be a list of positive integers (at most 4096), found " + v.dump());
        out.push_back(x.get<int>());
    }
    return out;
}

SwinConfig readSwinConfig(const JsonConfig& c) {
    SwinConfig s;
    auto integer = [&](const char* key, int fallback, int max) {
        return c.has(key) ? c.positiveInt(key, max) : fallback;
    };
    s.imageSize = integer("image_size", s.imageSize, 1 << 14);
    s.patch = integer("patch_size", s.patch, 1 << 14);
    s.embed = integer("embed_dim", s.embed, 1 << 16);
    s.window = integer("window_size", s.window, 1 << 10);
    s.depths = readIntList(c, "depths", s.depths);
    s.heads = readIntList(c, "num_heads", s.heads);
    s.mlpRatio = c.positiveNumber("mlp_ratio", s.mlpRatio);
    s.eps = c.positiveNumber("layer_norm_eps", s.eps);
    s.qkvBias = c.boolean("qkv_bias", s.qkvBias);
    s.activation = c.string("hidden_act", s.activation);
    requireKnown(c, "hidden_act", s.activation, {"gelu", "gelu_new", "gelu_pytorch_tanh", "relu", "silu", "swish"});
    if (c.has("num_channels") && c.positiveInt("num_channels") != 3) c.fail("num_channels", "must be 3 (RGB)");
    if (c.boolean("use_absolute_embeddings", false))
        c.fail("use_absolute_embeddings", "true is not supported (Hugging Face's SwinEmbeddings adds num_patches + 1 "
                                          "positions to num_patches patches, which does not run)");
    if (s.heads.size() != s.depths.size())
        c.fail("num_heads", "has " + std::to_string(s.heads.size()) + " entries but depths has " +
                                    std::to_string(s.depths.size()) + " (one per stage)");
    for (int i = 0; i < s.stages(); ++i)
        if (s.width(i) % s.heads[i] != 0)
            c.fail("num_heads", "entry " + std::to_string(i) + " (" + std::to_string(s.heads[i]) +
                                        ") must divide stage " + std::to_string(i + 1) + "'s width embed_dim·2^" +
                                        std::to_string(i) + " = " + std::to_string(s.width(i)));
    if (s.inner(0) < 1) c.fail("mlp_ratio", "gives an MLP narrower than one unit");
    return s;
}

struct SwinBlock {
    Norm before, after;
    AttentionWeights attention;
    at::Tensor table;  // relative_position_bias_table [(2w - 1)², H]
    Linear inner, out;
};

struct SwinStage {
    std::vector<SwinBlock> blocks;
    Norm mergeNorm;  // downsample (patch merging): norm [4C], reduction [2C, 4C] without bias; not on the last
    Linear reduction;
};

class SwinModel final : public Model {
public:
    SwinModel(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
              const LoadOptions& options)
        : cfg_(readSwinConfig(config)), device_(device) {
        ImagePreprocess defaults = processorDefaults("ViT");  // Swin's checkpoints use ViTImageProcessor
        defaults.width = defaults.height = cfg_.imageSize;
        preprocess_ = readPreprocessor(folder, defaults);
        checkInputSize(folder);
        c10::InferenceMode guard;
        WeightStore w(folder, device);
        w.requireMemory(options.memoryLimitBytes);
        if (w.anyNameStartsWith("swin.")) w.setPrefix("swin.");
        const std::int64_t E = cfg_.embed, p = cfg_.patch;
        patchW_ = w.get("embeddings.patch_embeddings.projection.weight", {E, 3, p, p});
        patchB_ = w.get("embeddings.patch_embeddings.projection.bias", {E});
        embedNorm_ = loadNorm(w, "embeddings.norm", E);
        for (int s = 0; s < cfg_.stages(); ++s) {
            stages_.push_back(loadStage(w, s));
            reportProgress(options.progress, s + 1, cfg_.stages() + 1);
        }
        const std::int64_t last = cfg_.width(cfg_.stages() - 1);
        final_ = loadNorm(w, "layernorm", last);
        if (const auto shape = w.shape("classifier.weight"); shape && shape->size() == 2) {
            head_ = w.linear("classifier", shape->front(), last);
            classNames_ = classNames(config, shape->front());
        }
        reportProgress(options.progress, cfg_.stages() + 1, cfg_.stages() + 1);
        describe(folder, w);
    }

    const ModelInfo& info() const override { return info_; }

    std::vector<std::string> tokenLabels(const std::vector<std::int64_t>&) const override { throw Error(takesImage()); }

protected:
    std::shared_ptr<const Trace> runForward(const std::vector<std::int64_t>&, const RunOptions&) const override {
        throw Error(takesImage());
    }

    std::shared_ptr<const Trace> runForwardImage(const RgbImage& image, const RunOptions& options) const override {
        const at::Tensor pixels = preprocessImage(image, preprocess_);
        c10::InferenceMode guard;
        auto impl = std::make_unique<Trace::Impl>();
        impl->device = device_;
        int rows = 0, cols = 0;
        at::Tensor x = embed(pixels, rows, cols);
        impl->tokens = swinTokenLabels(rows, cols);
        requireMemoryFor(rows, cols, x);
        const int total = std::accumulate(cfg_.depths.begin(), cfg_.depths.end(), 0);
        int done = 0;
        for (int s = 0; s < cfg_.stages(); ++s) {
            x = runStage(s, x, rows, cols, options, *impl, total, done);
            if (s + 1 < cfg_.stages()) x = mergePatches(stages_[static_cast<std::size_t>(s)], x, rows, cols);
        }
        x = layerNorm(x, final_, cfg_.eps);
        if (head_.weight.defined()) {  // SwinForImageClassification: the classifier on the mean token
            const at::Tensor logits = head_(x.mean(0, true)).to(at::kFloat);
            const at::Tensor probs = at::softmax(logits, -1).reshape({-1}).to(at::kCPU).contiguous();
            impl->classLabels = classNames_;
            impl->classProbabilities.assign(probs.data_ptr<float>(), probs.data_ptr<float>() + probs.numel());
        } else {  // SwinModel: last_hidden_state, after the final LayerNorm
            recordFinalHidden(*impl, x);
        }
        return std::make_shared<const Trace>(std::move(impl));
    }

private:
    std::string takesImage() const {
        return "swin model at " + info_.path.string() + " takes an image, not token ids (use --image)";
    }

    SwinStage loadStage(WeightStore& w, int s) {
        SwinStage stage;
        const std::int64_t C = cfg_.width(s), H = cfg_.heads[static_cast<std::size_t>(s)], I = cfg_.inner(s);
        const std::int64_t span = 2 * cfg_.window - 1;
        const std::string prefix = "encoder.layers." + std::to_string(s) + ".";
        for (int b = 0; b < cfg_.depths[static_cast<std::size_t>(s)]; ++b) {
            const std::string p = prefix + "blocks." + std::to_string(b) + ".";
            SwinBlock block;
            block.before = loadNorm(w, p + "layernorm_before", C);
            block.attention =
                    loadAttention(w, p + "attention.", {"self.query", "self.key", "self.value", "output.dense"}, C, C,
                                  cfg_.qkvBias, true);
            block.table = w.get(p + "attention.self.relative_position_bias_table", {span * span, H});
            block.after = loadNorm(w, p + "layernorm_after", C);
            block.inner = w.linear(p + "intermediate.dense", I, C);
            block.out = w.linear(p + "output.dense", C, I);
            stage.blocks.push_back(std::move(block));
        }
        if (s + 1 < cfg_.stages()) {
            stage.mergeNorm = loadNorm(w, prefix + "downsample.norm", 4 * C);
            stage.reduction = w.linear(prefix + "downsample.reduction", 2 * C, 4 * C, false);
        }
        return stage;
    }

    // The preprocessor's output (fixed, square), and every stage's grid at least one window wide:
    // Hugging Face's SwinLayer shrinks the window to a smaller grid but keeps the bias table of
    // window_size, which then fails.
    void checkInputSize(const std::filesystem::path& folder) {
        const std::filesystem::path file = folder / "preprocessor_config.json";
        const std::string where = std::filesystem::exists(file) ? file.string() + ": the input"
                                                                : (folder / "config.json").string() + ": 'image_size'";
        const auto [w, h] = fixedOutputSize(preprocess_);
        if (w == 0)
            throw Error(file.string() + ": 'size' is a shortest edge without a center crop, so the input size would "
                                        "vary with the image; give 'crop_size' or a fixed 'size'");
        if (w != h)
            throw Error(where + " " + std::to_string(w) + "×" + std::to_string(h) + " is not square (not supported)");
        inputSize_ = w;
        int grid = (w + cfg_.patch - 1) / cfg_.patch;
        for (int s = 0; s < cfg_.stages(); ++s, grid = (grid + 1) / 2)
            if (grid < cfg_.window)
                throw Error(where + " " + std::to_string(w) + "×" + std::to_string(w) + " gives stage " +
                            std::to_string(s + 1) + " a " + std::to_string(grid) + "×" + std::to_string(grid) +
                            " grid, smaller than window_size " + std::to_string(cfg_.window) +
                            " (Hugging Face's Swin fails there: its bias table is for windows of window_size)");
    }

    void describe(const std::filesystem::path& folder, const WeightStore& w) {
        const int total = std::accumulate(cfg_.depths.begin(), cfg_.depths.end(), 0);
        const int H0 = cfg_.heads.front();
        info_ = familyInfo("swin", folder, w, device_, total, H0, H0, cfg_.embed / H0,
                           static_cast<int>(cfg_.width(cfg_.stages() - 1)));
        info_.imageInput = true;
        info_.imageSize = inputSize_;
        info_.patchSize = cfg_.patch;
        int grid = (inputSize_ + cfg_.patch - 1) / cfg_.patch;
        info_.maxPositions = grid * grid;
        std::string depths, heads, padded, single;
        for (int s = 0; s < cfg_.stages(); ++s, grid = (grid + 1) / 2) {
            const std::string sep = s ? "," : "";
            depths += sep + std::to_string(cfg_.depths[static_cast<std::size_t>(s)]);
            heads += sep + std::to_string(cfg_.heads[static_cast<std::size_t>(s)]);
            const SwinWindows g = swinWindows(grid, grid, cfg_.window, true);
            if (g.padding() > 0) padded += (padded.empty() ? "" : ", ") + std::to_string(s + 1);
            if (g.shift == 0) single += (single.empty() ? "" : ", ") + std::to_string(s + 1);
        }
        info_.notes.push_back(std::to_string(cfg_.stages()) + " stages (blocks stage1..stage" +
                              std::to_string(cfg_.stages()) + "), depths " + depths + ", heads " + heads);
        info_.notes.push_back("windows " + std::to_string(cfg_.window) + "×" + std::to_string(cfg_.window) +
                              ", shifted by " + std::to_string(cfg_.window / 2) + " on odd blocks");
        if (!single.empty()) info_.notes.push_back("no shift on stage " + single + " (grid within one window)");
        if (!padded.empty())
            info_.notes.push_back("window padding on stage " + padded +
                                  ": keys [PAD rRcC] after the tokens; rows sum to < 1 over the tokens");
    }

    // Preprocessed pixels [3, S, S] -> the patch embeddings [rows·cols, E] after embeddings.norm
    // (nn.LayerNorm's default eps 1e-5); the pixels padded to a multiple of the patch.
    at::Tensor embed(at::Tensor pixels, int& rows, int& cols) const {
        pixels = pixels.to(device_, patchW_.scalar_type()).unsqueeze(0);
        const std::int64_t p = cfg_.patch, h = pixels.size(2), w = pixels.size(3);
        if (h % p != 0 || w % p != 0) pixels = at::constant_pad_nd(pixels, {0, (p - w % p) % p, 0, (p - h % p) % p});
        const at::Tensor e = at::conv2d(pixels, patchW_, patchB_, {p, p});
        rows = static_cast<int>(e.size(2));
        cols = static_cast<int>(e.size(3));
        return layerNorm(e.flatten(2)[0].t().contiguous(), embedNorm_, 1e-5);
    }

    // Stage s's blocks over x [rows·cols, C] into the block "stage<s+1>".
    at::Tensor runStage(int s, at::Tensor x, int rows, int cols, const RunOptions& options, Trace::Impl& impl,
                        int total, int& done) const {
        const SwinStage& stage = stages_[static_cast<std::size_t>(s)];
        const std::int64_t H = cfg_.heads[static_cast<std::size_t>(s)], C = x.size(1), d = C / H;
        const std::string name = "stage" + std::to_string(s + 1);
        BlockCapture capture;
        std::vector<std::string> keys;
        for (std::size_t b = 0; b < stage.blocks.size(); ++b) {
            const SwinBlock& block = stage.blocks[b];
            const SwinWindows g = swinWindows(rows, cols, cfg_.window, b % 2 == 1);
            const SwinTerms terms = swinTerms(g, block.table);
            ScoreSpec score;
            score.scale = 1.0 / std::sqrt(static_cast<double>(d));
            score.bias = terms.bias;
            MaskSpec mask;
            mask.blocked = terms.blocked;
            // The padding is added after layernorm_before: zero rows, keys b_k and values b_v.
            const at::Tensor h = layerNorm(x, block.before, cfg_.eps);
            const at::Tensor kv = g.padding() > 0 ? at::cat({h, at::zeros({g.padding(), C}, h.options())}, 0) : h;
            const LayerRun run = layerRun(options, name, static_cast<int>(b));
            x = x + attentionBlock(block.attention, h, kv, H, d, score, mask, run, capture);
            capture.layers.back().windows = swinKeyWindows(g);
            x = x + block.out(activate(cfg_.activation, block.inner(layerNorm(x, block.after, cfg_.eps))));
            if (b == 0) keys = swinKeyLabels(g);
            reportProgress(options.progress, ++done, total);
        }
        const int depth = static_cast<int>(stage.blocks.size());
        impl.infos.push_back(blockInfo(name, depth, static_cast<int>(H), static_cast<int>(H), false,
                                       swinTokenLabels(rows, cols), keys));
        impl.blocks.push_back(std::move(capture));
        return x;
    }

    // SwinPatchMerging: x [rows·cols, C] -> [⌈rows/2⌉·⌈cols/2⌉, 2C].
    static at::Tensor mergePatches(const SwinStage& stage, const at::Tensor& x, int& rows, int& cols) {
        const std::int64_t C = x.size(1);
        at::Tensor grid = x.reshape({rows, cols, C});
        if (rows % 2 != 0 || cols % 2 != 0) grid = at::constant_pad_nd(grid, {0, 0, 0, cols % 2, 0, rows % 2});
        const auto part = [&](std::int64_t r, std::int64_t c) {
            return grid.slice(0, r, grid.size(0), 2).slice(1, c, grid.size(1), 2);
        };
        at::Tensor merged = at::cat({part(0, 0), part(1, 0), part(0, 1), part(1, 1)}, -1);
        rows = (rows + 1) / 2;
        cols = (cols + 1) / 2;
        merged = merged.reshape({static_cast<std::int64_t>(rows) * cols, 4 * C});
        return stage.reduction(layerNorm(merged, stage.mergeNorm, 1e-5));  // nn.LayerNorm's default eps
    }

    // The first stage dominates: its grid's maps and biases, [H, n, n + padding] per block.
    void requireMemoryFor(int rows, int cols, const at::Tensor& x) const {
        const SwinWindows g = swinWindows(rows, cols, cfg_.window, false);
        const std::int64_t C = cfg_.width(0), H = cfg_.heads.front(), n = g.tokens();
        const std::int64_t m = static_cast<std::int64_t>(g.keys.size());
        requireForwardMemory({std::accumulate(cfg_.depths.begin(), cfg_.depths.end(), 0LL), 2 * H, 2 * H, C / H, C,
                              cfg_.inner(0), n, m, static_cast<std::int64_t>(c10::elementSize(x.scalar_type()))},
                             x.device());
    }

    SwinConfig cfg_;
    c10::Device device_;
    ImagePreprocess preprocess_;
    int inputSize_ = 0;
    ModelInfo info_;
    at::Tensor patchW_, patchB_;
    Norm embedNorm_, final_;
    std::vector<SwinStage> stages_;
    Linear head_;
    std::vector<std::string> classNames_;
};

}  // namespace

std::shared_ptr<const Model> loadSwin(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
                                      const LoadOptions& options) {
    return std::make_shared<const SwinModel>(folder, config, device, options);
}

}  // namespace attnscope
