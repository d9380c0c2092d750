// preprocessor_config.json of image models: parsed by readPreprocessor (core/src/io), then
// applied to a small image (resize, center crop, rescale, normalise), so fuzzed sizes and factors
// reach the resizer as they would in a real run.
#include "fuzz_util.h"

#include "attnscope/runtime/error.h"
#include "io/image_preprocess.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace attnscope;
    static const auto folder = [] {
        auto d = fuzz::scratch() / "vit";
        std::filesystem::create_directories(d);
        return d;
    }();
    fuzz::writeBytes(folder / "preprocessor_config.json", fuzz::asView(data, size));
    try {
        ImagePreprocess defaults = processorDefaults("ViT");
        defaults.width = defaults.height = 16;
        const ImagePreprocess p = readPreprocessor(folder, defaults);
        RgbImage image{7, 5, std::vector<std::uint8_t>(7 * 5 * 3)};
        for (std::size_t i = 0; i < image.pixels.size(); ++i) image.pixels[i] = static_cast<std::uint8_t>(i * 29);
        checkImage(image);
        if (p.width <= 64 && p.height <= 64 && p.shortestEdge <= 64 && p.cropWidth <= 64 && p.cropHeight <= 64)
            preprocessImage(image, p);  // larger sizes are refused against the model later
    } catch (const Error&) {
    }
    return 0;
}
