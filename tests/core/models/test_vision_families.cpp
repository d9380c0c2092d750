// DeiT and DINOv2 (with and without registers) on images against the independent references of
// tests/support/reference_vision.cpp, which interpolates positions as torch does (checked here
// against torch's own numbers, tests/data/vision/positions_golden.json).
#include "attnscope/runtime/error.h"
#include "family_checks.h"
#include "fixtures_vision.h"

#include <algorithm>
#include <cmath>
#include <fstream>

namespace test_vision_families {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

const double kHalf[3] = {0.5, 0.5, 0.5};
const double kClipMean[3] = {0.48145466, 0.4578275, 0.40821073}, kClipStd[3] = {0.26862954, 0.26130258, 0.27577711};

// The checkpoint in a fresh folder with a preprocessor_config.json that keeps an image of `size`
// pixels as it is: DeiT's resize and crop to that size, DINOv2's crop without a resize.
std::filesystem::path writeVision(const Checkpoint& c, const VisionModelSpec& s, int size, const std::string& name) {
    const auto dir = freshDir(name);
    writeCheckpoint(dir, c);
    const std::string side = std::to_string(size);
    if (s.type == "deit")
        writeText(dir / "preprocessor_config.json", R"({"image_processor_type": "DeiTImageProcessor", "size": )" +
                                                            side + R"(, "crop_size": )" + side + "}");
    else
        writeText(dir / "preprocessor_config.json",
                  R"({"image_processor_type": "BitImageProcessor", "do_resize": false, "crop_size": )" + side + "}");
    return dir;
}

void requireProbabilities(const Trace& trace, const Reference& ref) {
    REQUIRE(trace.classProbabilities().size() == ref.logits.size());
    double mx = -1e300, sum = 0;
    for (double z : ref.logits) mx = std::max(mx, z);
    for (double z : ref.logits) sum += std::exp(z - mx);
    for (std::size_t i = 0; i < ref.logits.size(); ++i)
        CHECK(trace.classProbabilities()[i] == Approx(std::exp(ref.logits[i] - mx) / sum).margin(1e-5));
}

bool hasNote(const Model& m, const std::string& note) {
    return std::find(m.info().notes.begin(), m.info().notes.end(), note) != m.info().notes.end();
}

}  // namespace

TEST_CASE("DeiT with its teacher's head: maps and the two heads' averaged logits equal the reference", "[deit]") {
    VisionModelSpec spec;
    const Checkpoint c = makeVisionModel(spec, 11);
    auto model = loadCpu(writeVision(c, spec, 16, "deit-teacher"));
    CHECK(model->info().family == "deit");
    CHECK(model->info().imageSize == 16);
    CHECK(model->info().imageSpecialTokens == std::vector<std::string>{"[CLS]", "[DIST]"});
    CHECK(hasNote(*model, "distillation token [DIST]"));
    const RgbImage image = noise(16, 1);
    auto trace = model->forwardImage(image);
    const Reference ref = referenceVisionModel(c, spec, normalised(image, kHalf, kHalf), 16);
    const double diff = maxMapDiff(*trace, ref);
    INFO("deit: max |map - reference| " << diff);
    // float32 forward against double: 2.007e-6 seen on an Emerald Rapids Xeon's AVX-512 (SkylakeX)
    // OpenBLAS kernels in the sanitizer build, as for the registers' case below.
    CHECK(diff < 3e-6);
    requireProbabilities(*trace, ref);
    REQUIRE(trace->tokens().size() == 18);
    CHECK(trace->tokens()[0] == "[CLS]");
    CHECK(trace->tokens()[1] == "[DIST]");
    CHECK(trace->tokens()[2] == "r0c0");
    CHECK(trace->tokens()[17] == "r3c3");

    // The distillation head matters: the [CLS] head's logits alone differ from the average.
    VisionModelSpec single = spec;
    single.teacher = false;
    Checkpoint clsOnly = c;
    clsOnly.tensors["classifier.weight"] = c.get("cls_classifier.weight");
    clsOnly.tensors["classifier.bias"] = c.get("cls_classifier.bias");
    const Reference refCls = referenceVisionModel(clsOnly, single, normalised(image, kHalf, kHalf), 16);
    double apart = 0;
    for (std::size_t i = 0; i < ref.logits.size(); ++i)
        apart = std::max(apart, std::abs(ref.logits[i] - refCls.logits[i]));
    CHECK(apart > 0.01);
}

TEST_CASE("DeiT for image classification (one head on [CLS]), without the deit. prefix", "[deit]") {
    VisionModelSpec spec;
    spec.teacher = false;
    spec.prefix = false;
    const Checkpoint c = makeVisionModel(spec, 12);
    auto model = loadCpu(writeVision(c, spec, 16, "deit-single"));
    const RgbImage image = noise(16, 2);
    auto trace = model->forwardImage(image);
    const Reference ref = referenceVisionModel(c, spec, normalised(image, kHalf, kHalf), 16);
    CHECK(maxMapDiff(*trace, ref) < 2e-6);
    requireProbabilities(*trace, ref);
}

TEST_CASE("DINOv2 at its image size: layer scale and the [CLS] + patch-mean classifier", "[dinov2]") {
    VisionModelSpec spec;
    spec.type = "dinov2";
    const Checkpoint c = makeVisionModel(spec, 13);
    auto model = loadCpu(writeVision(c, spec, 16, "dinov2-16"));
    CHECK(model->info().imageSpecialTokens == std::vector<std::string>{"[CLS]"});
    CHECK(hasNote(*model, "layer scale"));
    const RgbImage image = noise(16, 3);
    auto trace = model->forwardImage(image);
    const Reference ref = referenceVisionModel(c, spec, normalised(image, kClipMean, kClipStd), 16);
    const double diff = maxMapDiff(*trace, ref);
    INFO("dinov2: max |map - reference| " << diff);
    CHECK(diff < 3e-6);
    requireProbabilities(*trace, ref);
    CHECK(trace->tokens().size() == 17);
}

TEST_CASE("DINOv2 interpolates its positions (bicubic) to other image sizes", "[dinov2]") {
    VisionModelSpec spec;
    spec.type = "dinov2";
    spec.prefix = false;
    const Checkpoint c = makeVisionModel(spec, 14);
    for (int size : {24, 8, 28}) {
        INFO("input " << size << "×" << size);
        auto model = loadCpu(writeVision(c, spec, size, "dinov2-" + std::to_string(size)));
        const int g = size / 4;
        CHECK(model->info().imageSize == size);
        CHECK(hasNote(*model,
                      "positions interpolated (bicubic) from 4×4 to " + std::to_string(g) + "×" + std::to_string(g)));
        const RgbImage image = noise(size, 4);
        auto trace = model->forwardImage(image);
        REQUIRE(trace->tokens().size() == static_cast<std::size_t>(1 + g * g));
        const Reference ref = referenceVisionModel(c, spec, normalised(image, kClipMean, kClipStd), size);
        const double diff = maxMapDiff(*trace, ref);
        INFO("dinov2: max |map - reference| " << diff);
        CHECK(diff < 3e-6);
        requireProbabilities(*trace, ref);
    }
}

TEST_CASE("DINOv2 with the SwiGLU MLP (use_swiglu_ffn) equals the reference", "[dinov2]") {
    VisionModelSpec spec;
    spec.type = "dinov2";
    spec.swiglu = true;
    spec.mlpRatio = 4.0;  // int(24 · 4) = 96 -> (int(96 · 2/3) + 7) // 8 · 8 = 64
    const Checkpoint c = makeVisionModel(spec, 19);
    REQUIRE(c.get("dinov2.encoder.layer.0.mlp.weights_in.weight").shape == std::vector<std::int64_t>{128, 24});
    auto model = loadCpu(writeVision(c, spec, 24, "dinov2-swiglu"));
    CHECK(hasNote(*model, "SwiGLU MLP"));
    const RgbImage image = noise(24, 7);
    auto trace = model->forwardImage(image);
    const Reference ref = referenceVisionModel(c, spec, normalised(image, kClipMean, kClipStd), 24);
    const double diff = maxMapDiff(*trace, ref);
    INFO("dinov2 SwiGLU: max |map - reference| " << diff);
    CHECK(diff < 3e-6);
    requireProbabilities(*trace, ref);
}

TEST_CASE("DINOv2 with registers: [REG i] tokens, antialiased positions, final hidden states", "[dinov2]") {
    VisionModelSpec spec;
    spec.type = "dinov2_with_registers";
    spec.registers = 3;
    for (int size : {16, 24, 8}) {
        INFO("input " << size << "×" << size);
        const Checkpoint c = makeVisionModel(spec, 15);
        auto model = loadCpu(writeVision(c, spec, size, "dinov2-reg-" + std::to_string(size)));
        CHECK(model->info().imageSpecialTokens == std::vector<std::string>{"[CLS]", "[REG 1]", "[REG 2]", "[REG 3]"});
        CHECK(hasNote(*model, "3 registers"));
        if (size != 16)
            CHECK(hasNote(*model, "positions interpolated (bicubic, antialiased) from 4×4 to " +
                                          std::to_string(size / 4) + "×" + std::to_string(size / 4)));
        const RgbImage image = noise(size, 5);
        auto trace = model->forwardImage(image);
        CHECK(trace->tokens()[1] == "[REG 1]");
        CHECK(trace->tokens()[3] == "[REG 3]");
        CHECK(trace->tokens()[4] == "r0c0");
        const Reference ref = referenceVisionModel(c, spec, normalised(image, kClipMean, kClipStd), size);
        const double diff = maxMapDiff(*trace, ref);
        INFO("dinov2 with registers: max |map - reference| " << diff);
        CHECK(diff < 3e-6);  // float32 forward: 1.0e-6 to 2.3e-6 seen (the 8×8 input the largest)
        requireProbabilities(*trace, ref);
    }
    // Without a classifier (Dinov2WithRegistersModel) the output is the final LayerNorm's states.
    spec.labels = 0;
    const Checkpoint c = makeVisionModel(spec, 16);
    auto model = loadCpu(writeVision(c, spec, 24, "dinov2-reg-base"));
    const RgbImage image = noise(24, 6);
    auto trace = model->forwardImage(image);
    const Reference ref = referenceVisionModel(c, spec, normalised(image, kClipMean, kClipStd), 24);
    REQUIRE(trace->finalHiddenWidth() == spec.hidden);
    REQUIRE(trace->finalHidden().size() == ref.hidden.size() * spec.hidden);
    double diff = 0;
    for (std::size_t t = 0; t < ref.hidden.size(); ++t)
        for (int e = 0; e < spec.hidden; ++e)
            diff = std::max(diff, std::abs(trace->finalHidden()[t * spec.hidden + e] - ref.hidden[t][e]));
    INFO("max |final hidden - reference| " << diff);
    CHECK(diff < 2e-5);
}

TEST_CASE("The reference's bicubic position interpolation equals torch's (with and without antialias)", "[dinov2]") {
    const auto file =
            std::filesystem::path(ATTNSCOPE_TOKENIZER_DATA).parent_path() / "vision" / "positions_golden.json";
    nlohmann::json golden;
    std::ifstream(file) >> golden;
    const auto grid = golden["grid"].get<std::vector<double>>();
    REQUIRE(golden["cases"].size() == 8);
    for (const auto& c : golden["cases"]) {
        const int size = c["size"].get<int>();
        const bool aa = c["antialias"].get<bool>();
        INFO("size " << size << (aa ? " antialiased" : ""));
        const auto want = c["values"].get<std::vector<double>>();
        const auto got = referenceBicubic(grid, 4, 3, size, size, aa);
        REQUIRE(got.size() == want.size());
        for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).margin(1e-12));
    }
}

TEST_CASE("DeiT and DINOv2: bad configs and preprocessors name the file and the field", "[deit][dinov2]") {
    VisionModelSpec deit, dino;
    dino.type = "dinov2";
    auto errorFor = [](Checkpoint c, const VisionModelSpec& s, const std::string& key, const nlohmann::json& value,
                       const std::string& name) {
        c.config[key] = value;
        return loadErrorAt(writeVision(c, s, 16, name));
    };
    const Checkpoint d = makeVisionModel(deit, 17), v = makeVisionModel(dino, 18);
    CHECK_THAT(errorFor(d, deit, "num_channels", 1, "deit-bad"),
               Catch::Contains("config.json") && Catch::Contains("'num_channels' must be 3 (RGB)"));
    CHECK_THAT(errorFor(d, deit, "hidden_act", "swish", "deit-bad"),
               Catch::Contains("config.json") && Catch::Contains("'hidden_act'"));
    CHECK_THAT(errorFor(d, deit, "num_attention_heads", 5, "deit-bad"),
               Catch::Contains("'num_attention_heads' (5) must divide hidden_size (24)"));
    // use_swiglu_ffn on a checkpoint with fc1/fc2: the SwiGLU's tensor is named.
    CHECK_THAT(errorFor(v, dino, "use_swiglu_ffn", true, "dino-bad"), Catch::Contains("mlp.weights_in"));
    CHECK_THAT(errorFor(v, dino, "mlp_ratio", "four", "dino-bad"),
               Catch::Contains("config.json") && Catch::Contains("'mlp_ratio' must be a number"));
    VisionModelSpec reg = dino;
    reg.type = "dinov2_with_registers";
    CHECK_THAT(errorFor(makeVisionModel(reg, 19), reg, "num_register_tokens", -1, "reg-bad"),
               Catch::Contains("config.json") && Catch::Contains("'num_register_tokens' must be an integer"));
    // A checkpoint whose registers disagree with the config: the tensor is named.
    CHECK_THAT(errorFor(makeVisionModel(reg, 19), reg, "num_register_tokens", 5, "reg-bad"),
               Catch::Contains("embeddings.register_tokens"));

    // Preprocessors: DeiT's default crop (224²) differs from this checkpoint's image_size.
    auto dir = freshDir("deit-pre");
    writeCheckpoint(dir, d);
    CHECK_THAT(loadErrorAt(dir), Catch::Contains("preprocessor_config.json: 'crop_size' 224×224 differs from "
                                                 "config.json's image_size 16"));
    dir = writeVision(v, dino, 16, "dino-pre");
    writeText(dir / "preprocessor_config.json",
              R"({"image_processor_type": "BitImageProcessor", "do_center_crop": false})");
    CHECK_THAT(loadErrorAt(dir), Catch::Contains("preprocessor_config.json: 'size' is a shortest edge without a "
                                                 "center crop"));
    writeText(dir / "preprocessor_config.json", R"({"crop_size": {"height": 16, "width": 20}})");
    CHECK_THAT(loadErrorAt(dir), Catch::Contains("preprocessor_config.json: 'crop_size' 20×16 is not square"));
    writeText(dir / "preprocessor_config.json", R"({"size": {"longest_edge": 20}})");
    CHECK_THAT(loadErrorAt(dir), Catch::Contains("preprocessor_config.json: 'size' must be"));
    writeText(dir / "preprocessor_config.json", R"({"crop_size": 2})");
    CHECK_THAT(loadErrorAt(dir), Catch::Contains("'crop_size' 2×2 is smaller than one patch (4)"));
    auto model = loadCpu(writeVision(v, dino, 16, "dino-ids"));
    CHECK_THROWS_WITH(model->forward({1, 2}), Catch::Contains("dinov2 model at") && Catch::Contains("takes an image"));
}

}  // namespace test_vision_families
