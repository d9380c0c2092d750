// Image files (PNG, JPEG, PPM, BMP, GIF, ...) through ui/figure's decodeRgbImageFile, the one
// decoder of the window and `attnscope-cli --image`. The file has no extension, so Qt picks the
// format from the content, as it does for a mislabelled download.
#include "fuzz_util.h"

#include "figure/imagefile.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto file = attnscope::fuzz::scratch() / "image";
    attnscope::fuzz::writeBytes(file, attnscope::fuzz::asView(data, size));
    try {
        const attnscope::RgbImage image = decodeRgbImageFile(QString::fromStdString(file.string()));
        if (image.pixels.size() != std::size_t(image.width) * std::size_t(image.height) * 3) __builtin_trap();
    } catch (const attnscope::Error&) {
    }
    return 0;
}
