// Built-in models trained with the kinds of issue 36 (local, top-k, LSH, learned-gate hybrid,
// relative positions), each briefly trained and then checked against the independent
// double-precision forward of support/reference_builtin: every map of every block, the outputs.
#include "attnscope/models/builtin.h"
#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"
#include "attnscope/attention/trace.h"
#include "gpt2_fixture.h"
#include "reference_builtin.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

namespace test_builtin_kinds {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

struct KindCase {
    std::string name;
    AttentionKind kind;
    SparseOptions sparse;
    bool relative = false;
};

std::vector<KindCase> cases() {
    std::vector<KindCase> out;
    SparseOptions local;
    local.window = 3;
    out.push_back({"local causal W=3", AttentionKind::Local, local});
    local.twoSided = true;
    local.window = 2;
    out.push_back({"local two-sided W=2", AttentionKind::Local, local});
    SparseOptions topk;
    topk.keep = 3;
    out.push_back({"topk k=3", AttentionKind::TopK, topk});
    SparseOptions lsh;
    lsh.buckets = 4;
    lsh.rounds = 2;
    lsh.seed = 5;
    out.push_back({"lsh B=4 R=2", AttentionKind::Lsh, lsh});
    out.push_back({"hybrid learned gate", AttentionKind::Hybrid, {}});
    out.push_back({"dot relative K=2", AttentionKind::Dot, {}, true});
    out.push_back({"topk relative K=2", AttentionKind::TopK, topk, true});
    out.push_back({"hybrid relative K=2", AttentionKind::Hybrid, {}, true});
    return out;
}

std::filesystem::path trainTiny(BuiltinTask task, const KindCase& c) {
    TrainOptions o;
    o.task = task;
    o.attention = c.kind;
    o.sparse = c.sparse;
    o.relativePositions = c.relative;
    o.relativeClip = 2;
    o.seed = 3;
    o.steps = 12;
    o.batch = 8;
    o.learningRate = 0.02;  // large enough that gates and relative biases move away from their start
    o.evalExamples = 0;
    o.out = freshDir("builtin-kinds");
    trainBuiltin(o);
    return o.out;
}

std::vector<long long> asLong(const std::vector<std::int64_t>& ids) { return {ids.begin(), ids.end()}; }

void requireBlockMatches(const Trace& trace, const std::string& name, const RefBlock& ref) {
    const int b = trace.blockIndex(name);
    const BlockInfo& info = trace.blocks()[b];
    REQUIRE(info.layers == static_cast<int>(ref.maps.size()));
    double worst = 0;
    int zeros = 0;
    for (int l = 0; l < info.layers; ++l)
        for (int h = 0; h < info.heads; ++h) {
            const HeadMap map = trace.map(b, l, h);
            REQUIRE(map.rows == ref.rows);
            REQUIRE(map.cols == ref.cols);
            for (std::size_t i = 0; i < map.values.size(); ++i) {
                worst = std::max(worst, std::abs(map.values[i] - ref.maps[l][h][i]));
                if (ref.maps[l][h][i] == 0) {
                    ++zeros;
                    REQUIRE(map.values[i] == 0.f);  // kept-out keys are exactly 0
                }
            }
        }
    INFO(name << ": largest difference " << worst << ", " << zeros << " kept-out cells");
    REQUIRE(worst < 2e-5);
}

}  // namespace

TEST_CASE("built-in classifiers with each kind: maps and probabilities equal the reference", "[builtin][kinds]") {
    for (const KindCase& c : cases()) {
        SECTION(c.name) {
            const auto folder = trainTiny(BuiltinTask::Sentiment, c);
            const auto model = Model::load(folder, LoadOptions{DeviceChoice::Cpu, {}});
            CHECK(model->info().attention == kindName(c.kind));
            const auto ids = model->encodeText("the acting was not very good but the plot was great");
            const auto trace = model->forward(ids);
            CHECK(trace->blocks()[0].kind == c.kind);
            const RefClassifier ref = referenceClassifier(folder, asLong(ids));
            requireBlockMatches(*trace, "self", ref.self);
            CHECK(trace->classProbabilities()[0] == Approx(ref.probabilities[0]).margin(1e-5));
            CHECK(trace->classProbabilities()[1] == Approx(ref.probabilities[1]).margin(1e-5));
        }
    }
}

TEST_CASE("built-in encoder-decoders with each kind: every block equals the reference", "[builtin][kinds]") {
    for (const KindCase& c : cases()) {
        SECTION(c.name) {
            const auto folder = trainTiny(BuiltinTask::Reverse, c);
            const auto model = Model::load(folder, LoadOptions{DeviceChoice::Cpu, {}});
            const auto ids = model->encodeText("q7k2m9a0zzb1");
            const auto trace = model->forward(ids);
            std::vector<long long> fed = {1};  // <s>
            for (auto id : trace->outputIds()) fed.push_back(id);
            const RefSeq2seq ref = referenceSeq2seq(folder, asLong(ids), fed);
            requireBlockMatches(*trace, "encoder", ref.encoder);
            requireBlockMatches(*trace, "decoder", ref.decoder);
            requireBlockMatches(*trace, "cross", ref.cross);
            // local and lsh need one sequence: cross-attention stays dot.
            const bool crossDot = c.kind == AttentionKind::Local || c.kind == AttentionKind::Lsh;
            CHECK(trace->blocks()[2].kind == (crossDot ? AttentionKind::Dot : c.kind));
            for (std::size_t r = 0; r < ref.logits.size(); ++r) {
                const auto& row = ref.logits[r];
                const long long best = std::max_element(row.begin(), row.end()) - row.begin();
                CHECK(best == (r < trace->outputIds().size() ? trace->outputIds()[r] : 2));
            }
        }
    }
}

TEST_CASE("kind options out of range and relative positions without dot logits are refused", "[builtin][kinds]") {
    TrainOptions o;
    o.task = BuiltinTask::Sentiment;
    o.steps = 1;
    o.batch = 2;
    o.evalExamples = 0;
    o.out = freshDir("builtin-kinds-bad");
    o.attention = AttentionKind::Lsh;
    o.sparse.buckets = 5;
    CHECK_THROWS_WITH(trainBuiltin(o), Catch::Contains("even number of buckets"));
    o.attention = AttentionKind::Local;
    o.sparse.window = 0;
    CHECK_THROWS_WITH(trainBuiltin(o), Catch::Contains("window >= 1"));
    o.attention = AttentionKind::Additive;
    o.relativePositions = true;
    CHECK_THROWS_WITH(trainBuiltin(o), Catch::Contains("relative positions"));
    CHECK_THROWS_WITH(parseAttentionKind("sparse"), Catch::Contains("local, topk, lsh or hybrid"));
}

}  // namespace test_builtin_kinds
