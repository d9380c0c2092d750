#include "io/image_preprocess.h"

#include "attnscope/io/pixel_values.h"
#include "attnscope/runtime/error.h"
#include "io/json_util.h"

#include <algorithm>
#include <cmath>

namespace attnscope {

namespace {

double filterSupport(int resample) { return resample == 3 ? 2.0 : 1.0; }

double filter(int resample, double x) {
    x = std::fabs(x);
    if (resample == 3) {  // Keys cubic, a = -0.5 (PIL's BICUBIC)
        const double a = -0.5;
        if (x < 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
        if (x < 2) return (((x - 5) * x + 8) * x - 4) * a;
        return 0;
    }
    return x < 1 ? 1 - x : 0;  // triangle (BILINEAR)
}

std::uint8_t clip8(double v) { return static_cast<std::uint8_t>(std::min(255.0, std::max(0.0, std::floor(v + 0.5)))); }

const nlohmann::json* field(const nlohmann::json& j, const char* key) {
    auto it = j.find(key);
    return it == j.end() || it->is_null() ? nullptr : &*it;
}

}  // namespace

AxisWeights axisWeights(int inSize, int outSize, int resample) {
    const double scale = static_cast<double>(inSize) / outSize;
    const double widen = std::max(scale, 1.0);
    const double support = filterSupport(resample) * widen;
    AxisWeights a;
    for (int i = 0; i < outSize; ++i) {
        const double centre = (i + 0.5) * scale;
        const int lo = std::max(0, static_cast<int>(centre - support + 0.5));
        const int hi = std::min(inSize, static_cast<int>(centre + support + 0.5));
        std::vector<double> w;
        double sum = 0;
        for (int j = lo; j < hi; ++j) {
            w.push_back(filter(resample, (j - centre + 0.5) / widen));
            sum += w.back();
        }
        if (sum != 0)
            for (double& v : w) v /= sum;
        a.first.push_back(lo);
        a.weights.push_back(std::move(w));
    }
    return a;
}

void checkImage(const RgbImage& image) {
    if (image.width < 1 || image.height < 1 || image.width > 65536 || image.height > 65536)
        throw Error("image: " + std::to_string(image.width) + "×" + std::to_string(image.height) +
                    " pixels is not a valid size");
    if (image.pixels.size() != static_cast<std::size_t>(image.width) * image.height * 3)
        throw Error("image: " + std::to_string(image.pixels.size()) + " bytes for " + std::to_string(image.width) +
                    "×" + std::to_string(image.height) + " RGB pixels (expected width·height·3)");
}

RgbImage resizeImage(const RgbImage& in, int width, int height, int resample) {
    checkImage(in);
    RgbImage out{width, height, std::vector<std::uint8_t>(static_cast<std::size_t>(width) * height * 3)};
    if (resample == 0) {
        for (int y = 0; y < height; ++y)
            for (int x = 0; x < width; ++x) {
                const int sx = std::min(in.width - 1, static_cast<int>((x + 0.5) * in.width / width));
                const int sy = std::min(in.height - 1, static_cast<int>((y + 0.5) * in.height / height));
                for (int c = 0; c < 3; ++c)
                    out.pixels[(static_cast<std::size_t>(y) * width + x) * 3 + c] =
                            in.pixels[(static_cast<std::size_t>(sy) * in.width + sx) * 3 + c];
            }
        return out;
    }
    // Horizontal pass into [in.height, width], then vertical into [height, width].
    RgbImage mid{width, in.height, std::vector<std::uint8_t>(static_cast<std::size_t>(width) * in.height * 3)};
    if (width == in.width) {
        mid.pixels = in.pixels;
    } else {
        const AxisWeights a = axisWeights(in.width, width, resample);
        for (int y = 0; y < in.height; ++y)
            for (int x = 0; x < width; ++x)
                for (int c = 0; c < 3; ++c) {
                    double s = 0;
                    for (std::size_t t = 0; t < a.weights[x].size(); ++t)
                        s += a.weights[x][t] *
                             in.pixels[(static_cast<std::size_t>(y) * in.width + a.first[x] + t) * 3 + c];
                    mid.pixels[(static_cast<std::size_t>(y) * width + x) * 3 + c] = clip8(s);
                }
    }
    if (height == in.height) {
        out.pixels = mid.pixels;
        return out;
    }
    const AxisWeights a = axisWeights(in.height, height, resample);
    for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x)
            for (int c = 0; c < 3; ++c) {
                double s = 0;
                for (std::size_t t = 0; t < a.weights[y].size(); ++t)
                    s += a.weights[y][t] * mid.pixels[((a.first[y] + t) * static_cast<std::size_t>(width) + x) * 3 + c];
                out.pixels[(static_cast<std::size_t>(y) * width + x) * 3 + c] = clip8(s);
            }
    return out;
}

ImagePreprocess processorDefaults(const std::string& processor) {
    ImagePreprocess p;  // ViT's: bilinear to 224², mean and std 0.5, no crop step
    if (processor == "ViT") return p;
    p.resample = 3;
    if (processor == "Siglip") return p;  // bicubic to 224², mean and std 0.5, no crop step
    p.crop = p.cropStep = true;
    if (processor == "DeiT" || processor == "Beit") {
        p.width = p.height = 256;
    } else if (processor == "Bit" || processor == "CLIP") {
        p.edgeSizes = true;
        p.shortestEdge = 224;
        p.mean = {0.48145466, 0.4578275, 0.40821073};  // OPENAI_CLIP_MEAN, OPENAI_CLIP_STD
        p.std = {0.26862954, 0.26130258, 0.27577711};
    } else {
        throw Error("no image processor defaults for '" + processor + "'");
    }
    return p;
}

namespace {

// "DeiTImageProcessorFast" -> "DeiT"; empty for classes without known defaults.
std::string processorKind(const JsonConfig& c) {
    for (const char* key : {"image_processor_type", "feature_extractor_type"}) {
        if (!c.has(key) || !c.json().at(key).is_string()) continue;
        const std::string name = c.json().at(key).get<std::string>();
        for (const char* kind : {"ViT", "DeiT", "Bit", "Beit", "CLIP", "Siglip"})
            for (const char* suffix : {"ImageProcessor", "ImageProcessorFast", "FeatureExtractor"})
                if (name == std::string(kind) + suffix) return kind;
    }
    return "";
}

bool positiveInteger(const nlohmann::json& v) { return v.is_number_integer() && v.get<long long>() > 0; }

// "size" or "crop_size": one number (a square, or the shortest edge where `edge`), {"height", "width"},
// or {"shortest_edge"} (where `edge`: the processor resizes by the shortest edge).
void readSize(const JsonConfig& c, const char* key, bool edge, int& width, int& height, int* shortest) {
    const auto* v = field(c.json(), key);
    if (!v) return;
    const auto limit = [](const nlohmann::json& x) { return positiveInteger(x) && x.get<long long>() <= 65536; };
    if (limit(*v)) {
        if (edge && shortest) {
            *shortest = v->get<int>();
        } else {
            width = height = v->get<int>();
            if (shortest) *shortest = 0;
        }
    } else if (v->is_object() && v->contains("height") && v->contains("width") && limit((*v)["height"]) &&
               limit((*v)["width"])) {
        height = (*v)["height"].get<int>();
        width = (*v)["width"].get<int>();
        if (shortest) *shortest = 0;
    } else if (edge && shortest && v->is_object() && v->contains("shortest_edge") && limit((*v)["shortest_edge"])) {
        *shortest = (*v)["shortest_edge"].get<int>();
    } else {
        c.fail(key, std::string("must be {\"height\": H, \"width\": W}") +
                            (edge && shortest ? ", {\"shortest_edge\": S}" : "") + " or a positive integer, found " +
                            jsonExcerpt(*v));
    }
}

void readTriple(const JsonConfig& c, const char* key, std::array<double, 3>& out, bool positive) {
    const auto* v = field(c.json(), key);
    if (!v) return;
    if (v->is_number()) {
        out.fill(v->get<double>());
    } else if (v->is_array() && v->size() == 3 &&
               std::all_of(v->begin(), v->end(), [](const auto& x) { return x.is_number(); })) {
        for (int i = 0; i < 3; ++i) out[i] = (*v)[i].get<double>();
    } else {
        c.fail(key, "must be three numbers (one per RGB channel), found " + jsonExcerpt(*v));
    }
    if (positive && std::any_of(out.begin(), out.end(), [](double x) { return !(x > 0); }))
        c.fail(key, "must be positive, found " + jsonExcerpt(*v));
}

// Hugging Face's get_resize_output_image_size without max_size: the shorter side becomes `edge`,
// the longer int(edge · long / short).
std::pair<int, int> shortestEdgeSize(int width, int height, int edge) {
    const int shorter = std::min(width, height), longer = std::max(width, height);
    const int scaled = static_cast<int>(static_cast<long long>(edge) * longer / shorter);
    return width <= height ? std::make_pair(edge, scaled) : std::make_pair(scaled, edge);
}

// Hugging Face's center_crop: output (y, x) is input (y + top, x + left) with top = floor((H - h) / 2),
// left likewise; pixels outside the input are 0.
RgbImage centerCrop(const RgbImage& in, int width, int height) {
    const auto floorHalf = [](int d) { return d >= 0 ? d / 2 : -((-d + 1) / 2); };
    const int top = floorHalf(in.height - height), left = floorHalf(in.width - width);
    RgbImage out{width, height, std::vector<std::uint8_t>(static_cast<std::size_t>(width) * height * 3, 0)};
    for (int y = 0; y < height; ++y) {
        const int sy = y + top;
        if (sy < 0 || sy >= in.height) continue;
        for (int x = 0; x < width; ++x) {
            const int sx = x + left;
            if (sx < 0 || sx >= in.width) continue;
            for (int ch = 0; ch < 3; ++ch)
                out.pixels[(static_cast<std::size_t>(y) * width + x) * 3 + ch] =
                        in.pixels[(static_cast<std::size_t>(sy) * in.width + sx) * 3 + ch];
        }
    }
    return out;
}

}  // namespace

ImagePreprocess readPreprocessor(const std::filesystem::path& folder, const ImagePreprocess& defaults) {
    const auto file = folder / "preprocessor_config.json";
    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) return defaults;
    const JsonConfig c(readJsonObject(file), file);
    const std::string kind = processorKind(c);
    ImagePreprocess p = kind.empty() ? defaults : processorDefaults(kind);
    p.resize = c.boolean("do_resize", p.resize);
    p.rescale = c.boolean("do_rescale", p.rescale);
    p.normalize = c.boolean("do_normalize", p.normalize);
    readSize(c, "size", p.edgeSizes, p.width, p.height, &p.shortestEdge);
    if (p.cropStep) {  // ViT's processor has no crop step and ignores these keys
        p.crop = c.boolean("do_center_crop", p.crop);
        readSize(c, "crop_size", false, p.cropWidth, p.cropHeight, nullptr);
    }
    if (const auto* r = field(c.json(), "resample")) {
        if (!r->is_number_integer() || (r->get<int>() != 0 && r->get<int>() != 2 && r->get<int>() != 3))
            c.fail("resample", "must be 0 (nearest), 2 (bilinear) or 3 (bicubic), found " + jsonExcerpt(*r));
        p.resample = r->get<int>();
    }
    if (c.has("rescale_factor")) p.rescaleFactor = c.positiveNumber("rescale_factor");
    readTriple(c, "image_mean", p.mean, false);
    readTriple(c, "image_std", p.std, true);
    return p;
}

std::pair<int, int> fixedOutputSize(const ImagePreprocess& p) {
    if (p.crop) return {p.cropWidth, p.cropHeight};
    if (p.resize && p.shortestEdge > 0) return {0, 0};
    return {p.width, p.height};
}

at::Tensor preprocessImage(const RgbImage& image, const ImagePreprocess& p) {
    checkImage(image);
    RgbImage sized = image;
    if (p.resize) {
        const auto [w, h] = p.shortestEdge > 0 ? shortestEdgeSize(image.width, image.height, p.shortestEdge)
                                               : std::make_pair(p.width, p.height);
        if (w != image.width || h != image.height) sized = resizeImage(image, w, h, p.resample);
    }
    if (p.crop) sized = centerCrop(sized, p.cropWidth, p.cropHeight);
    if (!p.resize && !p.crop && (sized.width != p.width || sized.height != p.height))
        throw Error("image: " + std::to_string(sized.width) + "×" + std::to_string(sized.height) +
                    " pixels but the model takes " + std::to_string(p.width) + "×" + std::to_string(p.height) +
                    " and its preprocessor does not resize");
    const int W = sized.width, H = sized.height;
    at::Tensor out = at::empty({3, H, W}, at::kFloat);
    float* o = out.data_ptr<float>();
    const std::size_t plane = static_cast<std::size_t>(W) * H;
    for (std::size_t i = 0; i < plane; ++i)
        for (int c = 0; c < 3; ++c) {
            double v = sized.pixels[i * 3 + c];
            if (p.rescale) v *= p.rescaleFactor;
            if (p.normalize) v = (v - p.mean[c]) / p.std[c];
            o[c * plane + i] = static_cast<float>(v);
        }
    return out;
}

PixelValues preprocessedPixels(const std::filesystem::path& folder, const std::string& processor,
                               const RgbImage& image) {
    const at::Tensor t = preprocessImage(image, readPreprocessor(folder, processorDefaults(processor))).contiguous();
    PixelValues out;
    out.height = static_cast<int>(t.size(1));
    out.width = static_cast<int>(t.size(2));
    out.values.assign(t.data_ptr<float>(), t.data_ptr<float>() + t.numel());
    return out;
}

}  // namespace attnscope
