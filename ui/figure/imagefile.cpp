#include "figure/imagefile.h"

#include <QFile>
#include <QFileInfo>
#include <QImageReader>
#include <QSize>

#include <cstdio>
#include <cstring>
#include <mutex>

#include <unistd.h>

namespace {

// Qt's message handler is process-wide. While a file decodes, the plugins' messages on that
// thread are dropped (the thrown error says what failed); messages of other threads still go
// to the handler that was installed before. A count keeps decodings on several threads from
// restoring the handler under each other.
//
// libpng's fatal errors ("libpng error: IDAT: invalid distance too far back") bypass Qt's logging:
// Qt's PNG handler installs no error function, so libpng prints them to stderr itself. While any
// decoding runs, file descriptor 2 therefore points at a temporary file; what lands there becomes
// the reason of the thrown error. Other threads' stderr output in that window is kept and copied
// back to the real stderr when the last decoding ends.
std::mutex quietMutex;
int quietDecodings = 0;
QtMessageHandler previousHandler = nullptr;
thread_local bool decodingOnThisThread = false;
int savedStderr = -1;
std::FILE* captured = nullptr;

// What the decoders wrote to fd 2 so far in this quiet window (quietMutex held).
std::string capturedText() {
    if (!captured) return {};
    std::fflush(stderr);
    std::string text;
    std::rewind(captured);
    char buffer[4096];
    for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, captured)) > 0;) text.append(buffer, n);
    std::fseek(captured, 0, SEEK_END);
    return text;
}

void captureStderr() {
    std::fflush(stderr);
    captured = std::tmpfile();
    savedStderr = captured ? ::dup(2) : -1;
    if (savedStderr < 0 || ::dup2(::fileno(captured), 2) < 0) {
        if (savedStderr >= 0) ::close(savedStderr);
        if (captured) std::fclose(captured);
        savedStderr = -1;
        captured = nullptr;  // stderr stays as it was: a stray line rather than a lost one
    }
}

void restoreStderr() {
    if (!captured) return;
    std::string text = capturedText();
    ::dup2(savedStderr, 2);
    ::close(savedStderr);
    std::fclose(captured);
    savedStderr = -1;
    captured = nullptr;
    // Only the decoders' own lines are dropped; anything else goes where it was meant to.
    std::string keep;
    for (std::size_t at = 0; at < text.size();) {
        std::size_t end = text.find('\n', at);
        end = end == std::string::npos ? text.size() : end + 1;
        const std::string line = text.substr(at, end - at);
        if (line.rfind("libpng ", 0) != 0) keep += line;
        at = end;
    }
    if (!keep.empty()) (void)!::write(2, keep.data(), keep.size());
}

// The last "libpng error: X" line captured, as "X"; empty when there is none.
std::string libpngReason() {
    std::lock_guard<std::mutex> lock(quietMutex);
    const std::string text = capturedText();
    const std::string mark = "libpng error: ";
    const auto at = text.rfind(mark);
    if (at == std::string::npos) return {};
    const auto end = text.find('\n', at);
    return text.substr(at + mark.size(), end == std::string::npos ? std::string::npos : end - at - mark.size());
}

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
        if (quietDecodings++ == 0) {
            previousHandler = qInstallMessageHandler(quietHandler);
            captureStderr();
        }
        decodingOnThisThread = true;
    }
    ~QuietImagePlugins() {
        std::lock_guard<std::mutex> lock(quietMutex);
        decodingOnThisThread = false;
        if (--quietDecodings == 0) {
            qInstallMessageHandler(previousHandler);
            restoreStderr();
        }
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
    const QFileInfo info(path);
    if (info.exists() && !info.isFile() && !info.isDir())  // the input rule: a FIFO or device is named as such
        throw ImageFileError(path, "not a regular file", "not a regular file");
    if (!info.isFile()) throw ImageFileError(path, "no such image file", "no such image file");
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
    // libpng's own words say more than Qt's "Unable to read image data".
    const std::string png = format == "png" ? libpngReason() : std::string();
    const std::string why =
            png.empty() ? oneLine(reader.errorString()) : "damaged PNG: " + oneLine(QString::fromStdString(png));
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
