// attnscope-cli's lab options and the metrics command, end to end against the reference.
#include "attnscope/analysis/metrics.h"
#include "gpt2_fixture.h"
#include "npy_read.h"
#include "reference_gpt2.h"

#include "cli_run.h"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <sys/wait.h>

namespace test_cli_lab {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

struct Setup {
    Gpt2Checkpoint checkpoint;
    std::filesystem::path model;
    std::vector<long long> ids = {3, 17, 42, 0, 9, 5};
    std::string idText = "3,17,42,0,9,5";
};

const Setup& setup() {
    static const Setup s = [] {
        Setup x;
        Gpt2Spec spec;
        spec.vocab = 50;
        x.checkpoint = makeGpt2(spec, 42);
        x.model = freshDir("cli-lab-model");
        writeGpt2Folder(x.model, x.checkpoint);
        return x;
    }();
    return s;
}

std::vector<double> softmaxOf(const std::vector<double>& z) {
    std::vector<double> p(z.size());
    const double mx = *std::max_element(z.begin(), z.end());
    double sum = 0;
    for (std::size_t i = 0; i < z.size(); ++i) sum += p[i] = std::exp(z[i] - mx);
    for (double& v : p) v /= sum;
    return p;
}

void requireBlockEquals(const NpyArray& a, const Gpt2Reference& ref, int layers, int heads, int n) {
    for (int l = 0; l < layers; ++l)
        for (int h = 0; h < heads; ++h)
            for (int i = 0; i < n * n; ++i) {
                INFO("layer " << l << " head " << h << " entry " << i);
                REQUIRE(a.values[(l * heads + h) * n * n + i] == Approx(ref.probs[l][h][i]).margin(2e-6));
            }
}

}  // namespace

TEST_CASE("cli attention --propagate and --mask-heads re-run the model and report the output change", "[cli][lab]") {
    const Setup& s = setup();
    const auto out = freshDir("cli-lab-propagate");
    const CliResult r =
            runCli({"attention", s.model.string(), "--ids", s.idText, "--out", out.string(), "--temperature", "2.5",
                    "--propagate", "--layers", "0", "--mask-heads", "1:2", "--top-k", "3"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    ReferenceRun run;
    run.temperature = 2.5;
    run.temperatureLayers = {0};
    run.maskedHeads = {{1, 2}};
    const auto ref = referenceGpt2(s.checkpoint, s.ids, run);
    const auto plain = referenceGpt2(s.checkpoint, s.ids);
    requireBlockEquals(readNpy(out / "attention.npy"), ref, 2, 4, 6);

    const auto p = softmaxOf(plain.nextTokenLogits), q = softmaxOf(ref.nextTokenLogits);
    double kl = 0;
    for (std::size_t i = 0; i < p.size(); ++i) kl += p[i] * std::log(p[i] / q[i]);
    const auto change = nlohmann::json::parse(slurpFile(out / "output_change.json"));
    CHECK(change["kind"] == "next-token");
    CHECK(change["kl"].get<double>() == Approx(kl).epsilon(1e-3));
    CHECK(change["changed_top"].size() == 3);
    CHECK(change["changed_top"][0]["id"] == std::max_element(q.begin(), q.end()) - q.begin());
    CHECK(change["intervention"] == "temperature 2.5 inside layers 0; masked heads 1:2");
    CHECK_THAT(r.out, Catch::Contains("KL(original || changed) = ") && Catch::Contains("rank  original"));
}

TEST_CASE("cli attention --prune masks the heads ranked most important", "[cli][lab]") {
    const Setup& s = setup();
    const auto out = freshDir("cli-lab-prune");
    const CliResult r = runCli({"attention", s.model.string(), "--ids", s.idText, "--out", out.string(), "--prune",
                                "entropy", "--prune-count", "2"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    // Rank by mean row entropy of the reference maps, lowest first.
    const auto plain = referenceGpt2(s.checkpoint, s.ids);
    std::vector<std::pair<double, int>> entropy;
    for (int l = 0; l < 2; ++l)
        for (int h = 0; h < 4; ++h) {
            double e = 0;
            for (int i = 0; i < 6; ++i)
                for (int k = 0; k <= i; ++k) {
                    const double p = plain.probs[l][h][i * 6 + k];
                    if (p > 0) e -= p * std::log(p) / 6;
                }
            entropy.push_back({e, l * 4 + h});
        }
    std::stable_sort(entropy.begin(), entropy.end(), [](auto& a, auto& b) { return a.first < b.first; });
    ReferenceRun run;
    for (int i = 0; i < 2; ++i) run.maskedHeads.push_back({entropy[i].second / 4, entropy[i].second % 4});
    const auto q = softmaxOf(referenceGpt2(s.checkpoint, s.ids, run).nextTokenLogits);
    const auto change = nlohmann::json::parse(slurpFile(out / "output_change.json"));
    REQUIRE(change["ranking"].size() == 8);
    CHECK(change["ranking"][0]["layer"].get<int>() * 4 + change["ranking"][0]["head"].get<int>() == entropy[0].second);
    const auto best = std::max_element(q.begin(), q.end()) - q.begin();
    CHECK(change["changed_top"][0]["id"] == best);
    CHECK(change["changed_top"][0]["probability"].get<double>() == Approx(q[best]).epsilon(1e-4));
    CHECK_THAT(r.out, Catch::Contains("masked by importance: " + std::to_string(entropy[0].second / 4) + ":" +
                                      std::to_string(entropy[0].second % 4)));
}

TEST_CASE("cli attention variants: linear maps, FAVOR+, additive fit and hybrid", "[cli][lab]") {
    const Setup& s = setup();
    const auto out = freshDir("cli-lab-variants");
    const auto ref = referenceGpt2(s.checkpoint, s.ids);
    const int n = 6, d = 4;

    const CliResult relu = runCli({"attention", s.model.string(), "--ids", s.idText, "--out", out.string(), "--variant",
                                   "linear", "--feature-map", "relu"});
    REQUIRE(relu.code == 0);
    const NpyArray a = readNpy(out / "attention.npy");
    for (int l = 0; l < 2; ++l)
        for (int h = 0; h < 4; ++h)
            for (int i = 0; i < n; ++i) {
                std::vector<double> row(n, 0.0);
                double sum = 0;
                for (int j = 0; j <= i; ++j) {
                    for (int c = 0; c < d; ++c)
                        row[j] += std::max(0.0, ref.q[l][h][i * d + c]) * std::max(0.0, ref.k[l][h][j * d + c]);
                    sum += row[j];
                }
                for (int j = 0; j < n; ++j) {
                    INFO("layer " << l << " head " << h << " query " << i << " key " << j);
                    REQUIRE(a.values[((l * 4 + h) * n + i) * n + j] ==
                            Approx(sum > 0 ? row[j] / sum : 0.0).margin(2e-6));
                }
            }

    const CliResult additive = runCli({"attention", s.model.string(), "--ids", s.idText, "--out", out.string(),
                                       "--variant", "additive", "--fit-steps", "120", "--fit-width", "8"});
    INFO(additive.err);
    REQUIRE(additive.code == 0);
    CHECK_THAT(additive.out, Catch::Contains("additive fit (width 8, 120 Adam steps)"));
    const auto fit = nlohmann::json::parse(slurpFile(out / "fit.json"));
    REQUIRE(fit["heads"].size() == 8);
    for (const auto& h : fit["heads"]) CHECK(h["final_kl"].get<double>() < h["initial_kl"].get<double>());
    const NpyArray add = readNpy(out / "attention.npy");

    const CliResult hybrid =
            runCli({"attention", s.model.string(), "--ids", s.idText, "--out", out.string(), "--variant", "hybrid",
                    "--gate", "0.25", "--fit-steps", "120", "--fit-width", "8"});
    REQUIRE(hybrid.code == 0);
    const NpyArray hyb = readNpy(out / "attention.npy");
    for (int l = 0; l < 2; ++l)
        for (int h = 0; h < 4; ++h)
            for (int i = 0; i < n * n; ++i) {
                const std::size_t at = (l * 4 + h) * n * n + i;
                REQUIRE(hyb.values[at] == Approx(0.25 * add.values[at] + 0.75 * ref.probs[l][h][i]).margin(1e-5));
            }
}

TEST_CASE("cli metrics writes per-head metrics as json and csv", "[cli][lab]") {
    const Setup& s = setup();
    const auto dir = freshDir("cli-lab-metrics");
    const CliResult r = runCli({"metrics", s.model.string(), "--ids", s.idText, "--out", (dir / "m.json").string(),
                                "--flow", "--separators", "t0"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    const auto ref = referenceGpt2(s.checkpoint, s.ids);
    const auto j = nlohmann::json::parse(slurpFile(dir / "m.json"));
    REQUIRE(j["heads"].size() == 8);
    const auto& h = j["heads"][5];  // layer 1, head 1
    CHECK(h["layer"] == 1);
    CHECK(h["head"] == 1);
    double entropy = 0, distance = 0, first = 0, sep = 0;
    for (int i = 0; i < 6; ++i)
        for (int k = 0; k <= i; ++k) {
            const double p = ref.probs[1][1][i * 6 + k];
            entropy -= p * std::log(p) / 6;
            distance += p * (i - k) / 6;
            if (k == 0) first += p / 6;
            if (k == 3) sep += p / 6;  // token id 0 ("t0") sits at position 3
        }
    CHECK(h["entropy"].get<double>() == Approx(entropy).epsilon(1e-4));
    CHECK(h["mean_distance"].get<double>() == Approx(distance).epsilon(1e-4));
    CHECK(h["first_token"].get<double>() == Approx(first).epsilon(1e-4));
    CHECK(h["separator"].get<double>() == Approx(sep).epsilon(1e-4));
    const auto& block = j["blocks"]["self"];
    CHECK(block["similarity"].size() == 8);
    CHECK(block["rollout"].size() == 6);
    CHECK(block["flow"][0][0].get<double>() == Approx(1.0));  // the first token only sees itself

    const CliResult csv = runCli({"metrics", s.model.string(), "--ids", s.idText, "--out", (dir / "m.csv").string()});
    REQUIRE(csv.code == 0);
    const std::string text = slurpFile(dir / "m.csv");
    CHECK(std::count(text.begin(), text.end(), '\n') == 9);
    CHECK_THAT(text, Catch::StartsWith("block,layer,head,entropy,mean_distance,first_token,separator,pattern"));
    CHECK_THAT(text, Catch::Contains("\nself,1,1,"));
}

TEST_CASE("cli lab options reject bad values with one clear line", "[cli][lab]") {
    const Setup& s = setup();
    const auto out = freshDir("cli-lab-errors");
    writeText(out / "attention.npy", "previous result");
    const std::vector<std::string> base = {"attention", s.model.string(), "--ids", "1,2", "--out", out.string()};
    auto with = [&](std::vector<std::string> extra) {
        std::vector<std::string> a = base;
        a.insert(a.end(), extra.begin(), extra.end());
        return runCli(a);
    };
    requireCliExit(with({"--variant", "softmax"}), 2,
                   "--variant 'softmax' is not one of dot, linear, additive, hybrid");
    requireCliExit(with({"--mask-heads", "0:4"}), 2, "head 0:4: head 4 is out of range for block 'self' (0..3)");
    requireCliExit(with({"--temperature", "2", "--propagate", "--layers", "2"}), 2, "layer 2 is out of range (0..1)");
    requireCliExit(with({"--feature-map", "elu"}), 1, "--feature-map needs --variant linear");
    requireCliExit(with({"--propagate"}), 1, "--propagate needs --temperature T");
    requireCliExit(with({"--prune", "entropy", "--prune-count", "9"}), 2, "cannot mask 9 heads: the model has 8");
    CHECK(slurpFile(out / "attention.npy") == "previous result");
    requireCliExit(runCli({"metrics", s.model.string(), "--ids", "1,2", "--out", (out / "m.txt").string()}), 2,
                   "must end in .json or .csv");
    CHECK_FALSE(std::filesystem::exists(out / "m.txt"));
}

}  // namespace test_cli_lab
