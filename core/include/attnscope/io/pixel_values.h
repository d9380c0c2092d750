// What an image model reads of an image: the pixel values its Hugging Face image processor
// (preprocessor_config.json) makes, as plain floats, for tests and tools (core/src/io/image_preprocess.h
// does the work).
#pragma once

#include "attnscope/io/input.h"

#include <filesystem>
#include <string>
#include <vector>

namespace attnscope {

struct PixelValues {
    int width = 0, height = 0;
    std::vector<float> values;  // [3][height][width], channels first
};

// The pixel values folder/preprocessor_config.json's processor makes of `image`; keys the file
// lacks (or the whole file) take the defaults of the class it names, else of `processor` ("ViT",
// "DeiT", "Bit" or "Beit"). Throws attnscope::Error naming the file and key.
PixelValues preprocessedPixels(const std::filesystem::path& folder, const std::string& processor,
                               const RgbImage& image);

}  // namespace attnscope
