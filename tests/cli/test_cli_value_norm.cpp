// attention --source value-norm|value-norm-layer through the CLI: the .npy shapes, values against a
// double-precision reference written here from the checkpoint (plain loops), the default weights
// unchanged byte for byte, and the refusals (exit 2, one line).
#include "attnscope/analysis/value_norm.h"
#include "attnscope/models/model.h"
#include "cli_run.h"
#include "fixtures_seq2seq.h"
#include "gpt2_fixture.h"
#include "npy_read.h"
#include "reference_gpt2.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>

namespace test_cli_value_norm {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

const std::vector<long long> kIds = {3, 17, 0, 37, 22, 5, 5, 11, 30};

const Gpt2Checkpoint& gpt2() {
    static const Gpt2Checkpoint c = makeGpt2(Gpt2Spec{}, 9);
    return c;
}

std::filesystem::path gpt2Folder() {
    static const auto dir = [] {
        auto d = freshDir("cli-valnorm-model");
        writeGpt2Folder(d, gpt2());
        return d;
    }();
    return dir;
}

// f[l][h][j][e] = f_h(x̃_j) of layer l: the reference's value vectors through c_proj's rows of head h.
std::vector<std::vector<std::vector<std::vector<double>>>> headOutputs(const Gpt2Reference& ref, int n) {
    const Gpt2Spec& s = gpt2().spec;
    const int E = s.embd, H = s.heads, d = E / H;
    std::vector<std::vector<std::vector<std::vector<double>>>> f(s.layers);
    for (int l = 0; l < s.layers; ++l) {
        const Tensor& wo = gpt2().get("h." + std::to_string(l) + ".attn.c_proj.weight");  // [H·d, E]
        f[l].assign(H, std::vector<std::vector<double>>(n, std::vector<double>(E, 0.0)));
        for (int h = 0; h < H; ++h)
            for (int j = 0; j < n; ++j)
                for (int e = 0; e < E; ++e)
                    for (int k = 0; k < d; ++k)
                        f[l][h][j][e] += ref.v[l][h][j * d + k] * wo.values[(h * d + k) * E + e];
    }
    return f;
}

double norm(const std::vector<double>& x) {
    double sq = 0;
    for (double v : x) sq += v * v;
    return std::sqrt(sq);
}

CliResult attention(const std::filesystem::path& out, const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"attention", gpt2Folder().string(), "--ids", "3,17,0,37,22,5,5,11,30",
                                     "--out",     out.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return runCli(args);
}

}  // namespace

TEST_CASE("cli attention --source value-norm and value-norm-layer write the reference's norms", "[cli][value_norm]") {
    const Gpt2Spec& s = gpt2().spec;
    const int n = static_cast<int>(kIds.size()), H = s.heads;
    const Gpt2Reference ref = referenceGpt2(gpt2(), kIds);
    const auto f = headOutputs(ref, n);

    const auto out = freshDir("cli-valnorm-head");
    const CliResult r = attention(out, {"--source", "value-norm"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    const NpyArray a = readNpy(out / "attention.npy");
    REQUIRE(a.shape == std::vector<std::int64_t>{s.layers, H, n, n});
    double worst = 0, biggest = 0;
    for (int l = 0; l < s.layers; ++l)
        for (int h = 0; h < H; ++h)
            for (int i = 0; i < n; ++i)
                for (int j = 0; j < n; ++j) {
                    const double want = ref.probs[l][h][i * n + j] * norm(f[l][h][j]);
                    worst = std::max(worst, std::abs(a.values[((l * H + h) * n + i) * n + j] - want));
                    biggest = std::max(biggest, want);
                }
    INFO("value-norm: max |npy - reference| " << worst << " of " << biggest);
    CHECK(worst <= 1e-5 * std::max(1.0, biggest));
    CHECK(biggest > 1e-2);
    CHECK(nlohmann::json::parse(slurpFile(out / "tokens.json")).at("map_source") == "value-norm");

    const auto layerOut = freshDir("cli-valnorm-layer");
    const CliResult rl = attention(layerOut, {"--source", "value-norm-layer"});
    INFO(rl.err);
    REQUIRE(rl.code == 0);
    CHECK_THAT(rl.err, Catch::Contains("attention.npy [2, 1, 9, 9]"));
    const NpyArray b = readNpy(layerOut / "attention.npy");
    REQUIRE(b.shape == std::vector<std::int64_t>{s.layers, 1, n, n});
    worst = biggest = 0;
    for (int l = 0; l < s.layers; ++l)
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) {
                std::vector<double> sum(static_cast<std::size_t>(s.embd), 0.0);
                for (int h = 0; h < H; ++h)
                    for (int e = 0; e < s.embd; ++e) sum[e] += ref.probs[l][h][i * n + j] * f[l][h][j][e];
                const double want = norm(sum);
                worst = std::max(worst, std::abs(b.values[(l * n + i) * n + j] - want));
                biggest = std::max(biggest, want);
            }
    INFO("value-norm-layer: max |npy - reference| " << worst << " of " << biggest);
    CHECK(worst <= 1e-5 * std::max(1.0, biggest));
    CHECK(biggest > 1e-2);
    CHECK(nlohmann::json::parse(slurpFile(layerOut / "tokens.json")).at("map_source") == "value-norm-layer");
}

TEST_CASE("cli attention --source weights is the default, byte for byte", "[cli][value_norm]") {
    const auto plain = freshDir("cli-valnorm-plain"), weights = freshDir("cli-valnorm-weights");
    REQUIRE(attention(plain, {}).code == 0);
    REQUIRE(attention(weights, {"--source", "weights"}).code == 0);
    CHECK(slurpFile(plain / "attention.npy") == slurpFile(weights / "attention.npy"));
    CHECK(slurpFile(plain / "tokens.json") == slurpFile(weights / "tokens.json"));
    CHECK_FALSE(nlohmann::json::parse(slurpFile(plain / "tokens.json")).contains("map_source"));
}

TEST_CASE("cli attention --source refuses unknown sources and display options", "[cli][value_norm]") {
    const auto out = freshDir("cli-valnorm-bad");
    requireCliInputError(attention(out, {"--source", "values"}),
                         "unknown map source 'values' (accepted: weights, value-norm, value-norm-layer, alti, "
                         "alti-rollout, grad-weighted, relevance, score-c2c, score-c2p, score-p2c)");
    requireCliInputError(attention(out, {"--source", "value-norm", "--variant", "linear"}),
                         "--source value-norm weights the model's own maps; it does not take --variant");
    requireCliInputError(attention(out, {"--source", "value-norm-layer", "--temperature", "2"}),
                         "--temperature needs --propagate");

    CHECK_FALSE(std::filesystem::exists(out / "attention.npy"));
}

TEST_CASE("cli attention --source value-norm of a built-in model writes core's maps of each head",
          "[cli][value_norm]") {
    const auto out = freshDir("cli-valnorm-builtin");
    for (const std::string kind : {"dot", "additive", "linear"}) {
        INFO(kind);
        const CliResult r = runCli({"attention", "builtin:sentiment-" + kind, "--ids", "1,2,3", "--source",
                                    "value-norm", "--out", out.string()});
        INFO(r.err);
        REQUIRE(r.code == 0);
        LoadOptions load;
        load.device = DeviceChoice::Cpu;
        RunOptions run;
        run.captureValues = true;
        const auto trace = Model::load("builtin:sentiment-" + kind, load)->forward({1, 2, 3}, run);
        const BlockInfo& info = trace->blocks()[0];
        const NpyArray a = readNpy(out / "attention.npy");
        REQUIRE(a.shape == std::vector<std::int64_t>{info.layers, info.heads, 3, 3});
        double biggest = 0;
        for (int l = 0; l < info.layers; ++l)
            for (int h = 0; h < info.heads; ++h) {
                const HeadMap m = valueNormMap(*trace, 0, l, h);
                for (int c = 0; c < 9; ++c) {
                    CHECK(a.values[static_cast<std::size_t>((l * info.heads + h) * 9 + c)] == m.values[c]);
                    biggest = std::max<double>(biggest, m.values[c]);
                }
            }
        CHECK(biggest > 0.1);  // raw norms, not probabilities
    }
}

TEST_CASE("cli attention --source covers BERT (as core computes it) and every block of T5", "[cli][value_norm]") {
    const auto bert = freshDir("cli-valnorm-bert");
    writeCheckpoint(bert, makeBert(BertSpec{}, 4));
    const auto out = freshDir("cli-valnorm-bert-out");
    const CliResult r = runCli(
            {"attention", bert.string(), "--ids", "2,7,9,3,11", "--source", "value-norm", "--out", out.string()});
    INFO(r.err);
    REQUIRE(r.code == 0);
    const NpyArray a = readNpy(out / "attention.npy");
    REQUIRE(a.shape == std::vector<std::int64_t>{2, 3, 5, 5});
    LoadOptions load;
    load.device = DeviceChoice::Cpu;
    RunOptions run;
    run.captureValues = true;
    const auto trace = Model::load(bert, load)->forward({2, 7, 9, 3, 11}, run);
    for (int l = 0; l < 2; ++l)
        for (int h = 0; h < 3; ++h) {
            const HeadMap m = valueNormMap(*trace, 0, l, h);
            CHECK(std::equal(m.values.begin(), m.values.end(), a.values.begin() + (l * 3 + h) * 25));
        }

    const auto t5 = freshDir("cli-valnorm-t5");
    writeCheckpoint(t5, makeT5(T5Spec{}, 71));  // 3 heads of width 10 over a width of 24
    const auto t5Out = freshDir("cli-valnorm-t5-out");
    const CliResult rt = runCli({"attention", t5.string(), "--ids", "5,9,13,2,1", "--target-ids", "0,7,3,8", "--source",
                                 "value-norm-layer", "--out", t5Out.string()});
    INFO(rt.err);
    REQUIRE(rt.code == 0);
    for (const auto& [file, shape] : std::vector<std::pair<std::string, std::vector<std::int64_t>>>{
                 {"encoder.npy", {2, 1, 5, 5}}, {"decoder.npy", {3, 1, 4, 4}}, {"cross.npy", {3, 1, 4, 5}}}) {
        const NpyArray b = readNpy(t5Out / file);
        INFO(file);
        CHECK(b.shape == shape);
        CHECK(*std::max_element(b.values.begin(), b.values.end()) > 0);
        CHECK(std::all_of(b.values.begin(), b.values.end(), [](float v) { return std::isfinite(v) && v >= 0; }));
    }
}

}  // namespace test_cli_value_norm
