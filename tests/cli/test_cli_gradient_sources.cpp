// attention --source grad-weighted|relevance through the CLI: the .npy shapes and values (core's
// gradientSources in this process, itself tested against finite differences in
// tests/core/analysis), tokens.json's target, label and s against the independent reference, and
// the refusals (exit 2, one line).
#include "attnscope/analysis/gradient_sources.h"
#include "attnscope/models/model.h"
#include "cli_run.h"
#include "family_fixtures.h"
#include "fixtures_seq2seq.h"
#include "gpt2_fixture.h"
#include "npy_read.h"
#include "reference_gpt2.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <sstream>

namespace test_cli_gradient_sources {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

const std::vector<long long> kIds = {3, 17, 0, 37, 22, 5, 11};
const char* const kIdText = "3,17,0,37,22,5,11";

const Gpt2Checkpoint& gpt2() {
    static const Gpt2Checkpoint c = makeGpt2(Gpt2Spec{}, 9);
    return c;
}

std::filesystem::path gpt2Folder() {
    static const auto dir = [] {
        auto d = freshDir("cli-grad-model");
        writeGpt2Folder(d, gpt2());
        return d;
    }();
    return dir;
}

CliResult attention(const std::filesystem::path& out, const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"attention", gpt2Folder().string(), "--ids", kIdText, "--out", out.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return runCli(args);
}

std::shared_ptr<const Model> loadCpu(const std::filesystem::path& dir) {
    LoadOptions load;
    load.device = DeviceChoice::Cpu;
    return Model::load(dir, load);
}

double maxDiff(const std::vector<float>& a, const std::vector<float>& b) {
    REQUIRE(a.size() == b.size());
    double worst = 0;
    for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, double(std::abs(a[i] - b[i])));
    return worst;
}

}  // namespace

TEST_CASE("cli attention --source grad-weighted and relevance write core's maps and the explained target",
          "[cli][gradient_sources]") {
    const int n = static_cast<int>(kIds.size());
    const Gpt2Reference ref = referenceGpt2(gpt2(), kIds);
    const auto best =
            std::max_element(ref.nextTokenLogits.begin(), ref.nextTokenLogits.end()) - ref.nextTokenLogits.begin();
    GradientInput in;
    in.text.ids = {kIds.begin(), kIds.end()};
    const GradientMaps core = gradientSources(*loadCpu(gpt2Folder()), in, GradientTarget{});

    const auto out = freshDir("cli-grad-weighted");
    const CliResult r = attention(out, {"--source", "grad-weighted"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.err, Catch::Contains("attention.npy [2, 4, 7, 7]"));
    const NpyArray a = readNpy(out / "attention.npy");
    REQUIRE(a.shape == std::vector<std::int64_t>{2, 4, n, n});
    CHECK(maxDiff(a.values, core.gradWeighted) <= 1e-6);
    CHECK(*std::max_element(a.values.begin(), a.values.end()) > 1e-2);
    const auto tokens = nlohmann::json::parse(slurpFile(out / "tokens.json"));
    CHECK(tokens.at("map_source") == "grad-weighted");
    CHECK(tokens.at("target_kind") == "token");
    CHECK(tokens.at("target") == best);
    CHECK(tokens.at("target_label") == "t" + std::to_string(best));
    CHECK(tokens.at("score").get<double>() == Approx(ref.nextTokenLogits[best]).margin(1e-4));
    CHECK(tokens.at("tokens").size() == kIds.size());

    const auto rel = freshDir("cli-grad-relevance");
    const CliResult rr = attention(rel, {"--source", "relevance", "--target-token", "7"});
    INFO(rr.err);
    REQUIRE(rr.code == 0);
    const NpyArray b = readNpy(rel / "attention.npy");
    REQUIRE(b.shape == std::vector<std::int64_t>{2, 1, n, n});
    GradientTarget seven;
    seven.token = 7;
    CHECK(maxDiff(b.values, gradientSources(*loadCpu(gpt2Folder()), in, seven).relevance) <= 1e-6);
    const auto relTokens = nlohmann::json::parse(slurpFile(rel / "tokens.json"));
    CHECK(relTokens.at("map_source") == "relevance");
    CHECK(relTokens.at("target") == 7);
    CHECK(relTokens.at("score").get<double>() == Approx(ref.nextTokenLogits[7]).margin(1e-4));
}

TEST_CASE("cli attention --source grad-weighted explains a ViT class by index or label", "[cli][gradient_sources]") {
    const auto dir = freshDir("cli-grad-vit");
    writeCheckpoint(dir, makeVit(VitSpec{}, 5));
    const auto ppm = dir / "picture.ppm";  // read with or without Qt
    {
        std::ofstream f(ppm, std::ios::binary);
        f << "P6\n16 16\n255\n";
        for (int i = 0; i < 16 * 16 * 3; ++i) f.put(static_cast<char>((i * 37) % 251));
    }
    const auto out = freshDir("cli-grad-vit-out");
    const CliResult r = runCli({"attention", dir.string(), "--image", ppm.string(), "--source", "relevance",
                                "--target-class", "class3", "--out", out.string()});
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(readNpy(out / "attention.npy").shape == std::vector<std::int64_t>{2, 1, 17, 17});
    const auto tokens = nlohmann::json::parse(slurpFile(out / "tokens.json"));
    CHECK(tokens.at("target_kind") == "class");
    CHECK(tokens.at("target") == 3);
    CHECK(tokens.at("target_label") == "class3");
    CHECK(tokens.at("tokens").at(0) == "[CLS]");
    CHECK(tokens.at("tokens").at(16) == "r3c3");

    const auto byIndex = freshDir("cli-grad-vit-index");
    REQUIRE(runCli({"attention", dir.string(), "--image", ppm.string(), "--source", "relevance", "--target-class", "3",
                    "--out", byIndex.string()})
                    .code == 0);
    CHECK(slurpFile(byIndex / "attention.npy") == slurpFile(out / "attention.npy"));
    requireOneLineError(runCli({"attention", dir.string(), "--image", ppm.string(), "--source", "grad-weighted",
                                "--target-class", "5", "--out", byIndex.string()}),
                        "target class 5 is outside the classes (0..4)");
    requireOneLineError(runCli({"attention", dir.string(), "--image", ppm.string(), "--source", "grad-weighted",
                                "--target-token", "5", "--out", byIndex.string()}),
                        "--target-token is for decoder language models; vit explains a class (--target-class)");
}

TEST_CASE("cli attention --source grad-weighted explains a BERT classifier's class", "[cli][gradient_sources]") {
    const auto dir = freshDir("cli-grad-bert-cls");
    BertSpec spec;
    spec.labels = 3;
    writeCheckpoint(dir, makeBert(spec, 4));
    const auto out = freshDir("cli-grad-bert-cls-out");
    const CliResult r = runCli({"attention", dir.string(), "--ids", "2,7,9,3,11", "--attend", "1,1,1,1,0", "--source",
                                "grad-weighted", "--target-class", "class2", "--out", out.string()});
    INFO(r.err);
    REQUIRE(r.code == 0);
    const NpyArray a = readNpy(out / "attention.npy");
    REQUIRE(a.shape == std::vector<std::int64_t>{2, 3, 5, 5});
    GradientInput in;
    in.text.ids = {2, 7, 9, 3, 11};
    in.text.attend = {1, 1, 1, 1, 0};
    GradientTarget target;
    target.classIndex = 2;
    const GradientMaps core = gradientSources(*loadCpu(dir), in, target);
    CHECK(maxDiff(a.values, core.gradWeighted) <= 1e-6);
    for (int l = 0; l < 2; ++l)  // the padding key gets no attention, so no gradient weight
        for (int h = 0; h < 3; ++h)
            for (int i = 0; i < 5; ++i) CHECK(a.values[((l * 3 + h) * 5 + i) * 5 + 4] == 0.f);
    const auto tokens = nlohmann::json::parse(slurpFile(out / "tokens.json"));
    CHECK(tokens.at("target") == 2);
    CHECK(tokens.at("target_label") == "class2");
    CHECK(tokens.at("score").get<double>() == Approx(core.score).margin(1e-6));
}

TEST_CASE("cli attention gradient sources refuse bad targets and uncovered models in one line",
          "[cli][gradient_sources]") {
    const auto out = freshDir("cli-grad-bad");
    requireOneLineError(attention(out, {"--source", "grad-weighted", "--target-token", "40"}),
                        "target token 40 is outside the vocabulary (0..39)");
    requireOneLineError(attention(out, {"--source", "grad-weighted", "--target-class", "1"}),
                        "--target-class is for classifiers; gpt2 is a language model (--target-token)");
    requireCliExit(attention(out, {"--target-token", "3"}), 1,
                   "--target-token and --target-class need --source grad-weighted|relevance");
    requireCliExit(attention(out, {"--source", "relevance", "--prune", "entropy"}), 1,
                   "--prune does not go with --source relevance");

    const auto bert = freshDir("cli-grad-bert");
    writeCheckpoint(bert, makeBert(BertSpec{}, 4));
    requireOneLineError(
            runCli({"attention", bert.string(), "--ids", "2,7,9", "--source", "relevance", "--out", out.string()}),
            "bert here is an encoder without a task head, so it has no output to explain");
    const auto t5 = freshDir("cli-grad-t5");
    writeCheckpoint(t5, makeT5(T5Spec{}, 71));
    requireOneLineError(
            runCli({"attention", t5.string(), "--ids", "5,9,13", "--source", "grad-weighted", "--out", out.string()}),
            "t5 is an encoder–decoder, whose decoder and cross blocks mix two streams");
    CHECK_FALSE(std::filesystem::exists(out / "attention.npy"));
}

namespace {

// Entropy and mean distance of a signed map measured as shares (|g| over each row's sum of |g|),
// in plain double loops, averaged over the rows that have any mass (as metrics --source does).
std::pair<double, double> sharesEntropyDistance(const HeadMap& m) {
    double entropy = 0, distance = 0;
    int used = 0;
    for (int i = 0; i < m.rows; ++i) {
        double total = 0;
        for (int j = 0; j < m.cols; ++j) total += std::abs(double(m.at(i, j)));
        if (total == 0) continue;
        ++used;
        for (int j = 0; j < m.cols; ++j) {
            const double p = std::abs(double(m.at(i, j))) / total;
            if (p > 0) entropy -= p * std::log(p);
            distance += p * std::abs(j - i);
        }
    }
    return {entropy / used, distance / used};
}

}  // namespace

TEST_CASE("cli metrics --source grad-weighted and relevance measure core's gradient maps for the target",
          "[cli][gradient_sources]") {
    GradientInput in;
    in.text.ids = {kIds.begin(), kIds.end()};
    GradientTarget target;
    target.token = 7;
    const GradientMaps core = gradientSources(*loadCpu(gpt2Folder()), in, target);
    const auto dir = freshDir("cli-grad-metrics");
    const auto metrics = [&](const std::string& file, const std::vector<std::string>& extra) {
        std::vector<std::string> args = {"metrics", gpt2Folder().string(), "--ids", kIdText,
                                         "--out",   (dir / file).string()};
        args.insert(args.end(), extra.begin(), extra.end());
        return runCli(args);
    };

    const CliResult r = metrics("g.json", {"--source", "grad-weighted", "--target-token", "7"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.err, Catch::Contains("8 heads, grad-weighted"));
    const auto j = nlohmann::json::parse(slurpFile(dir / "g.json"));
    CHECK(j.at("map_source") == "grad-weighted");
    CHECK(j.at("target_kind") == "token");
    CHECK(j.at("target") == 7);
    CHECK(j.at("score").get<double>() == Approx(core.score).margin(1e-6));
    REQUIRE(j.at("heads").size() == 8);  // 2 layers × 4 heads
    for (int l = 0; l < 2; ++l)
        for (int h = 0; h < 4; ++h) {
            INFO("layer " << l << " head " << h);
            const auto& row = j.at("heads")[std::size_t(l * 4 + h)];
            CHECK(row.at("layer") == l);
            CHECK(row.at("head") == h);
            const auto [entropy, distance] = sharesEntropyDistance(core.map(MapSource::GradWeighted, l, h));
            CHECK(row.at("entropy").get<double>() == Approx(entropy).margin(1e-5));
            CHECK(row.at("mean_distance").get<double>() == Approx(distance).margin(1e-5));
            CHECK(row.at("kl_dot_linear").is_null());
        }

    // Relevance: one row per layer (head -1), the default target (the model's argmax) as attention's.
    const GradientMaps best = gradientSources(*loadCpu(gpt2Folder()), in, GradientTarget{});
    const CliResult rr = metrics("rel.csv", {"--source", "relevance"});
    INFO(rr.err);
    REQUIRE(rr.code == 0);
    const std::string csv = slurpFile(dir / "rel.csv");
    std::istringstream lines(csv);
    std::string line;
    std::vector<std::string> rows;
    while (std::getline(lines, line)) rows.push_back(line);
    REQUIRE(rows.size() == 3);  // header + 2 layers
    for (int l = 0; l < 2; ++l) {
        std::vector<std::string> cells;
        std::istringstream in(rows[std::size_t(l + 1)]);
        for (std::string c; std::getline(in, c, ',');) cells.push_back(c);
        REQUIRE(cells.size() > 3);
        CHECK(cells[1] == std::to_string(l));
        CHECK(cells[2] == "-1");
        CHECK(std::stod(cells[3]) ==
              Approx(sharesEntropyDistance(best.map(MapSource::Relevance, l, 0)).first).margin(1e-5));
    }

    // Refusals: a target without a gradient source (usage, exit 1), a class for a language model (exit 2).
    requireCliExit(metrics("x.json", {"--target-token", "3"}), 1,
                   "--target-token and --target-class need --source grad-weighted|relevance");
    requireOneLineError(metrics("x.json", {"--source", "relevance", "--target-class", "1"}),
                        "--target-class is for classifiers; gpt2 is a language model (--target-token)");
    requireOneLineError(metrics("x.json", {"--source", "grad-weighted", "--target-token", "40"}),
                        "target token 40 is outside the vocabulary (0..39)");
    CHECK_FALSE(std::filesystem::exists(dir / "x.json"));
}

TEST_CASE("cli metrics --source relevance explains a ViT class by label", "[cli][gradient_sources]") {
    const auto dir = freshDir("cli-grad-metrics-vit");
    writeCheckpoint(dir, makeVit(VitSpec{}, 5));
    const auto ppm = dir / "picture.ppm";
    {
        std::ofstream f(ppm, std::ios::binary);
        f << "P6\n16 16\n255\n";
        for (int i = 0; i < 16 * 16 * 3; ++i) f.put(static_cast<char>((i * 37) % 251));
    }
    const CliResult r = runCli({"metrics", dir.string(), "--image", ppm.string(), "--source", "relevance",
                                "--target-class", "class3", "--out", (dir / "m.json").string()});
    INFO(r.err);
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(slurpFile(dir / "m.json"));
    CHECK(j.at("target_kind") == "class");
    CHECK(j.at("target") == 3);
    CHECK(j.at("target_label") == "class3");
    REQUIRE(j.at("heads").size() == 2);  // one per layer
    CHECK(j.at("heads")[1].at("head") == -1);
}

}  // namespace test_cli_gradient_sources
