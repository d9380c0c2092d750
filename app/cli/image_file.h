// Image files for `attention --image`: decoded with Qt's QImage when attnscope-cli is built with
// Qt (ATTNSCOPE_BUILD_UI=ON), into the plain RGB buffer core takes. Core never decodes files.
#pragma once

#include "attnscope/models/model.h"

#include <string>

namespace attnscope::cli {

// PNG, JPEG, BMP, ... (whatever QImage reads) -> 8-bit RGB, alpha dropped. Binary PPM (P6) is
// read without Qt too, so a headless build (ATTNSCOPE_BUILD_UI=OFF) can run image models. Throws
// attnscope::Error naming the file when it cannot be read, or is not PPM in a build without Qt.
RgbImage readImageFile(const std::string& path);

}  // namespace attnscope::cli
