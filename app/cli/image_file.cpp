#include "image_file.h"

#include "attnscope/runtime/error.h"

#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>

#ifdef ATTNSCOPE_CLI_WITH_QT
#include <QImage>
#include <QImageReader>
#include <QString>
#endif

namespace attnscope::cli {

namespace {

// Binary PPM (P6, maxval 255): the one format read without Qt, so that a headless GPU build can
// still run image models. Header: "P6" width height maxval, separated by whitespace and
// #-comments, then one whitespace byte and the RGB bytes.
RgbImage readPpm(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    auto bad = [&](const std::string& what) { return Error(path + ": not a binary PPM image (" + what + ")"); };
    auto number = [&]() {
        int c = in.get();
        while (c != EOF && (std::isspace(c) || c == '#')) {
            if (c == '#')
                while (c != EOF && c != '\n') c = in.get();
            c = in.get();
        }
        long value = 0;
        if (!std::isdigit(c)) throw bad("expected a number in the header");
        for (; c != EOF && std::isdigit(c); c = in.get()) {
            value = value * 10 + (c - '0');
            if (value > 65536) throw bad("header number too large");
        }
        return static_cast<int>(value);  // the one whitespace byte after it is consumed
    };
    char magic[2] = {};
    in.read(magic, 2);
    if (magic[0] != 'P' || magic[1] != '6') throw bad("no P6 signature");
    RgbImage image;
    image.width = number();
    image.height = number();
    if (number() != 255) throw bad("only 8-bit images (maxval 255) are read");
    if (image.width < 1 || image.height < 1) throw bad("empty image");
    image.pixels.resize(static_cast<std::size_t>(image.width) * image.height * 3);
    in.read(reinterpret_cast<char*>(image.pixels.data()), static_cast<std::streamsize>(image.pixels.size()));
    if (in.gcount() != static_cast<std::streamsize>(image.pixels.size())) throw bad("pixel data truncated");
    return image;
}

bool isPpm(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    char magic[2] = {};
    in.read(magic, 2);
    return magic[0] == 'P' && magic[1] == '6';
}

}  // namespace

RgbImage readImageFile(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) throw Error(path + ": no such image file");
    if (isPpm(path)) return readPpm(path);
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
    throw Error(path + ": this attnscope-cli was built without Qt (ATTNSCOPE_BUILD_UI=OFF) and reads only binary PPM "
                       "(P6) images; convert it, e.g. with PIL: Image.open(f).convert('RGB').save('x.ppm')");
#endif
}

}  // namespace attnscope::cli
