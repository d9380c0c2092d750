// Image preprocessing for vision models as Hugging Face's image processors (the PIL backend)
// describe it in preprocessor_config.json: resize (PIL's resampling filters on 8-bit pixels) to a
// fixed size or by the shortest edge, center crop (zero padding where the image is smaller),
// rescale, normalise with per-channel means and standard deviations, channels first.
#pragma once

#include "attnscope/io/input.h"

#include <ATen/ATen.h>

#include <array>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace attnscope {

struct ImagePreprocess {
    bool resize = true;
    int width = 224, height = 224;  // the resize's size, when shortestEdge is 0
    int shortestEdge = 0;           // > 0: resize the shorter side to this, the longer keeping the aspect ratio
    bool crop = false;              // center crop to cropWidth × cropHeight after the resize
    bool cropStep = false;          // the processor has a crop step (ViT's has none: its crop keys are ignored)
    bool edgeSizes = false;         // "size" may be {"shortest_edge"}, and one number means the shortest edge
    int cropWidth = 224, cropHeight = 224;
    int resample = 2;  // PIL codes: 0 nearest, 2 bilinear, 3 bicubic
    bool rescale = true;
    double rescaleFactor = 1.0 / 255.0;
    bool normalize = true;
    std::array<double, 3> mean{0.5, 0.5, 0.5};
    std::array<double, 3> std{0.5, 0.5, 0.5};
};

// The constructor defaults of a Hugging Face image processor class (PIL backend): "ViT" (bilinear
// resize to 224², mean and std 0.5), "DeiT" (bicubic to 256², center crop 224², 0.5), "Bit"
// (DINOv2's: bicubic shortest edge 224, crop 224², the OpenAI CLIP mean and std), "CLIP" (the
// same as Bit's), "Beit" (bicubic to 256², crop 224², 0.5) or "Siglip" (bicubic to 224², no crop,
// 0.5). Anything else throws.
ImagePreprocess processorDefaults(const std::string& processor);

// Reads folder/preprocessor_config.json when present ("do_resize", "size" as {"height", "width"},
// {"shortest_edge"} or one number, "resample", "do_center_crop", "crop_size", "do_rescale",
// "rescale_factor", "do_normalize", "image_mean", "image_std"). Keys it lacks keep the defaults of
// its "image_processor_type" (or legacy "feature_extractor_type") when that names a class
// processorDefaults knows (a "Fast" suffix ignored), else `defaults` (the family's processor).
// Throws attnscope::Error naming the file and key.
ImagePreprocess readPreprocessor(const std::filesystem::path& folder, const ImagePreprocess& defaults);

// The width and height of preprocessImage's output, or {0, 0} when it depends on the image
// (a shortest-edge resize without a crop, or no resize).
std::pair<int, int> fixedOutputSize(const ImagePreprocess& p);

// PIL's resampling weights along one axis of inSize pixels resized to outSize (resample 2
// bilinear or 3 bicubic, Keys a = -0.5): output i reads inputs first[i] .. with weights[i],
// normalised; the support widens with the downscale factor (antialiasing).
struct AxisWeights {
    std::vector<int> first;
    std::vector<std::vector<double>> weights;
};
AxisWeights axisWeights(int inSize, int outSize, int resample);

// Checks width, height and the pixel count; throws attnscope::Error.
void checkImage(const RgbImage& image);

// PIL-style resampling of 8-bit RGB: a separable filter (triangle for bilinear, Keys a = -0.5
// for bicubic) whose support widens with the downscale factor (antialiasing), horizontal pass
// then vertical, each rounded to 8 bits; nearest takes the pixel under each output centre.
RgbImage resizeImage(const RgbImage& image, int width, int height, int resample);

// The model's input: [3, height, width] float32 on the CPU.
at::Tensor preprocessImage(const RgbImage& image, const ImagePreprocess& p);

}  // namespace attnscope
