// ViT on images against the independent reference in tests/support; preprocessing from
// preprocessor_config.json.
#include "attnscope/runtime/error.h"
#include "attnscope/lab/interventions.h"
#include "family_checks.h"

#include <cmath>

namespace test_vit {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

RgbImage randomImage(int width, int height, unsigned seed) {
    std::mt19937 rng(seed);
    RgbImage image{width, height, std::vector<std::uint8_t>(static_cast<std::size_t>(width) * height * 3)};
    for (auto& p : image.pixels) p = static_cast<std::uint8_t>(rng() % 256);
    return image;
}

// Channels-first model input: (v · factor - mean) / std per channel.
std::vector<double> normalised(const RgbImage& image, double factor, const double* mean, const double* std) {
    const std::size_t plane = static_cast<std::size_t>(image.width) * image.height;
    std::vector<double> out(3 * plane);
    for (std::size_t i = 0; i < plane; ++i)
        for (int c = 0; c < 3; ++c) out[c * plane + i] = (image.pixels[i * 3 + c] * factor - mean[c]) / std[c];
    return out;
}

// PIL's bilinear 2× downscale written out: output pixel i reads inputs 2i-1 .. 2i+2 with triangle
// weights 1/4, 3/4, 3/4, 1/4 (those inside the image, renormalised), rows first, 8-bit rounding.
RgbImage halve(const RgbImage& in) {
    auto pass = [](const std::vector<double>& line) {
        std::vector<double> out(line.size() / 2);
        for (std::size_t i = 0; i < out.size(); ++i) {
            double sum = 0, weights = 0;
            const double w[4] = {0.25, 0.75, 0.75, 0.25};
            for (int t = 0; t < 4; ++t) {
                const long j = static_cast<long>(2 * i) - 1 + t;
                if (j < 0 || j >= static_cast<long>(line.size())) continue;
                sum += w[t] * line[j];
                weights += w[t];
            }
            out[i] = std::min(255.0, std::max(0.0, std::floor(sum / weights + 0.5)));
        }
        return out;
    };
    const int W = in.width / 2, H = in.height / 2;
    std::vector<std::vector<double>> rows(in.height * 3);
    for (int y = 0; y < in.height; ++y)
        for (int c = 0; c < 3; ++c) {
            std::vector<double> line(in.width);
            for (int x = 0; x < in.width; ++x) line[x] = in.pixels[(y * in.width + x) * 3 + c];
            rows[y * 3 + c] = pass(line);
        }
    RgbImage out{W, H, std::vector<std::uint8_t>(static_cast<std::size_t>(W) * H * 3)};
    for (int x = 0; x < W; ++x)
        for (int c = 0; c < 3; ++c) {
            std::vector<double> column(in.height);
            for (int y = 0; y < in.height; ++y) column[y] = rows[y * 3 + c][x];
            const auto v = pass(column);
            for (int y = 0; y < H; ++y) out.pixels[(y * W + x) * 3 + c] = static_cast<std::uint8_t>(v[y]);
        }
    return out;
}

void requireClassesMatch(const Trace& trace, const Reference& ref) {
    REQUIRE(trace.classLabels() == std::vector<std::string>{"class0", "class1", "class2", "class3", "class4"});
    double mx = -1e300, sum = 0;
    for (double z : ref.logits) mx = std::max(mx, z);
    for (double z : ref.logits) sum += std::exp(z - mx);
    for (std::size_t i = 0; i < ref.logits.size(); ++i)
        REQUIRE(trace.classProbabilities()[i] == Approx(std::exp(ref.logits[i] - mx) / sum).margin(1e-5));
}

}  // namespace

TEST_CASE("ViT: patch attention and the predicted class equal an independent computation", "[vit]") {
    VitSpec spec;
    const Checkpoint c = makeVit(spec, 5);
    auto model = writeAndLoad(c, "vit");
    CHECK(model->info().imageInput);
    CHECK(model->info().imageSize == 16);
    CHECK(model->info().patchSize == 4);
    const RgbImage image = randomImage(16, 16, 1);
    auto trace = model->forwardImage(image);
    const double half[3] = {0.5, 0.5, 0.5};
    const Reference ref = referenceVit(c, spec, normalised(image, 1 / 255.0, half, half));
    const double diff = maxMapDiff(*trace, ref);
    INFO("vit: max |map - reference| " << diff);
    CHECK(diff < 2e-6);
    requireClassesMatch(*trace, ref);
    REQUIRE(trace->tokens().size() == 17);
    CHECK(trace->tokens()[0] == "[CLS]");
    CHECK(trace->tokens()[1] == "r0c0");
    CHECK(trace->tokens()[6] == "r1c1");
    CHECK(trace->tokens()[16] == "r3c3");
    CHECK_FALSE(trace->blocks()[0].causal);
}

TEST_CASE("ViT without a classifier: final hidden states and their change under head masking", "[vit][hidden]") {
    VitSpec spec;
    spec.labels = 0;  // ViTModel: no head
    const Checkpoint c = makeVit(spec, 8);
    auto model = writeAndLoad(c, "vit-base");
    const RgbImage image = randomImage(16, 16, 2);
    auto trace = model->forwardImage(image);
    CHECK(trace->classProbabilities().empty());
    const double half[3] = {0.5, 0.5, 0.5};
    const Reference ref = referenceVit(c, spec, normalised(image, 1 / 255.0, half, half));
    REQUIRE(trace->finalHiddenWidth() == spec.hidden);
    REQUIRE(trace->finalHidden().size() == ref.hidden.size() * spec.hidden);
    double diff = 0;
    for (std::size_t t = 0; t < ref.hidden.size(); ++t)
        for (int e = 0; e < spec.hidden; ++e)
            diff = std::max(diff, std::abs(trace->finalHidden()[t * spec.hidden + e] - ref.hidden[t][e]));
    INFO("vit: max |final hidden - reference| " << diff);
    CHECK(diff < 1e-5);

    // Masking a head: 1 - cos per token from the two traces' hidden states, computed here.
    RunOptions options;
    options.maskHeads = {{"", 1, 0}};
    const Rerun r = rerun(*model, *trace, options);
    REQUIRE(r.change.kind == "hidden");
    const std::vector<float>&a = trace->finalHidden(), &b = r.trace->finalHidden();
    REQUIRE(r.change.cosineDistances.size() == ref.hidden.size());
    double mean = 0;
    for (std::size_t t = 0; t < ref.hidden.size(); ++t) {
        double dot = 0, na = 0, nb = 0;
        for (int e = 0; e < spec.hidden; ++e) {
            const double x = a[t * spec.hidden + e], y = b[t * spec.hidden + e];
            dot += x * y, na += x * x, nb += y * y;
        }
        const double want = 1 - dot / std::sqrt(na * nb);
        CHECK(r.change.cosineDistances[t] == Approx(want).margin(1e-9));
        mean += want / ref.hidden.size();
    }
    CHECK(mean > 1e-4);
    CHECK(r.change.magnitude() == Approx(mean).margin(1e-12));

    // With a classifier, the class probabilities are the output; no hidden states are kept.
    auto classifier = writeAndLoad(makeVit(VitSpec{}, 8), "vit-head")->forwardImage(image);
    CHECK(classifier->finalHiddenWidth() == 0);
    CHECK(classifier->finalHidden().empty());
}

TEST_CASE("ViT: preprocessor_config.json resizes (PIL bilinear) and normalises", "[vit]") {
    VitSpec spec;
    spec.prefix = false;
    const Checkpoint c = makeVit(spec, 6);
    const auto dir = freshDir("vit-pre");
    writeCheckpoint(dir, c, WriteOptions{"BF16", 2});
    Checkpoint rounded = c;
    roundTensors(rounded, "BF16");
    writeText(dir / "preprocessor_config.json",
              R"({"do_resize": true, "size": {"height": 16, "width": 16}, "resample": 2, "do_rescale": true,
                  "rescale_factor": 0.00392156862745098, "do_normalize": true,
                  "image_mean": [0.485, 0.456, 0.406], "image_std": [0.229, 0.224, 0.225]})");
    auto model = loadCpu(dir);
    const RgbImage image = randomImage(32, 32, 2);
    auto trace = model->forwardImage(image);
    const double mean[3] = {0.485, 0.456, 0.406}, std[3] = {0.229, 0.224, 0.225};
    const Reference ref = referenceVit(rounded, spec, normalised(halve(image), 0.00392156862745098, mean, std));
    const double diff = maxMapDiff(*trace, ref);
    INFO("vit resized: max |map - reference| " << diff);
    CHECK(diff < 2e-6);
    requireClassesMatch(*trace, ref);
}

TEST_CASE("ViT: bad images, configs and inputs are errors that say so", "[vit]") {
    VitSpec spec;
    auto model = writeAndLoad(makeVit(spec, 7), "vit-input");
    CHECK_THROWS_WITH(model->forward({1, 2}), Catch::Contains("takes an image, not token ids"));
    CHECK_THROWS_WITH(model->forwardImage(RgbImage{4, 4, std::vector<std::uint8_t>(47)}),
                      Catch::Contains("image: 47 bytes for 4×4 RGB pixels"));
    CHECK_THROWS_WITH(model->forwardImage(RgbImage{0, 4, {}}), Catch::Contains("is not a valid size"));

    Checkpoint c = makeVit(spec, 7);
    c.config["id2label"] = {{"0", "a"}, {"1", "b"}};
    auto dir = freshDir("vit-bad");
    writeCheckpoint(dir, c);
    CHECK_THROWS_WITH(loadCpu(dir), Catch::Contains("'id2label' has 2 labels but the classifier has 5"));
    c = makeVit(spec, 7);
    c.config["image_size"] = 18;
    dir = freshDir("vit-bad");
    writeCheckpoint(dir, c);
    CHECK_THROWS_WITH(loadCpu(dir), Catch::Contains("'image_size' (18) must be a multiple of patch_size (4)"));
    dir = freshDir("vit-bad");
    writeCheckpoint(dir, makeVit(spec, 7));
    writeText(dir / "preprocessor_config.json", R"({"size": {"height": 32, "width": 32}})");
    CHECK_THROWS_WITH(loadCpu(dir), Catch::Contains("'size' 32×32 differs from config.json's image_size 16"));
    writeText(dir / "preprocessor_config.json", R"({"image_std": [0.5, 0, 0.5]})");
    CHECK_THROWS_WITH(loadCpu(dir), Catch::Contains("'image_std' must be positive"));
    writeText(dir / "preprocessor_config.json", R"({"do_resize": false})");
    CHECK_THROWS_WITH(loadCpu(dir)->forwardImage(randomImage(8, 8, 1)),
                      Catch::Contains("8×8 pixels but the model takes 16×16 and its preprocessor does not resize"));
}

}  // namespace test_vit
