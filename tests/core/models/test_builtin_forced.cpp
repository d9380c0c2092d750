// Forced targets (teacher forcing, TextInput::targetIds) on the built-in reverse models: the
// decoder runs on exactly the given ids, against the independent double-precision reference
// (reference_builtin), and a target equal to the greedy rows reproduces the greedy trace.
#include "attnscope/attention/trace.h"
#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"
#include "builtin_checks.h"
#include "reference_builtin.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

namespace test_builtin_forced {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

double largestDifference(const Trace& trace, const std::string& block, const RefBlock& ref) {
    const int b = trace.blockIndex(block);
    const BlockInfo& info = trace.blocks()[b];
    REQUIRE(info.layers == static_cast<int>(ref.maps.size()));
    double worst = 0;
    for (int l = 0; l < info.layers; ++l)
        for (int h = 0; h < info.heads; ++h) {
            const HeadMap map = trace.map(b, l, h);
            REQUIRE(map.rows == ref.rows);
            REQUIRE(map.cols == ref.cols);
            for (std::size_t i = 0; i < map.values.size(); ++i)
                worst = std::max(worst, std::abs(map.values[i] - ref.maps[l][h][i]));
        }
    return worst;
}

TextInput forced(const std::vector<std::int64_t>& source, const std::vector<std::int64_t>& target) {
    TextInput input;
    input.ids = source;
    input.targetIds = target;
    return input;
}

const std::vector<std::string> kKinds = {"dot", "additive", "linear"};

}  // namespace

TEST_CASE("built-in reverse models: encodeTarget feeds <s> then the target's symbols", "[builtin][forced]") {
    const auto model = builtin("reverse-dot");
    const auto ids = model->encodeTarget("ab3");
    // vocabulary: <pad> <s> </s> 0-9 a-z, so '3' = 6, 'a' = 13, 'b' = 14
    REQUIRE(ids == std::vector<std::int64_t>{1, 13, 14, 6});
    CHECK(model->info().encoderDecoder);
    REQUIRE_THROWS_WITH(model->encodeTarget("aB"), Catch::Contains("target") && Catch::Contains("'B'"));
    REQUIRE_THROWS_WITH(model->encodeTarget(std::string(17, 'a')), Catch::Contains("at most 16"));
    REQUIRE_THROWS_WITH(model->encodeTarget(""), Catch::Contains("empty"));
}

TEST_CASE("built-in reverse models: a forced target equal to the greedy rows gives the greedy trace",
          "[builtin][forced]") {
    for (const auto& kind : kKinds) {
        SECTION(kind) {
            const auto model = builtin("reverse-" + kind);
            const auto source = model->encodeText("kq83mz0a");
            const auto greedy = model->forward(source);
            std::vector<std::int64_t> rows = {1};
            for (auto id : greedy->outputIds()) rows.push_back(id);
            const auto trace = model->forwardText(forced(source, rows));
            for (const char* block : {"encoder", "decoder", "cross"}) {
                const int b = trace->blockIndex(block);
                REQUIRE(trace->blocks()[b].queryTokens == greedy->blocks()[b].queryTokens);
                for (int l = 0; l < trace->blocks()[b].layers; ++l)
                    for (int h = 0; h < trace->blocks()[b].heads; ++h)
                        REQUIRE(trace->map(b, l, h).values == greedy->map(b, l, h).values);
            }
            // One output per row: the greedy outputs, then the end mark the last row predicts.
            std::vector<std::int64_t> expected = greedy->outputIds();
            expected.push_back(2);
            CHECK(trace->outputIds() == expected);
            CHECK(trace->outputTokens().back() == "</s>");
        }
    }
}

TEST_CASE("built-in reverse models: a different forced target changes the maps as the reference says",
          "[builtin][forced]") {
    for (const auto& kind : kKinds) {
        SECTION(kind) {
            const auto model = builtin("reverse-" + kind);
            const auto source = model->encodeText("kq83mz0a");
            const auto target = model->encodeTarget("zzz1x");  // not the reversal, and shorter
            const auto trace = model->forwardText(forced(source, target));
            const std::vector<long long> src(source.begin(), source.end()), tgt(target.begin(), target.end());
            const RefSeq2seq ref = referenceSeq2seq(folderOf("reverse-" + kind), src, tgt);
            CHECK(largestDifference(*trace, "encoder", ref.encoder) < 2e-5);
            CHECK(largestDifference(*trace, "decoder", ref.decoder) < 2e-5);
            CHECK(largestDifference(*trace, "cross", ref.cross) < 2e-5);
            const BlockInfo& cross = trace->blocks()[trace->blockIndex("cross")];
            REQUIRE(cross.queryTokens == std::vector<std::string>{"<s>", "z", "z", "z", "1", "x"});
            REQUIRE(cross.keyTokens.size() == source.size());
            // The rows fed other symbols than the greedy decode attend differently.
            const auto greedy = model->forward(source);
            const HeadMap a = trace->map(trace->blockIndex("cross"), 1, 0);
            const HeadMap g = greedy->map(greedy->blockIndex("cross"), 1, 0);
            double changed = 0;
            for (int j = 0; j < a.cols; ++j)
                changed = std::max(changed, static_cast<double>(std::abs(a.at(3, j) - g.at(3, j))));
            CHECK(changed > 1e-3);
            // Row 0 sees only <s>, identical in both runs.
            for (int j = 0; j < a.cols; ++j) CHECK(a.at(0, j) == Approx(g.at(0, j)).margin(1e-6));
            // outputIds: per row the reference's argmax next token.
            REQUIRE(trace->outputIds().size() == target.size());
            for (std::size_t r = 0; r < target.size(); ++r) {
                const auto& row = ref.logits[r];
                CHECK(trace->outputIds()[r] == std::max_element(row.begin(), row.end()) - row.begin());
            }
        }
    }
}

TEST_CASE("built-in reverse models: forced targets survive reruns and bad target ids are refused",
          "[builtin][forced]") {
    const auto model = builtin("reverse-dot");
    const auto source = model->encodeText("abc");
    const auto target = model->encodeTarget("c9a");
    const auto trace = model->forwardText(forced(source, target));
    RunOptions masked;
    masked.maskHeads = {{"cross", 1, 0}};
    const auto rerun = model->rerun(*trace, masked);
    REQUIRE(rerun->blocks()[rerun->blockIndex("cross")].queryTokens == std::vector<std::string>{"<s>", "c", "9", "a"});
    BuiltinRefOptions ref;
    ref.masked = {{"cross", 1, 0}};
    const RefSeq2seq expected = referenceSeq2seq(folderOf("reverse-dot"),
                                                 {source.begin(), source.end()}, {target.begin(), target.end()}, ref);
    CHECK(largestDifference(*rerun, "decoder", expected.decoder) < 2e-5);

    REQUIRE_THROWS_WITH(model->forwardText(forced(source, {13, 14})), Catch::Contains("start symbol <s>"));
    REQUIRE_THROWS_WITH(model->forwardText(forced(source, {1, 99})), Catch::Contains("target id 99"));
    REQUIRE_THROWS_WITH(model->forwardText(forced(source, std::vector<std::int64_t>(18, 1))),
                        Catch::Contains("18 ids") && Catch::Contains("17 positions"));
}

}  // namespace test_builtin_forced
