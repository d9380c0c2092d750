// BEiT (model_type "beit"): ViT's layer names with a key projection without bias, a layer scale
// (lambda_1, lambda_2 when layer_scale_init_value > 0, folded into the output projections),
// learned absolute positions only with use_absolute_position_embeddings, and a relative position
// bias added to the scaled logits: a table of (2g-1)² relative offsets plus three entries for
// [CLS] (to patches, from patches, to itself) per head, per layer (use_relative_position_bias)
// and/or shared by all layers (use_shared_relative_position_bias). With use_mean_pooling (the
// default) the final LayerNorm is the pooler's, on the mean of the patch tokens, before the
// classifier; else the classifier reads the final [CLS] after the final LayerNorm. The input
// must be image_size (the bias table is not interpolated here). BeitImageProcessor: bicubic to
// 256², center crop 224², mean and std 0.5.
#include "vision_encoder.h"

#include "attnscope/runtime/error.h"

namespace attnscope {

namespace {

// The bias [H, n, n] over [CLS] and the g×g patches (row-major) from table [(2g-1)² + 3, H]:
// patches (r1, c1) -> (r2, c2) read row (r1 - r2 + g - 1)·(2g - 1) + (c1 - c2 + g - 1); [CLS] as a
// query reads the third-last row, as a key the second-last, [CLS] to [CLS] the last.
at::Tensor relativePositionBias(const at::Tensor& table, int g) {
    const std::int64_t n = 1 + static_cast<std::int64_t>(g) * g, rows = table.size(0);
    std::vector<std::int64_t> index(static_cast<std::size_t>(n * n));
    for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
            std::int64_t k;
            if (i == 0 && j == 0)
                k = rows - 1;
            else if (i == 0)
                k = rows - 3;
            else if (j == 0)
                k = rows - 2;
            else
                k = ((i - 1) / g - (j - 1) / g + g - 1) * (2 * g - 1) + ((i - 1) % g - (j - 1) % g + g - 1);
            index[static_cast<std::size_t>(i * n + j)] = k;
        }
    const at::Tensor idx = at::tensor(index, at::kLong).to(table.device());
    return table.index_select(0, idx).reshape({n, n, table.size(1)}).permute({2, 0, 1}).contiguous();
}

}  // namespace

std::shared_ptr<const Model> loadBeit(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
                                      const LoadOptions& options) {
    VisionSpec s;
    s.family = "beit";
    s.prefixes = {"beit."};
    s.sizes = readVisionSizes(config, VisionSizes{});  // BeitConfig's defaults are ViT's
    if (s.sizes.imageSize % s.sizes.patch != 0)
        config.fail("image_size", "(" + std::to_string(s.sizes.imageSize) + ") must be a multiple of patch_size (" +
                                          std::to_string(s.sizes.patch) + ")");
    s.leading = {{"[CLS]", "embeddings.cls_token"}};
    s.names = kVitLayerNames;
    const bool qvBias = s.sizes.qkvBias;
    s.sizes.qkvBias = false;  // the key projection has none; q's and v's are loaded below
    s.absolutePositions = config.boolean("use_absolute_position_embeddings", false);
    std::string layerTable, sharedTable;  // the relative position bias tables [(2g-1)² + 3, H]
    if (config.boolean("use_relative_position_bias", false)) {
        layerTable = "attention.relative_position_bias.relative_position_bias_table";
        s.notes.push_back("relative position bias per layer");
    }
    if (config.boolean("use_shared_relative_position_bias", false)) {
        sharedTable = "encoder.relative_position_bias.relative_position_bias_table";
        s.notes.push_back("shared relative position bias");
    }
    double scale = 0.1;  // layer_scale_init_value: > 0 gives lambda_1 and lambda_2
    if (config.has("layer_scale_init_value")) {
        const auto& v = config.json().at("layer_scale_init_value");
        if (!v.is_number() || !(v.get<double>() >= 0))
            config.fail("layer_scale_init_value", "must be a number >= 0, found " + v.dump());
        scale = v.get<double>();
    }
    if (scale > 0) s.notes.push_back("layer scale");
    const VisionSizes z = s.sizes;
    s.loadExtras = [=](WeightStore& w, std::vector<StackLayer>& layers, at::Tensor& shared) {
        const std::int64_t E = z.hidden, g = z.imageSize / z.patch;
        const std::vector<std::int64_t> table{(2 * g - 1) * (2 * g - 1) + 3, z.heads};
        for (std::size_t l = 0; l < layers.size(); ++l) {
            const std::string p = "encoder.layer." + std::to_string(l) + ".attention.";
            if (qvBias) {
                layers[l].self.q.bias = w.get(p + "attention.query.bias", {E});
                layers[l].self.v.bias = w.get(p + "attention.value.bias", {E});
            }
            if (!layerTable.empty())
                layers[l].selfBias = relativePositionBias(w.get(p + layerTable, table), static_cast<int>(g));
        }
        if (!sharedTable.empty()) shared = relativePositionBias(w.get(sharedTable, table), static_cast<int>(g));
        if (scale > 0) foldLayerScale(w, layers, "lambda_1", "lambda_2", E);
    };
    if (config.boolean("use_mean_pooling", true)) {
        s.finalNorm = "";
        // The classifier on pooler.layernorm of the patches' mean.
        s.loadClassifier = [E = z.hidden, eps = z.eps](WeightStore& w, ClassifierHead& head) {
            head.out = optionalClassifier(w, "classifier", E);
            if (!head.out.weight.defined()) return;
            const Norm norm = loadNorm(w, "pooler.layernorm", E);
            head.extra = {norm.weight, norm.bias};
            head.pool = [eps](const ClassifierHead& h, const at::Tensor& x, const at::Tensor&) {
                return h(layerNorm(x.narrow(0, 1, x.size(0) - 1).mean(0, true), Norm{h.extra[0], h.extra[1]}, eps));
            };
        };
        s.notes.push_back("mean pooling");
    }
    s.processor = processorDefaults("Beit");
    return loadVisionEncoder(folder, config, device, options, std::move(s));
}

}  // namespace attnscope
