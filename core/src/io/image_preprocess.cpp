#include "io/image_preprocess.h"

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

// For each output pixel along one axis: the first input pixel it reads and the normalised
// filter weights of the input pixels from there on.
struct AxisWeights {
    std::vector<int> first;
    std::vector<std::vector<double>> weights;
};

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

const nlohmann::json* field(const nlohmann::json& j, const char* key) {
    auto it = j.find(key);
    return it == j.end() || it->is_null() ? nullptr : &*it;
}

}  // namespace

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

ImagePreprocess readPreprocessor(const std::filesystem::path& folder, int imageSize) {
    ImagePreprocess p;
    p.width = p.height = imageSize;
    const auto file = folder / "preprocessor_config.json";
    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) return p;
    const JsonConfig c(readJsonObject(file), file);
    const auto& j = c.json();
    p.resize = c.boolean("do_resize", true);
    p.rescale = c.boolean("do_rescale", true);
    p.normalize = c.boolean("do_normalize", true);
    if (c.boolean("do_center_crop", false)) c.fail("do_center_crop", "is true: center cropping is not supported");
    if (const auto* size = field(j, "size")) {
        if (size->is_number_integer() && size->get<int>() > 0) {
            p.width = p.height = size->get<int>();
        } else if (size->is_object() && size->contains("height") && size->contains("width") &&
                   (*size)["height"].is_number_integer() && (*size)["width"].is_number_integer() &&
                   (*size)["height"].get<int>() > 0 && (*size)["width"].get<int>() > 0) {
            p.height = (*size)["height"].get<int>();
            p.width = (*size)["width"].get<int>();
        } else {
            c.fail("size", "must be {\"height\": H, \"width\": W} or a positive integer, found " + jsonExcerpt(*size));
        }
    }
    if (const auto* r = field(j, "resample")) {
        if (!r->is_number_integer() || (r->get<int>() != 0 && r->get<int>() != 2 && r->get<int>() != 3))
            c.fail("resample", "must be 0 (nearest), 2 (bilinear) or 3 (bicubic), found " + jsonExcerpt(*r));
        p.resample = r->get<int>();
    }
    if (c.has("rescale_factor")) p.rescaleFactor = c.positiveNumber("rescale_factor");
    auto triple = [&](const char* key, std::array<double, 3>& out, bool positive) {
        const auto* v = field(j, key);
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
    };
    triple("image_mean", p.mean, false);
    triple("image_std", p.std, true);
    return p;
}

at::Tensor preprocessImage(const RgbImage& image, const ImagePreprocess& p) {
    checkImage(image);
    RgbImage sized = image;
    if (p.resize && (image.width != p.width || image.height != p.height))
        sized = resizeImage(image, p.width, p.height, p.resample);
    if (sized.width != p.width || sized.height != p.height)
        throw Error("image: " + std::to_string(sized.width) + "×" + std::to_string(sized.height) +
                    " pixels but the model takes " + std::to_string(p.width) + "×" + std::to_string(p.height) +
                    " and its preprocessor does not resize");
    at::Tensor out = at::empty({3, p.height, p.width}, at::kFloat);
    float* o = out.data_ptr<float>();
    const std::size_t plane = static_cast<std::size_t>(p.width) * p.height;
    for (std::size_t i = 0; i < plane; ++i)
        for (int c = 0; c < 3; ++c) {
            double v = sized.pixels[i * 3 + c];
            if (p.rescale) v *= p.rescaleFactor;
            if (p.normalize) v = (v - p.mean[c]) / p.std[c];
            o[c * plane + i] = static_cast<float>(v);
        }
    return out;
}

}  // namespace attnscope
