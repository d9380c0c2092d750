// figure/imagefile.h, the one image decoder (the window's image input and attnscope-cli --image):
// pixels of a PNG and a PPM, one-line errors naming the file, sizes refused from the header,
// and the image plugins kept quiet.
#include "figure/imagefile.h"
#include "panels/imageinput.h"

#include "gpt2_fixture.h"
#include "png_write.h"

#include <catch2/catch.hpp>

#include <QImageReader>

#include <fstream>
#include <iterator>
#include <mutex>
#include <string>
#include <vector>

namespace test_imagefile {

using namespace attnscope::testing;
namespace fs = std::filesystem;

namespace {

QString qpath(const fs::path& p) { return QString::fromStdString(p.string()); }

std::vector<std::uint8_t> somePixels(int width, int height) {
    std::vector<std::uint8_t> pixels(std::size_t(width) * height * 3);
    for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<std::uint8_t>((i * 37 + 11) % 256);
    return pixels;
}

std::string readBytes(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void writeBytes(const fs::path& file, const std::string& bytes) {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out << bytes;
}

std::uint32_t crc32(const std::string& bytes) {
    std::uint32_t crc = 0xffffffffu;
    for (unsigned char c : bytes) {
        crc ^= c;
        for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
    }
    return crc ^ 0xffffffffu;
}

std::string be32(std::uint32_t v) { return {char(v >> 24), char(v >> 16), char(v >> 8), char(v)}; }

// The message an error carries, or "" when none was thrown.
std::string errorOf(const fs::path& file) {
    try {
        decodeRgbImageFile(qpath(file));
    } catch (const ImageFileError& e) {
        return e.what();
    }
    return {};
}

// Everything Qt logs while one of these lives (then the handler before it again).
class CapturedMessages {
public:
    CapturedMessages() {
        messages().clear();
        previous_ = qInstallMessageHandler(&CapturedMessages::capture);
    }
    ~CapturedMessages() { qInstallMessageHandler(previous_); }
    static std::vector<QString>& messages() {
        static std::vector<QString> all;
        return all;
    }

private:
    static void capture(QtMsgType, const QMessageLogContext&, const QString& message) { messages().push_back(message); }
    QtMessageHandler previous_ = nullptr;
};

}  // namespace

TEST_CASE("A PNG and a PPM decode to the pixels written", "[ui][imagefile]") {
    const auto dir = freshDir("imagefile-pixels");
    const int w = 7, h = 5;  // odd width: QImage pads rows, RgbImage does not
    const auto pixels = somePixels(w, h);
    writePng(dir / "a.png", w, h, pixels);
    const attnscope::RgbImage png = decodeRgbImageFile(qpath(dir / "a.png"));
    CHECK(png.width == w);
    CHECK(png.height == h);
    CHECK(png.pixels == pixels);

    writeBytes(dir / "a.ppm", "P6\n# a comment\n7 5\n255\n" + std::string(pixels.begin(), pixels.end()));
    const attnscope::RgbImage ppm = decodeRgbImageFile(qpath(dir / "a.ppm"));
    CHECK(ppm.width == w);
    CHECK(ppm.height == h);
    CHECK(ppm.pixels == pixels);

    // The window's readImageFile is the same decoder: its image converts to the same pixels.
    QString error;
    const QImage shown = readImageFile(qpath(dir / "a.png"), &error);
    CHECK(error.isEmpty());
    CHECK(toRgbImage(shown).pixels == pixels);
}

TEST_CASE("Unreadable image files are one-line errors naming the file", "[ui][imagefile]") {
    const auto dir = freshDir("imagefile-errors");
    const auto pixels = somePixels(16, 16);
    writeBytes(dir / "broken.ppm", "P6\n16 16\n255\nabc");
    CHECK(errorOf(dir / "broken.ppm") ==
          (dir / "broken.ppm").string() + ": not a binary PPM image (pixel data truncated)");

    writePng(dir / "whole.png", 16, 16, pixels);
    const std::string png = readBytes(dir / "whole.png");
    writeBytes(dir / "cut.png", png.substr(0, png.size() / 2));
    const std::string cut = errorOf(dir / "cut.png");
    CHECK_THAT(cut, Catch::StartsWith((dir / "cut.png").string() + ": cannot be read as an image ("));
    CHECK(cut.find('\n') == std::string::npos);

    writeBytes(dir / "notes.txt", "not an image\n");
    CHECK(errorOf(dir / "notes.txt") ==
          (dir / "notes.txt").string() + ": cannot be read as an image (Unsupported image format)");
    CHECK(errorOf(dir / "nothing.png") == (dir / "nothing.png").string() + ": no such image file");
    CHECK(errorOf(dir) == dir.string() + ": no such image file");  // a folder is not an image file

    // The window words it its own way around the same reason.
    QString error;
    CHECK(readImageFile(qpath(dir / "notes.txt"), &error).isNull());
    CHECK(error == qpath(dir / "notes.txt") + QStringLiteral(": cannot read the image (Unsupported image format)"));
}

TEST_CASE("A header announcing a huge image is refused before decoding, quietly", "[ui][imagefile]") {
    const auto dir = freshDir("imagefile-huge");
    // A real 2 x 2 PNG whose IHDR then claims 65536 x 65536 (70 bytes, 12 GiB as pixels).
    writePng(dir / "small.png", 2, 2, somePixels(2, 2));
    std::string png = readBytes(dir / "small.png");
    png.replace(16, 8, be32(65536) + be32(65536));
    png.replace(29, 4, be32(crc32(png.substr(12, 17))));
    writeBytes(dir / "huge.png", png);
    {
        // Control: Qt itself gets as far as its allocation limit and says so on stderr.
        const CapturedMessages plain;
        QImageReader reader(qpath(dir / "huge.png"));
        CHECK(reader.size() == QSize(65536, 65536));
        CHECK(reader.read().isNull());
        CHECK_FALSE(CapturedMessages::messages().empty());
    }
    {
        const CapturedMessages quiet;
        CHECK(errorOf(dir / "huge.png") == (dir / "huge.png").string() +
                                                   ": image too large (it announces 65536 × 65536 pixels; at most " +
                                                   std::to_string(kMaxImageFilePixels) + " are read)");
        CHECK(CapturedMessages::messages().empty());
    }
    // A 19-byte PPM header claiming 30000 x 30000; and one Qt's reader refuses outright.
    writeBytes(dir / "huge.ppm", "P6\n30000 30000\n255\n");
    CHECK_THAT(errorOf(dir / "huge.ppm"),
               Catch::EndsWith("huge.ppm: image too large (it announces 30000 × 30000 pixels; at most " +
                               std::to_string(kMaxImageFilePixels) + " are read)"));
    writeBytes(dir / "huger.ppm", "P6\n65536 65536\n255\n");
    const std::string huger = errorOf(dir / "huger.ppm");
    CHECK_THAT(huger, Catch::StartsWith((dir / "huger.ppm").string() + ": "));
    CHECK(huger.find('\n') == std::string::npos);
}

TEST_CASE("Image plugin warnings stay off the log while a file decodes", "[ui][imagefile]") {
    const auto dir = freshDir("imagefile-quiet");
    const auto pixels = somePixels(3, 2);
    writePng(dir / "clean.png", 3, 2, pixels);
    // A text chunk with a wrong CRC after IHDR: libpng warns and skips it (ancillary chunk).
    std::string png = readBytes(dir / "clean.png");
    png.insert(33, be32(2) + "tEXt" + "a" + std::string(1, '\0') + be32(12345));
    writeBytes(dir / "warns.png", png);
    {
        const CapturedMessages plain;  // control: Qt's reader alone logs libpng's warning
        CHECK_FALSE(QImageReader(qpath(dir / "warns.png")).read().isNull());
        REQUIRE_FALSE(CapturedMessages::messages().empty());
        CHECK(CapturedMessages::messages().front().contains(QStringLiteral("CRC")));
    }
    const CapturedMessages quiet;
    CHECK(decodeRgbImageFile(qpath(dir / "warns.png")).pixels == pixels);
    CHECK(CapturedMessages::messages().empty());
    // Afterwards the handler in place before sees messages again.
    qWarning("after decoding");
    REQUIRE(CapturedMessages::messages().size() == 1);
    CHECK(CapturedMessages::messages().front() == QStringLiteral("after decoding"));
}

}  // namespace test_imagefile
