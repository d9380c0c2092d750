// Image files for `attention --image`: decoded with Qt's QImage when attnscope-cli is built with
// Qt (ATTNSCOPE_BUILD_UI=ON), into the plain RGB buffer core takes. Core never decodes files.
#pragma once

#include "attnscope/model.h"

#include <string>

namespace attnscope::cli {

// PNG, JPEG, BMP, ... (whatever QImage reads) -> 8-bit RGB, alpha dropped. Throws
// attnscope::Error naming the file when it cannot be read, or when this build has no Qt.
RgbImage readImageFile(const std::string& path);

}  // namespace attnscope::cli
