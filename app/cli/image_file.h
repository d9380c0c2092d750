// Image files for `--image`. With Qt (ATTNSCOPE_BUILD_UI=ON) the figure library decodes them
// (figure/imagefile.h, the decoder the window uses too). Without Qt the CLI reads only binary
// PPM, so that a headless GPU build can still run image models (tests/gpu/hf_check.py).
#pragma once

#include "attnscope/io/input.h"

#include <string>

namespace attnscope::cli {

// PNG, JPEG, PPM, BMP, ... -> 8-bit RGB, alpha dropped. Throws attnscope::Error, one line naming
// the file, when it cannot be read (or, without Qt, is not a binary PPM).
RgbImage readImageFile(const std::string& path);

}  // namespace attnscope::cli
