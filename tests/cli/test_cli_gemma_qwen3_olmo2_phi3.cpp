// attnscope-cli on the RMSNorm decoder families: `attention --ids` writes the reference's maps
// (temperature inside included), bad configs exit 2 with one line naming the file and the field.
#include "cli_run.h"
#include "fixtures_gemma.h"
#include "npy_read.h"

#include <cmath>

namespace test_cli_gemma_qwen3_olmo2_phi3 {

using namespace attnscope::testing;

namespace {

const std::vector<long long> kIds = {3, 17, 0, 47, 22, 5, 5, 11, 30};
const std::string kIdText = "3,17,0,47,22,5,5,11,30";

double maxNpyDiff(const NpyArray& maps, const Reference& ref, int layers, int heads, int n) {
    REQUIRE(maps.shape == std::vector<std::int64_t>{layers, heads, n, n});
    double worst = 0;
    for (int l = 0; l < layers; ++l)
        for (int h = 0; h < heads; ++h)
            for (int i = 0; i < n * n; ++i)
                worst = std::max(worst, std::abs(maps.values[(l * heads + h) * n * n + i] - ref.probs[l][h][i]));
    return worst;
}

// Writes the family's checkpoint, runs `attention` (with extra arguments) and compares.
void requireCliMaps(const RmsFamilySpec& spec, const WriteOptions& o, double temperature = 1.0,
                    const std::vector<std::string>& extra = {}) {
    Checkpoint c = makeRmsFamily(spec, 5);
    roundTensors(c, o.dtype);
    const auto dir = freshDir("cli-" + spec.type);
    writeCheckpoint(dir, c, o);
    const auto out = freshDir("cli-" + spec.type + "-out");
    std::vector<std::string> args = {"attention", dir.string(), "--ids",    kIdText,
                                     "--out",     out.string(), "--device", "cpu"};
    args.insert(args.end(), extra.begin(), extra.end());
    const CliResult r = runCli(args);
    INFO(spec.type << ": " << r.err);
    REQUIRE(r.code == 0);
    const double diff = maxNpyDiff(readNpy(out / "attention.npy"), referenceRmsFamily(c, spec, kIds, temperature),
                                   spec.layers, spec.heads, static_cast<int>(kIds.size()));
    INFO(spec.type << ": max |map - reference| " << diff);
    CHECK(diff < 1e-5);
}

}  // namespace

TEST_CASE("cli attention on gemma, gemma2, gemma3_text, qwen3, olmo2 and phi3 equals the reference", "[cli][gemma]") {
    RmsFamilySpec gemma;
    requireCliMaps(gemma, WriteOptions{"BF16", 2});

    RmsFamilySpec gemma2;
    gemma2.type = "gemma2";
    gemma2.attnSoftcap = 1.5;
    gemma2.finalSoftcap = 2.0;
    gemma2.window = 3;
    gemma2.prefix = false;
    requireCliMaps(gemma2, WriteOptions{"F16", 3});
    // Temperature inside the model divides the capped logits.
    requireCliMaps(gemma2, WriteOptions{}, 2.0, {"--temperature", "2", "--propagate"});

    RmsFamilySpec gemma3;
    gemma3.type = "gemma3_text";
    gemma3.window = 4;
    gemma3.slidingPattern = 2;
    gemma3.localTheta = 100.0;
    gemma3.theta = 1e6;
    requireCliMaps(gemma3, WriteOptions{});

    RmsFamilySpec qwen3;
    qwen3.type = "qwen3";
    qwen3.useSlidingWindow = true;
    qwen3.window = 3;
    qwen3.maxWindowLayers = 2;
    requireCliMaps(qwen3, WriteOptions{"BF16", 2});

    RmsFamilySpec olmo2;
    olmo2.type = "olmo2";
    olmo2.tied = false;
    requireCliMaps(olmo2, WriteOptions{});

    RmsFamilySpec phi3;
    phi3.type = "phi3";
    phi3.tied = false;
    phi3.partialRotary = 0.5;
    phi3.originalPositions = 8;
    phi3.ropeScaling = {{"type", "longrope"}, {"short_factor", {1.0, 1.5}}, {"long_factor", {2.0, 7.0}}};
    requireCliMaps(phi3, WriteOptions{"F16", 2});
}

TEST_CASE("cli refuses contradicting gemma-family configs in one line", "[cli][gemma]") {
    RmsFamilySpec spec;
    spec.type = "gemma2";
    spec.window = 3;
    const auto out = freshDir("cli-gemma-bad-out");
    auto run = [&](const Checkpoint& c) {
        const auto dir = freshDir("cli-gemma-bad");
        writeCheckpoint(dir, c);
        return runCli({"attention", dir.string(), "--ids", "1,2,3", "--out", out.string(), "--device", "cpu"});
    };
    Checkpoint c = makeRmsFamily(spec, 1);
    c.config["layer_types"] = {"full_attention", "chunked_attention", "full_attention"};
    requireCliInputError(run(c), "config.json: 'layer_types' entry 1 is \"chunked_attention\"");
    c = makeRmsFamily(spec, 1);
    c.config["sliding_window"] = 100;
    requireCliInputError(run(c), "config.json: 'sliding_window' (100) is larger than max_position_embeddings (64)");
    c = makeRmsFamily(spec, 1);
    c.config["num_attention_heads"] = 3;
    requireCliInputError(run(c), "config.json: 'num_key_value_heads' (2) must divide num_attention_heads (3)");
    RmsFamilySpec phi3;
    phi3.type = "phi3";
    phi3.tied = false;
    c = makeRmsFamily(phi3, 1);
    c.tensors.erase("model.layers.0.self_attn.qkv_proj.weight");
    requireCliInputError(
            run(c), "'model.layers.0.self_attn.qkv_proj.weight' (or 'layers.0.self_attn.qkv_proj.weight') is missing");
    c = makeRmsFamily(phi3, 1);
    c.config["rope_scaling"] = {{"type", "mrope"}, {"factor", 2.0}};
    requireCliInputError(run(c), "config.json: 'rope_scaling' type 'mrope' is not supported");

    const auto dir = freshDir("cli-gemma-long");
    writeCheckpoint(dir, makeRmsFamily(RmsFamilySpec{}, 2));
    std::string ids = "1";
    for (int i = 1; i < 65; ++i) ids += ",1";
    requireCliInputError(runCli({"attention", dir.string(), "--ids", ids, "--out", out.string(), "--device", "cpu"}),
                         "65 tokens but the model has only 64 positions");
}

}  // namespace test_cli_gemma_qwen3_olmo2_phi3
