// Attention distillation runs (lab/distillation.h) on a tiny budget: the curve CSV against the
// runs it reports, the λ = 0 run against a plain training run, the student folder loading like
// the built-ins, and a teacher of another task refused.
#include "attnscope/lab/distillation.h"
#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"
#include "gpt2_fixture.h"

#include "csv_read.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>

namespace test_distillation {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

std::string bytes(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

TrainOptions student(const std::filesystem::path& teacher, const std::filesystem::path& out) {
    TrainOptions o;
    o.task = BuiltinTask::Sentiment;
    o.attention = AttentionKind::Linear;
    o.steps = 8;
    o.epochSteps = 4;
    o.batch = 8;
    o.evalExamples = 16;
    o.seed = 5;
    o.distillation.teacher = teacher;
    o.distillation.lambda = 20;
    o.out = out;
    return o;
}

}  // namespace

TEST_CASE("distil trains with and without the KL term and writes the distillation curve", "[distillation]") {
    const auto teacherDir = freshDir("distil-teacher");
    TrainOptions t;
    t.task = BuiltinTask::Sentiment;
    t.steps = 30;
    t.batch = 16;
    t.evalExamples = 0;
    t.out = teacherDir;
    trainBuiltin(t);

    const TrainOptions o = student(teacherDir, freshDir("distil"));
    const DistilReport r = distilBuiltin(o);
    REQUIRE(r.distilled.epochs.size() == 2);
    REQUIRE(r.baseline.epochs.size() == 2);
    const auto rows = readCsv(o.out / "distillation.csv");
    REQUIRE(rows.size() == 3);
    CHECK(rows[0] == std::vector<std::string>{"epoch", "step", "distilled_loss", "distilled_accuracy", "distilled_kl",
                                              "baseline_loss", "baseline_accuracy", "baseline_kl"});
    for (std::size_t e = 0; e < 2; ++e) {
        const auto& row = rows[e + 1];
        CHECK(std::stoi(row[1]) == 4 * int(e + 1));
        CHECK(std::stod(row[3]) == Approx(r.distilled.epochs[e].accuracy).margin(1e-8));
        CHECK(std::stod(row[4]) == Approx(r.distilled.epochs[e].kl).epsilon(1e-7));
        CHECK(std::stod(row[7]) == Approx(r.baseline.epochs[e].kl).epsilon(1e-7));
        CHECK(r.baseline.epochs[e].kl > 0);
    }
    // The final checkpoint is the final weights: the same KL.
    CHECK(r.distilled.result.finalKl == Approx(r.distilled.epochs.back().kl).epsilon(1e-6));
    // With λ = 20 the student's maps move towards the teacher's; without, they do not follow it.
    CHECK(r.distilled.epochs.back().kl < r.baseline.epochs.back().kl);
    CHECK(std::filesystem::is_regular_file(o.out / "monitors.csv"));
    CHECK(std::filesystem::is_regular_file(o.out / "baseline" / "monitors.csv"));
    // The student opens like the built-ins, and its config records the distillation.
    const auto model = Model::load(o.out, LoadOptions{DeviceChoice::Cpu, {}});
    CHECK(model->info().attention == "linear");
    CHECK(bytes(o.out / "config.json").find("\"distillation\"") != std::string::npos);
    CHECK(r.distilled.result.heldOutExamples == 16);

    // λ = 0 is the plain trainer: the same weights, bit for bit.
    TrainOptions plain = o;
    plain.distillation = DistillationOptions{};
    plain.out = freshDir("distil-plain");
    trainBuiltin(plain);
    CHECK(bytes(plain.out / "model.safetensors") == bytes(o.out / "baseline" / "model.safetensors"));
    CHECK(bytes(plain.out / "model.safetensors") != bytes(o.out / "model.safetensors"));
}

TEST_CASE("distil refuses a teacher of another task, naming the difference", "[distillation]") {
    const auto teacherDir = freshDir("distil-reverse-teacher");
    TrainOptions t;
    t.task = BuiltinTask::Reverse;
    t.steps = 1;
    t.batch = 2;
    t.evalExamples = 0;
    t.out = teacherDir;
    trainBuiltin(t);
    CHECK_THROWS_WITH(distilBuiltin(student(teacherDir, freshDir("distil-bad"))),
                      Catch::Contains("is an encoder-decoder") && Catch::Contains("needs a classifier"));
    CHECK_THROWS_WITH(distilBuiltin(student(freshDir("distil-empty"), freshDir("distil-bad2"))),
                      Catch::Contains("no config.json"));
}

}  // namespace test_distillation
