// DeiT (model_type "deit"): ViT with a second learned token, the distillation token [DIST],
// after [CLS] (both with positions). DeiTForImageClassificationWithTeacher classifies with two
// heads, cls_classifier on [CLS] and distillation_classifier on [DIST], and averages their
// logits; DeiTForImageClassification has one, classifier on [CLS]. DeiTImageProcessor: bicubic
// to 256², center crop 224², mean and std 0.5. Weights with or without the "deit." prefix.
#include "vision_encoder.h"

namespace attnscope {

std::shared_ptr<const Model> loadDeit(const std::filesystem::path& folder, const JsonConfig& config, c10::Device device,
                                      const LoadOptions& options) {
    VisionSpec s;
    s.family = "deit";
    s.prefixes = {"deit."};
    s.sizes = readVisionSizes(config, VisionSizes{});  // DeiTConfig's defaults are ViT's
    s.leading = {{"[CLS]", "embeddings.cls_token"}, {"[DIST]", "embeddings.distillation_token"}};
    s.names = kVitLayerNames;
    s.loadClassifier = [E = s.sizes.hidden](WeightStore& w, ClassifierHead& head) {
        head.out = optionalClassifier(w, "cls_classifier", E);
        if (!head.out.weight.defined()) {  // DeiTForImageClassification: one head, on [CLS]
            head.out = optionalClassifier(w, "classifier", E);
            return;
        }
        const Linear second = w.linear("distillation_classifier", head.out.weight.size(0), E);
        head.extra = {second.weight, second.bias};
        head.pool = [](const ClassifierHead& h, const at::Tensor& x, const at::Tensor&) {
            return (h(x.narrow(0, 0, 1)) + Linear{h.extra[0], h.extra[1]}(x.narrow(0, 1, 1))) / 2;
        };
    };
    s.processor = processorDefaults("DeiT");
    s.notes = {"distillation token [DIST]"};
    return loadVisionEncoder(folder, config, device, options, std::move(s));
}

}  // namespace attnscope
