// Attention distillation's KL term (models/builtin/distillation.h) against hand-computed values on
// fixed maps, its layer/head mapping, and gradients reaching the student only.
#include "models/builtin/distillation.h"

#include "attnscope/models/builtin.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>

namespace test_distillation_kl {

using namespace attnscope;
using namespace attnscope::builtin;

namespace {

at::Tensor map(std::initializer_list<float> values, std::int64_t n, std::int64_t m) {
    return at::tensor(std::vector<float>(values), at::kFloat).view({1, 1, n, m});
}

}  // namespace

TEST_CASE("distillation KL equals the hand-computed KL on fixed maps", "[distillation]") {
    const at::Tensor t = map({0.5f, 0.5f, 0.0f, 0.2f, 0.3f, 0.5f}, 2, 3);
    const at::Tensor p = map({0.25f, 0.25f, 0.5f, 0.1f, 0.6f, 0.3f}, 2, 3);
    // Row 0: 2 · 0.5 ln(0.5 / 0.25) (the t = 0 key adds nothing); row 1 term by term.
    const double row0 = 2 * 0.5 * std::log(0.5 / 0.25);
    const double row1 = 0.2 * std::log(0.2 / 0.1) + 0.3 * std::log(0.3 / 0.6) + 0.5 * std::log(0.5 / 0.3);
    CHECK(mapKl(t, p, at::Tensor()).item<double>() == Approx((row0 + row1) / 2).epsilon(1e-6));
    // Only the real query rows count.
    const at::Tensor rows = at::tensor(std::vector<std::int64_t>{1, 0}, at::kLong).to(at::kBool).view({1, 2});
    CHECK(mapKl(t, p, rows).item<double>() == Approx(row0).epsilon(1e-6));
    // A student with an exact zero where the teacher has mass (a sparse kind): the floor, not infinity.
    const at::Tensor sparse = map({1.0f, 0.0f}, 1, 2);
    const at::Tensor teacher = map({0.75f, 0.25f}, 1, 2);
    const double floored = 0.75 * std::log(0.75 / 1.0) + 0.25 * std::log(0.25 / builtin::kKlFloor);
    CHECK(mapKl(teacher, sparse, at::Tensor()).item<double>() == Approx(floored).epsilon(1e-6));
    CHECK(mapKl(t, t, at::Tensor()).item<double>() == Approx(0).margin(1e-7));
}

TEST_CASE("distillation KL's gradient is the student's: -t / p over the counted rows", "[distillation]") {
    const at::Tensor t = map({0.5f, 0.5f, 0.0f, 0.2f, 0.3f, 0.5f}, 2, 3);
    c10::AutoGradMode grad(true);
    const at::Tensor p = map({0.25f, 0.25f, 0.5f, 0.1f, 0.6f, 0.3f}, 2, 3).requires_grad_(true);
    mapKl(t, p, at::Tensor()).backward();
    const at::Tensor expected = -t / p.detach() / 2;  // two rows in the mean
    CHECK(at::allclose(p.grad(), expected, 1e-6, 1e-7));
    CHECK_FALSE(t.requires_grad());
}

TEST_CASE("distillation maps student layers and heads onto the teacher's", "[distillation]") {
    // Equal counts: the same layer and head.
    for (int l = 0; l < 3; ++l) CHECK(mappedLayer(l, 3, 3) == l);
    CHECK(mappedHeads(1, 2, 2) == std::pair<int, int>(1, 2));
    // A shallower student takes every k-th teacher layer, ending at the last.
    CHECK(mappedLayer(0, 2, 4) == 1);
    CHECK(mappedLayer(1, 2, 4) == 3);
    CHECK(mappedLayer(0, 1, 2) == 1);
    // A deeper student: layers share the teacher's.
    CHECK(mappedLayer(0, 2, 1) == 0);
    CHECK(mappedLayer(1, 2, 1) == 0);
    // Fewer student heads: each takes its group; more: consecutive heads share one.
    CHECK(mappedHeads(0, 1, 2) == std::pair<int, int>(0, 2));
    CHECK(mappedHeads(1, 2, 4) == std::pair<int, int>(2, 4));
    CHECK(mappedHeads(0, 4, 2) == std::pair<int, int>(0, 1));
    CHECK(mappedHeads(1, 4, 2) == std::pair<int, int>(0, 1));
    CHECK(mappedHeads(3, 4, 2) == std::pair<int, int>(1, 2));
}

TEST_CASE("distillation KL of a teacher against itself is 0, and a 1-head student learns the head mean",
          "[distillation]") {
    const auto dir = std::filesystem::temp_directory_path() / "attnscope_distil_kl_teacher";
    std::filesystem::remove_all(dir);
    TrainOptions o;
    o.task = BuiltinTask::Sentiment;
    o.steps = 3;
    o.batch = 4;
    o.evalExamples = 0;
    o.out = dir;
    trainBuiltin(o);
    Config student;
    student.seq2seq = false;
    student.task = BuiltinTask::Sentiment;
    const Symbols symbols = Symbols::forTask(BuiltinTask::Sentiment);
    student.vocabSize = symbols.size();
    const Teacher teacher = loadTeacher(dir, student, symbols);
    TaskData data(7, Split::Train);
    const Batch batch = sentimentBatch(data, symbols, 5);
    c10::AutoGradMode grad(true);
    Weights w;
    for (const auto& [name, t] : teacher.weights) w[name] = t.clone().requires_grad_(true);
    std::vector<SiteMap> maps;
    taskLoss(w, teacher.config, batch, &maps);
    REQUIRE(maps.size() == 2);  // two encoder layers, block "self"
    const at::Tensor kl = distillationKl(teacher, teacher.config, maps, batch);
    CHECK(kl.item<double>() == Approx(0).margin(1e-6));
    kl.backward();
    CHECK(w.at("encoder.0.attn.wq").grad().defined());  // the student's weights take the gradient
    for (const auto& [name, t] : teacher.weights) CHECK_FALSE(t.requires_grad());
    // A 1-head, 1-layer student: its map is compared with the mean of the teacher's two heads of
    // the teacher's last layer.
    Config small = teacher.config;
    small.heads = 1;
    small.encoderLayers = 1;
    const at::Tensor last = maps[1].probs.detach();
    const at::Tensor mean = last.mean(1, /*keepdim=*/true);
    CHECK(distillationKl(teacher, small, {{"self", 0, mean}}, batch).item<double>() == Approx(0).margin(1e-6));
    const at::Tensor head0 = last.narrow(1, 0, 1);
    const double expected = mapKl(mean, head0, batch.sourceAllowed).item<double>();
    CHECK(expected > 1e-6);
    CHECK(distillationKl(teacher, small, {{"self", 0, head0}}, batch).item<double>() == Approx(expected).epsilon(1e-6));
    std::filesystem::remove_all(dir);
}

TEST_CASE("a teacher of another task is refused, naming what differs", "[distillation]") {
    const auto dir = std::filesystem::temp_directory_path() / "attnscope_distil_kl_reverse";
    std::filesystem::remove_all(dir);
    TrainOptions o;
    o.task = BuiltinTask::Reverse;
    o.steps = 1;
    o.batch = 2;
    o.evalExamples = 0;
    o.out = dir;
    trainBuiltin(o);
    Config student;
    student.seq2seq = false;
    const Symbols symbols = Symbols::forTask(BuiltinTask::Sentiment);
    student.vocabSize = symbols.size();
    CHECK_THROWS_WITH(loadTeacher(dir, student, symbols),
                      Catch::Contains("is an encoder-decoder") && Catch::Contains("needs a classifier"));
    std::filesystem::remove_all(dir);
}

}  // namespace test_distillation_kl
