// The image encoders (vit.cpp, deit.cpp, dinov2.cpp) as descriptions run by one model on the
// shared encoder stack (layer_stack.h): a VisionSpec says which tokens come before the patches,
// how the learned positions meet another patch grid, the family's own weights and classifier
// and its image processor; VisionEncoder embeds the image and runs the stack.
#pragma once

#include "families.h"
#include "io/image_preprocess.h"
#include "layer_stack.h"

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace attnscope {

// How the learned patch positions (a g×g grid) meet an input whose grid differs.
enum class PositionFit {
    Exact,             // no interpolation: the input must be config.json's image_size (ViT, DeiT)
    Bicubic,           // torch's bicubic, align_corners=False (DINOv2)
    BicubicAntialias,  // the same with antialias=True (DINOv2 with registers)
};

// What config.json gives every image encoder: sizes, norm eps, activation, q/k/v biases. The
// defaults are the family's configuration class's.
struct VisionSizes {
    int hidden = 768, layers = 12, heads = 12, inner = 3072, imageSize = 224, patch = 16;
    double eps = 1e-12;
    std::string activation = "gelu";
    bool qkvBias = true;
};
// Reads hidden_size, num_hidden_layers, num_attention_heads, intermediate_size (unless
// `readInner` is false), image_size, patch_size, layer_norm_eps, hidden_act, qkv_bias and
// num_channels (3) over the defaults; fails naming the key.
VisionSizes readVisionSizes(const JsonConfig& config, VisionSizes defaults, bool readInner = true);

struct VisionSpec {
    std::string family;                 // ModelInfo::family, messages
    std::vector<std::string> prefixes;  // model-level weight prefixes, the first found is used ("vit.")
    VisionSizes sizes;
    // The tokens before the patches, each with its learned position: label and [1, 1, E] tensor.
    std::vector<std::pair<std::string, std::string>> leading;
    int registers = 0;  // DINOv2's register tokens ([1, R, E]), after the first token, without positions
    PositionFit positions = PositionFit::Exact;
    bool absolutePositions = true;  // learned embeddings.position_embeddings (BEiT: optional)
    StackNames names;               // under encoder.layer.N.
    // The family's own weights after the layers (BEiT's q and v biases beside an unbiased k, its
    // relative position biases; BEiT's and DINOv2's layer scale): into the layers, and into the
    // self-attention bias the pass adds to every layer.
    std::function<void(WeightStore&, std::vector<StackLayer>& layers, at::Tensor& sharedBias)> loadExtras;
    std::string finalNorm = "layernorm";  // empty: none (BEiT with mean pooling)
    // The family's own classifier (DeiT's two heads, DINOv2's [CLS] and mean, BEiT's normed mean)
    // into the head, its `out` left undefined when the checkpoint has none. Null: "classifier" on
    // the first position.
    std::function<void(WeightStore&, ClassifierHead&)> loadClassifier;
    ImagePreprocess processor;  // the family's image processor defaults
    std::vector<std::string> notes;
};

// ViT's layer tensor names (vit.cpp), which DeiT keeps.
extern const StackNames kVitLayerNames;

std::shared_ptr<const Model> loadVisionEncoder(const std::filesystem::path& folder, const JsonConfig& config,
                                               c10::Device device, const LoadOptions& options, VisionSpec spec);

// λ ⊙ (W x + b) = (diag(λ) W) x + λ ⊙ b: the layer scales [E] under encoder.layer.N. (scale1 after
// attention, scale2 after the MLP) folded into the output projections, so the value captures, ALTI
// and patching see the scaled outputs (computed in float32). In dinov2.cpp; BEiT's too.
void foldLayerScale(WeightStore& weights, std::vector<StackLayer>& layers, const std::string& scale1,
                    const std::string& scale2, std::int64_t hidden);

// The positions grid [g, g, E] resized to [rows, cols, E] as torch.nn.functional.interpolate
// does it in mode "bicubic" with align_corners=False: without antialias Keys' cubic with
// A = -0.75 and border clamping, with antialias PIL's (a = -0.5, widened when shrinking). In
// double precision, returned in grid's dtype. In dinov2.cpp: DINOv2's positions are the ones interpolated.
at::Tensor interpolatePositions(const at::Tensor& grid, int rows, int cols, bool antialias);

}  // namespace attnscope
