// Random DeiT, DINOv2 (with and without registers) and BEiT checkpoints for tests, with the real
// Hugging Face tensor names and shapes, and their independent double-precision references
// (reference_vision.cpp: plain loops written from modeling_deit.py, modeling_dinov2*.py and
// modeling_beit.py).
#pragma once

#include "family_fixtures.h"

namespace attnscope::testing {

struct VisionModelSpec {
    std::string type = "deit";  // deit, dinov2, dinov2_with_registers, beit
    int hidden = 24, inner = 48, layers = 2, heads = 3, imageSize = 16, patch = 4, labels = 5;
    double mlpRatio = 2.0;  // dinov2: the MLP is int(hidden · mlpRatio) wide
    bool swiglu = false;    // dinov2: use_swiglu_ffn (weights_in, weights_out)
    int registers = 2;      // dinov2_with_registers
    bool prefix = true;     // "deit." / "dinov2." / "dinov2_with_registers." (the classification models)
    bool teacher = true;    // deit: cls_classifier + distillation_classifier, else one classifier
    // beit: relative position bias per layer and/or shared, absolute positions, layer scale
    // (lambda_1, lambda_2), mean pooling with the pooler's LayerNorm (else the final LayerNorm and [CLS]).
    bool layerBias = true, sharedBias = false, absolute = false, layerScale = true, meanPooling = true;
};
Checkpoint makeVisionModel(const VisionModelSpec& spec, unsigned seed);

// pixels: [3][size][size] already preprocessed (channels first), size a multiple of the patch;
// the positions are interpolated as the family does when size differs from spec.imageSize.
// probs per layer and head; logits: the classifier's (DeiT with teacher: the two heads' mean);
// hidden: the final LayerNorm's rows.
Reference referenceVisionModel(const Checkpoint& c, const VisionModelSpec& spec, const std::vector<double>& pixels,
                               int size);

// The interpolated positions alone: grid [g][g][E] row-major -> [rows][cols][E] (torch's bicubic,
// align_corners=False; antialias as DINOv2 with registers), for tests of the interpolation.
std::vector<double> referenceBicubic(const std::vector<double>& grid, int g, int E, int rows, int cols, bool antialias);

}  // namespace attnscope::testing
