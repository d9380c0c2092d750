// attnscope-cli and the kinds of issue 36: attention --variant local|topk|lsh and --feature-map cos
// (maps equal the Trace's), out-of-range values (one line, exit 2), train with a kind and the
// monitors CSV, train --task FILE (a bad line is named).
#include "attnscope/models/model.h"
#include "attnscope/attention/trace.h"
#include "gpt2_fixture.h"
#include "npy_read.h"

#include "cli_run.h"

#include <catch2/catch.hpp>

#include <fstream>

namespace test_cli_kinds {

using namespace attnscope;
using namespace attnscope::testing;

TEST_CASE("cli attention writes the local, topk, lsh and cos maps of the Trace", "[cli][kinds]") {
    const auto model = Model::load("builtin:sentiment-dot", LoadOptions{DeviceChoice::Cpu, {}});
    const std::string text = "the acting was not very good but the plot was great";
    const auto trace = model->forward(model->encodeText(text));
    struct Case {
        std::vector<std::string> flags;
        MapOptions options;
    };
    std::vector<Case> cases;
    MapOptions o;
    o.variant = MapVariant::Local;
    o.sparse.window = 3;
    o.sparse.twoSided = true;
    cases.push_back({{"--variant", "local", "--window", "3", "--two-sided"}, o});
    o = MapOptions{};
    o.variant = MapVariant::TopK;
    o.sparse.keep = 2;
    cases.push_back({{"--variant", "topk", "--keep", "2"}, o});
    o = MapOptions{};
    o.variant = MapVariant::Lsh;
    o.sparse.buckets = 4;
    o.sparse.rounds = 2;
    o.sparse.seed = 9;
    cases.push_back({{"--variant", "lsh", "--buckets", "4", "--rounds", "2", "--seed", "9"}, o});
    o = MapOptions{};
    o.variant = MapVariant::Linear;
    o.featureMap = FeatureMap::Cos;
    cases.push_back({{"--variant", "linear", "--feature-map", "cos"}, o});
    for (const Case& c : cases) {
        const auto dir = freshDir("cli-kinds");
        std::vector<std::string> args = {"attention", "builtin:sentiment-dot", "--text", text, "--out", dir.string()};
        args.insert(args.end(), c.flags.begin(), c.flags.end());
        const CliResult r = runCli(args);
        INFO(c.flags[1] << ": " << r.err);
        REQUIRE(r.code == 0);
        const NpyArray a = readNpy(dir / "attention.npy");
        std::size_t at = 0;
        for (int l = 0; l < 2; ++l)
            for (int h = 0; h < 2; ++h)
                for (float v : trace->map(0, l, h, c.options).values) REQUIRE(a.values[at++] == v);
    }
}

TEST_CASE("cli kinds: values out of range are one line and exit 2, misplaced flags are usage errors", "[cli][kinds]") {
    const auto out = freshDir("cli-kinds-bad").string();
    const std::vector<std::string> base = {"attention", "builtin:sentiment-dot", "--text", "the plot", "--out", out};
    auto with = [&](std::vector<std::string> extra) {
        std::vector<std::string> a = base;
        a.insert(a.end(), extra.begin(), extra.end());
        return runCli(a);
    };
    requireOneLineError(with({"--variant", "local", "--window", "0"}), "--window");
    requireOneLineError(with({"--variant", "topk", "--keep", "-1"}), "--keep");
    requireOneLineError(with({"--variant", "lsh", "--buckets", "5"}), "--buckets must be even");
    requireOneLineError(with({"--variant", "lsh", "--rounds", "0"}), "--rounds");
    requireOneLineError(with({"--variant", "sparse"}), "local, topk, lsh");
    requireOneLineError(with({"--variant", "linear", "--feature-map", "sin"}), "elu, relu, favor, cos");
    requireOneLineError(with({"--variant", "hybrid", "--gate", "learned"}), "--attention hybrid");
    CHECK(with({"--keep", "2"}).code == 1);  // --keep without --variant topk
    CHECK(with({"--variant", "topk", "--window", "2"}).code == 1);
    requireOneLineError(runCli({"train", "--task", "sentiment", "--attention", "lsh", "--buckets", "3", "--out", out}),
                        "--buckets must be even");
    requireOneLineError(
            runCli({"train", "--task", "sentiment", "--attention", "linear", "--positions", "relative", "--out", out}),
            "relative");
    requireOneLineError(runCli({"kinds-report", "--task", "sentiment", "--kinds", "dot,sparse", "--out", out}),
                        "unknown attention kind 'sparse'");
    requireOneLineError(runCli({"kinds-report", "--task", "sentiment", "--epochs", "0", "--out", out}), "--epochs");
    requireOneLineError(runCli({"train", "--task", "nowhere.jsonl", "--attention", "dot", "--out", out}),
                        "unknown task 'nowhere.jsonl' (use reverse, sentiment or a readable JSONL task file)");
}

TEST_CASE("cli train with a kind writes the monitors; --task FILE names a bad line", "[cli][kinds]") {
    const auto out = freshDir("cli-kinds-train");
    const CliResult r = runCli({"train", "--task", "sentiment", "--attention", "hybrid", "--positions", "relative",
                                "--steps", "4", "--batch", "4", "--epoch-steps", "2", "--out", (out / "m").string()});
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.err, Catch::Contains("epoch 2 (step 4)"));
    std::ifstream csv(out / "m" / "monitors.csv");
    std::string header, line;
    std::getline(csv, header);
    CHECK(header == "epoch,step,loss,accuracy,block,layer,head,entropy,max_entropy,distance,similarity,"
                    "max_similarity,layer_similarity,flags");
    int rows = 0;
    while (std::getline(csv, line)) ++rows;
    CHECK(rows == 2 * 2 * 2);  // 2 epochs × 2 layers × 2 heads
    CHECK(std::filesystem::exists(out / "m" / "checkpoints" / "epoch-2" / "model.safetensors"));
    const auto model = Model::load(out / "m", LoadOptions{DeviceChoice::Cpu, {}});
    CHECK(model->info().attention == "hybrid");

    const auto file = out / "task.jsonl";
    std::ofstream(file) << "{\"text\": \"good film\", \"label\": \"up\"}\n"
                        << "{\"text\": \"bad film\", \"label\": \"down\"}\n"
                        << "{\"text\": \"dull\", \"label\": 3.5}\n";
    requireOneLineError(runCli({"train", "--task", file.string(), "--attention", "dot", "--out", (out / "f").string()}),
                        file.string() + ":3: \"label\" must be a string");
}

TEST_CASE("cli distil writes the student, both runs' monitors and the distillation curve", "[cli][kinds]") {
    const auto out = freshDir("cli-distil");
    const CliResult r = runCli({"distil",
                                "--teacher",
                                "builtin:sentiment-dot",
                                "--student-kind",
                                "topk",
                                "--keep",
                                "3",
                                "--task",
                                "sentiment",
                                "--lambda",
                                "2",
                                "--epochs",
                                "2",
                                "--epoch-steps",
                                "2",
                                "--batch",
                                "4",
                                "--student-heads",
                                "1",
                                "--out",
                                (out / "s").string()});
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.err, Catch::Contains("held-out accuracy") && Catch::Contains("distilled"));
    std::ifstream csv(out / "s" / "distillation.csv");
    std::string header, line;
    std::getline(csv, header);
    CHECK(header == "epoch,step,distilled_loss,distilled_accuracy,distilled_kl,baseline_loss,baseline_accuracy,"
                    "baseline_kl");
    int rows = 0;
    while (std::getline(csv, line)) ++rows;
    CHECK(rows == 2);
    const auto model = Model::load(out / "s", LoadOptions{DeviceChoice::Cpu, {}});
    CHECK(model->info().attention == "topk");
    CHECK(model->info().heads == 1);  // one student head learns the mean of the teacher's two
    CHECK(std::filesystem::is_regular_file(out / "s" / "monitors.csv"));
    CHECK(std::filesystem::is_regular_file(out / "s" / "baseline" / "monitors.csv"));
}

TEST_CASE("cli distil: bad input is one line and exit 2", "[cli][kinds]") {
    const std::string out = (freshDir("cli-distil-bad") / "s").string();
    const auto distil = [&](std::vector<std::string> extra) {
        std::vector<std::string> a = {"distil", "--student-kind", "dot", "--out", out};
        a.insert(a.end(), extra.begin(), extra.end());
        return runCli(a);
    };
    requireOneLineError(distil({"--teacher", "builtin:reverse-dot", "--task", "sentiment"}), "is an encoder-decoder");
    requireOneLineError(distil({"--teacher", "builtin:nothing", "--task", "sentiment"}), "nothing");
    requireOneLineError(distil({"--teacher", "builtin:sentiment-dot", "--task", "sentiment", "--lambda", "-1"}),
                        "--lambda");
    requireOneLineError(distil({"--teacher", "builtin:sentiment-dot", "--task", "sentiment", "--student-heads", "3"}),
                        "--student-heads must divide");
    requireOneLineError(distil({"--teacher", "builtin:sentiment-dot", "--task", "nowhere.jsonl"}), "unknown task");
}

}  // namespace test_cli_kinds
