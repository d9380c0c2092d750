// Image files for image models (ViT): the one place a file becomes pixels. Qt's QImageReader
// decodes it (PNG, JPEG, PPM/PGM/PBM, BMP, GIF, … whatever the installed plugins read) into the
// plain RGB buffer core takes; the window's image input and `attnscope-cli --image` both call
// this. QtGui only; needs no QGuiApplication.
//
// Quiet and bounded: the size a file announces is checked before any pixel is allocated, and
// the image plugins' own warnings (libpng's "CRC error", Qt's allocation-limit notice) are kept
// off stderr while a file decodes; the thrown error says what went wrong instead. libpng's fatal
// errors, which bypass Qt's logging, are caught from stderr itself and become the error's reason.
#pragma once

#include "attnscope/io/input.h"
#include "attnscope/runtime/error.h"

#include <QImage>
#include <QString>
#include <QtGlobal>

#include <string>

// The most pixels a file may announce: 2^25 (e.g. 8192 × 4096), which is what Qt 6.4 decodes
// anyway (its default allocation limit, 128 MiB, at 4 bytes a pixel).
constexpr qint64 kMaxImageFilePixels = qint64(1) << 25;

// What the decoders throw. what() is one line naming the file: "<path>: <problem>", e.g.
// "a.png: cannot be read as an image (Unsupported image format)". reason() is the part worth
// showing where the file is already named: "Unsupported image format".
class ImageFileError : public attnscope::Error {
public:
    ImageFileError(const QString& path, const std::string& problem, std::string reason);
    const std::string& reason() const { return reason_; }

private:
    std::string reason_;
};

// The file's image as stored (alpha kept, for display), EXIF orientation applied. Throws
// ImageFileError for a missing file, an unreadable or damaged one, or one announcing more than
// kMaxImageFilePixels.
QImage decodeImageFile(const QString& path);

// 8-bit RGB, row-major, alpha dropped (the colour channels as stored, composited on nothing).
attnscope::RgbImage toRgbImage(const QImage& image);

// decodeImageFile then toRgbImage: what a model takes.
attnscope::RgbImage decodeRgbImageFile(const QString& path);
