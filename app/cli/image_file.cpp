#include "image_file.h"

#ifdef ATTNSCOPE_CLI_WITH_QT
#include "figure/imagefile.h"

#include <QFile>
#else
#include "attnscope/runtime/error.h"

#include <cctype>
#include <cstdint>
#include <filesystem>
#include <fstream>
#endif

namespace attnscope::cli {

#ifdef ATTNSCOPE_CLI_WITH_QT

RgbImage readImageFile(const std::string& path) { return decodeRgbImageFile(QFile::decodeName(path.c_str())); }

#else

// Binary PPM (P6, maxval 255): the one format a build without Qt reads. Header: "P6" width
// height maxval, separated by whitespace and #-comments, then one whitespace byte and the RGB
// bytes. The pixels are allocated only once the file is known to hold them all.
RgbImage readImageFile(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) throw Error(path + ": no such image file");
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
    if (magic[0] != 'P' || magic[1] != '6')
        throw Error(path +
                    ": this attnscope-cli was built without Qt (ATTNSCOPE_BUILD_UI=OFF) and reads only binary PPM "
                    "(P6) images; convert it, e.g. with PIL: Image.open(f).convert('RGB').save('x.ppm')");
    RgbImage image;
    image.width = number();
    image.height = number();
    if (number() != 255) throw bad("only 8-bit images (maxval 255) are read");
    if (image.width < 1 || image.height < 1) throw bad("empty image");
    const auto bytes = static_cast<std::uintmax_t>(image.width) * static_cast<std::uintmax_t>(image.height) * 3;
    const auto at = static_cast<std::uintmax_t>(in.tellg());
    if (!in || std::filesystem::file_size(path, ec) < at + bytes || ec) throw bad("pixel data truncated");
    image.pixels.resize(static_cast<std::size_t>(bytes));
    in.read(reinterpret_cast<char*>(image.pixels.data()), static_cast<std::streamsize>(bytes));
    if (in.gcount() != static_cast<std::streamsize>(bytes)) throw bad("pixel data truncated");
    return image;
}

#endif

}  // namespace attnscope::cli
