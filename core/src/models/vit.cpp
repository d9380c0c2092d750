// ViT (model_type "vit"): the image is cut into patch_size² patches (a strided convolution),
// a [CLS] token is prepended, learned positions added, then pre-LN encoder layers with GELU.
// ViTForImageClassification's classifier on the final [CLS] state gives the predicted class,
// named by config.json's id2label. Weights with or without the "vit." prefix. A description on
// vision_encoder.h.
#include "vision_encoder.h"

namespace attnscope {

// ViT's tensor names under encoder.layer.N. (DeiT keeps them).
const StackNames kVitLayerNames{"attention.",
                                {"attention.query", "attention.key", "attention.value", "output.dense"},
                                "layernorm_before",
                                "",
                                "",
                                "intermediate.dense",
                                "",
                                "output.dense",
                                "layernorm_after"};

std::shared_ptr<const Model> loadVit(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
                                     const LoadOptions& options) {
    VisionSpec s;
    s.family = "vit";
    s.prefixes = {"vit."};
    s.sizes = readVisionSizes(config, VisionSizes{});  // ViTConfig's defaults
    if (s.sizes.imageSize % s.sizes.patch != 0)
        config.fail("image_size", "(" + std::to_string(s.sizes.imageSize) + ") must be a multiple of patch_size (" +
                                          std::to_string(s.sizes.patch) + ")");
    s.leading = {{"[CLS]", "embeddings.cls_token"}};
    s.names = kVitLayerNames;
    s.processor = processorDefaults("ViT");
    s.processor.width = s.processor.height = s.sizes.imageSize;  // without a preprocessor_config.json: the model's size
    return loadVisionEncoder(folder, config, device, options, std::move(s));
}

}  // namespace attnscope
