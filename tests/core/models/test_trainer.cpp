// The trainer: deterministic for a seed, improves the loss, writes a model folder that loads.
#include "attnscope/models/builtin.h"
#include "attnscope/runtime/error.h"
#include "attnscope/models/model.h"
#include "attnscope/io/safetensors.h"
#include "attnscope/attention/trace.h"
#include "gpt2_fixture.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

namespace test_trainer {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

std::string slurp(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

TrainOptions tiny(BuiltinTask task, AttentionKind kind, std::uint64_t seed, const std::filesystem::path& out) {
    TrainOptions o;
    o.task = task;
    o.attention = kind;
    o.seed = seed;
    o.steps = 4;
    o.batch = 8;
    o.evalExamples = 0;
    o.out = out;
    return o;
}

}  // namespace

TEST_CASE("training is deterministic: the same seed gives identical weights", "[builtin][trainer]") {
    for (auto task : {BuiltinTask::Reverse, BuiltinTask::Sentiment})
        for (auto kind : {AttentionKind::Dot, AttentionKind::Additive, AttentionKind::Linear}) {
            DYNAMIC_SECTION(taskName(task) << "-" << kindName(kind)) {
                const auto a = freshDir("train-a"), b = freshDir("train-b");
                trainBuiltin(tiny(task, kind, 7, a));
                trainBuiltin(tiny(task, kind, 7, b));
                const std::string wa = slurp(a / "model.safetensors");
                REQUIRE(wa.size() > 1000);
                CHECK(wa == slurp(b / "model.safetensors"));
                if (kind == AttentionKind::Dot) {  // and the seed matters
                    const auto c = freshDir("train-c");
                    trainBuiltin(tiny(task, kind, 8, c));
                    CHECK(wa != slurp(c / "model.safetensors"));
                }
                CHECK(slurp(a / "config.json") == slurp(b / "config.json"));
                // The folder is a model: it loads and runs.
                LoadOptions load;
                load.device = DeviceChoice::Cpu;
                const auto model = Model::load(a, load);
                CHECK(model->info().task == taskName(task));
                CHECK(model->info().attention == kindName(kind));
                const auto trace =
                        model->forward(model->encodeText(task == BuiltinTask::Reverse ? "ab12" : "a good film"));
                CHECK(trace->blocks()[0].kind == kind);
            }
        }
}

TEST_CASE("a short training run lowers the loss", "[builtin][trainer]") {
    const auto dir = freshDir("train-loss");
    TrainOptions o = tiny(BuiltinTask::Sentiment, AttentionKind::Dot, 3, dir);
    o.steps = 100;
    o.batch = 32;
    o.learningRate = 0.01;
    std::vector<double> windows;  // mean loss over steps 1-25, 26-50, 51-75, 76-100
    o.progress = [&](const TrainProgress& p) {
        windows.push_back(p.loss);
        CHECK(p.steps == 100);
        return true;
    };
    const TrainResult r = trainBuiltin(o);
    REQUIRE(windows.size() == 4);
    INFO("loss windows " << windows[0] << " " << windows[1] << " " << windows[2] << " " << windows[3]);
    CHECK(r.initialLoss > 0.6);  // about ln 2 at the start
    CHECK(windows[3] < 0.8 * windows[0]);
    CHECK(r.finalLoss < r.initialLoss);
    CHECK(r.steps == 100);
}

TEST_CASE("training reports progress, can be cancelled and rejects bad options", "[builtin][trainer]") {
    const auto dir = freshDir("train-cancel");
    TrainOptions o = tiny(BuiltinTask::Sentiment, AttentionKind::Linear, 1, dir);
    o.steps = 60;
    o.progress = [](const TrainProgress& p) { return p.step < 25; };
    CHECK_THROWS_AS(trainBuiltin(o), Cancelled);
    CHECK_FALSE(std::filesystem::exists(dir / "model.safetensors"));
    o.progress = nullptr;
    o.batch = 0;
    CHECK_THROWS_WITH(trainBuiltin(o), Catch::Contains("batch"));
    CHECK_THROWS_WITH(parseTask("translate"), Catch::Contains("unknown task 'translate'"));
    CHECK_THROWS_WITH(parseAttentionKind("flash"), Catch::Contains("unknown attention kind 'flash'"));
}

TEST_CASE("task data: held-out examples are never drawn for training", "[builtin][trainer]") {
    TaskData train(1, Split::Train), held(1, Split::HeldOut);
    for (int i = 0; i < 300; ++i) {
        const std::string s = train.reverseSource();
        CHECK_FALSE(isHeldOut(s));
        CHECK((s.size() >= 2 && s.size() <= 16));
        CHECK_FALSE(isHeldOut(train.sentiment().text));
        CHECK(isHeldOut(held.sentiment().text));
    }
}

}  // namespace test_trainer
