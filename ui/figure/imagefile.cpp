#include "figure/imagefile.h"

#include <QFile>
#include <QFileInfo>
#include <QImageReader>
#include <QSize>

#include <cstring>
#include <mutex>

namespace {

// Qt's message handler is process-wide. While a file decodes, the plugins' messages on that
// thread are dropped (the thrown error says what failed); messages of other threads still go
// to the handler that was installed before. A count keeps decodings on several threads from
// restoring the handler under each other.
std::mutex quietMutex;
int quietDecodings = 0;
QtMessageHandler previousHandler = nullptr;
thread_local bool decodingOnThisThread = false;

void quietHandler(QtMsgType type, const QMessageLogContext& context, const QString& message) {
    if (decodingOnThisThread && type != QtFatalMsg) return;
    QtMessageHandler next = nullptr;
    {
        std::lock_guard<std::mutex> lock(quietMutex);
        next = previousHandler;
    }
    if (next) next(type, context, message);
}

class QuietImagePlugins {
public:
    QuietImagePlugins() {
        std::lock_guard<std::mutex> lock(quietMutex);
        if (quietDecodings++ == 0) previousHandler = qInstallMessageHandler(quietHandler);
        decodingOnThisThread = true;
    }
    ~QuietImagePlugins() {
        std::lock_guard<std::mutex> lock(quietMutex);
        decodingOnThisThread = false;
        if (--quietDecodings == 0) qInstallMessageHandler(previousHandler);
    }
    QuietImagePlugins(const QuietImagePlugins&) = delete;
    QuietImagePlugins& operator=(const QuietImagePlugins&) = delete;
};

std::string oneLine(const QString& text) { return text.simplified().toStdString(); }

bool startsWith(const QString& path, const char* magic) {
    QFile file(path);
    const auto n = qint64(std::strlen(magic));
    return file.open(QIODevice::ReadOnly) && file.read(n) == QByteArray(magic, int(n));
}

}  // namespace

ImageFileError::ImageFileError(const QString& path, const std::string& problem, std::string reason)
    : attnscope::Error(path.toStdString() + ": " + problem), reason_(std::move(reason)) {}

QImage decodeImageFile(const QString& path) {
    if (!QFileInfo(path).isFile()) throw ImageFileError(path, "no such image file", "no such image file");
    const QuietImagePlugins quiet;
    QImageReader reader(path);
    reader.setAutoTransform(true);  // honour EXIF orientation, as PIL's users usually do
    // The header alone: a 70-byte PNG may announce 65536 × 65536 pixels.
    const QSize size = reader.size();
    const QByteArray format = reader.format();  // before read(), which drops the handler on failure
    if (size.isValid() && qint64(size.width()) * size.height() > kMaxImageFilePixels) {
        const std::string why = "it announces " + std::to_string(size.width()) + " × " + std::to_string(size.height()) +
                                " pixels; at most " + std::to_string(kMaxImageFilePixels) + " are read";
        throw ImageFileError(path, "image too large (" + why + ")", why);
    }
    QImage image = reader.read();
    if (!image.isNull()) return image;
    // A binary PPM whose header was read can only fail by ending early; the message the CLI has
    // always given for it (Qt would say "Unable to read image data").
    if (size.isValid() && format == "ppm" && startsWith(path, "P6"))
        throw ImageFileError(path, "not a binary PPM image (pixel data truncated)", "pixel data truncated");
    const std::string why = oneLine(reader.errorString());
    throw ImageFileError(path, "cannot be read as an image (" + why + ")", why);
}

attnscope::RgbImage toRgbImage(const QImage& image) {
    const QImage rgb = image.convertToFormat(QImage::Format_RGB888);
    attnscope::RgbImage out;
    out.width = rgb.width();
    out.height = rgb.height();
    const std::size_t row = std::size_t(out.width) * 3;
    out.pixels.resize(row * std::size_t(out.height));
    for (int y = 0; y < out.height; ++y)  // QImage rows are padded to 4 bytes
        std::memcpy(out.pixels.data() + std::size_t(y) * row, rgb.constScanLine(y), row);
    return out;
}

attnscope::RgbImage decodeRgbImageFile(const QString& path) { return toRgbImage(decodeImageFile(path)); }
