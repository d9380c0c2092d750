#include "image_file.h"

#include "attnscope/error.h"

#include <cstring>
#include <filesystem>

#ifdef ATTNSCOPE_CLI_WITH_QT
#include <QImage>
#include <QImageReader>
#include <QString>
#endif

namespace attnscope::cli {

RgbImage readImageFile(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) throw Error(path + ": no such image file");
#ifdef ATTNSCOPE_CLI_WITH_QT
    QImageReader reader(QString::fromStdString(path));
    reader.setAutoTransform(true);  // honour EXIF orientation, as PIL's users usually do
    QImage image = reader.read();
    if (image.isNull())
        throw Error(path + ": cannot be read as an image (" + reader.errorString().toStdString() + ")");
    image = image.convertToFormat(QImage::Format_RGB888);
    RgbImage out{image.width(), image.height(), {}};
    const std::size_t row = static_cast<std::size_t>(out.width) * 3;
    out.pixels.resize(row * out.height);
    for (int y = 0; y < out.height; ++y) std::memcpy(out.pixels.data() + row * y, image.constScanLine(y), row);
    return out;
#else
    throw Error(path + ": this attnscope-cli was built without Qt (ATTNSCOPE_BUILD_UI=OFF) and cannot decode images");
#endif
}

}  // namespace attnscope::cli
