// Image preprocessing for vision models as Hugging Face's image processors describe it in
// preprocessor_config.json: resize (PIL's resampling filters on 8-bit pixels), rescale,
// normalise with per-channel means and standard deviations, channels first.
#pragma once

#include "attnscope/io/input.h"

#include <ATen/ATen.h>

#include <array>
#include <filesystem>

namespace attnscope {

struct ImagePreprocess {
    bool resize = true;
    int width = 224, height = 224;
    int resample = 2;  // PIL codes: 0 nearest, 2 bilinear, 3 bicubic
    bool rescale = true;
    double rescaleFactor = 1.0 / 255.0;
    bool normalize = true;
    std::array<double, 3> mean{0.5, 0.5, 0.5};
    std::array<double, 3> std{0.5, 0.5, 0.5};
};

// Reads folder/preprocessor_config.json when present ("do_resize", "size" as {"height",
// "width"} or one number, "resample", "do_rescale", "rescale_factor", "do_normalize",
// "image_mean", "image_std"); defaults are ViT's with the model's image size. Throws
// attnscope::Error naming the file and key.
ImagePreprocess readPreprocessor(const std::filesystem::path& folder, int imageSize);

// Checks width, height and the pixel count; throws attnscope::Error.
void checkImage(const RgbImage& image);

// PIL-style resampling of 8-bit RGB: a separable filter (triangle for bilinear, Keys a = -0.5
// for bicubic) whose support widens with the downscale factor (antialiasing), horizontal pass
// then vertical, each rounded to 8 bits; nearest takes the pixel under each output centre.
RgbImage resizeImage(const RgbImage& image, int width, int height, int resample);

// The model's input: [3, height, width] float32 on the CPU.
at::Tensor preprocessImage(const RgbImage& image, const ImagePreprocess& p);

}  // namespace attnscope
