// Retrieval heads and needle-in-a-haystack (analysis/needle.h) on a hand-weighted one-layer GPT-2
// that copies: head 0 attends from token x to the key holding x + 1 and writes it to the output,
// so after the question [10] it generates the needle's continuation 11, 12, 13 read from the
// needle (a retrieval score of 3 steps × 1/|needle| = 0.75 in every run); head 1 attends to the
// haystack (ids 0-9) and scores 0. Contexts, success and the refusals of bad grids.
#include "attnscope/analysis/needle.h"
#include "attnscope/attention/trace.h"
#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"
#include "family_checks.h"
#include "gpt2_fixture.h"
#include "needle_fixture.h"

#include <catch2/catch.hpp>

#include <cmath>

namespace test_needle {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

std::shared_ptr<const Model> copyingModel() {
    const auto dir = freshDir("niah-copying");
    writeCopyingGpt2(dir);
    return loadCpu(dir);
}

NeedleOptions grid() {
    NeedleOptions o;
    for (int i = 0; i < 40; ++i) o.haystack.push_back(i % 10);
    o.needle = {10, 11, 12, 13};
    o.question = {10};
    o.answer = {11, 12, 13};
    o.lengths = {12, 24};
    o.depths = {0.0, 0.5, 1.0};
    o.newTokens = 3;
    return o;
}

}  // namespace

TEST_CASE("NIAH: the context puts the needle after ⌊d·(L − |needle|)⌋ haystack ids, then the question", "[needle]") {
    const NeedleOptions o = grid();
    std::int64_t start = -1;
    CHECK(needleContext(o, 12, 0.5, start) == std::vector<std::int64_t>{0, 1, 2, 3, 10, 11, 12, 13, 4, 5, 6, 7, 10});
    CHECK(start == 4);
    CHECK(needleContext(o, 12, 1.0, start) == std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 10, 11, 12, 13, 10});
    CHECK(start == 8);
    needleContext(o, 24, 0.3, start);
    CHECK(start == 6);  // ⌊0.3 · 20⌋
    CHECK(containsRun({4, 11, 12, 13, 2}, {11, 12, 13}));
    CHECK_FALSE(containsRun({11, 4, 12, 13}, {11, 12, 13}));
    CHECK_FALSE(containsRun({1, 2}, {}));
}

TEST_CASE("NIAH: the copying head scores 0.75 in every run, the haystack head 0", "[needle]") {
    auto model = copyingModel();
    NeedleOptions o = grid();
    const NeedleResult r = needleScan(*model, o);
    REQUIRE(r.layers == 1);
    REQUIRE(r.heads == 2);
    REQUIRE(r.runs.size() == 6);
    for (const NeedleRun& run : r.runs) {
        INFO("length " << run.length << " depth " << run.depth);
        CHECK(run.generated == std::vector<std::int64_t>{11, 12, 13});
        CHECK(run.success);
    }
    CHECK(r.runs[4].length == 24);
    CHECK(r.runs[4].depth == 0.5);
    CHECK(r.runs[4].needleStart == 10);
    CHECK(r.retrieval[0] == Approx(0.75).margin(1e-12));
    CHECK(r.retrieval[1] == 0.0);
    // The needle's own ids as the answer: 10 is never generated, so every run fails.
    o.answer.clear();
    for (const NeedleRun& run : needleScan(*model, o).runs) CHECK_FALSE(run.success);
    // The end token stops a run after it: 12 ends each generation after two tokens.
    o.endToken = 12;
    const NeedleResult stopped = needleScan(*model, o);
    for (const NeedleRun& run : stopped.runs) CHECK(run.generated == std::vector<std::int64_t>{11, 12});
    CHECK(stopped.retrieval[0] == Approx(0.5).margin(1e-12));
}

TEST_CASE("NIAH: bad grids are refused with the option's name", "[needle]") {
    const auto refusal = [](const NeedleOptions& o) {
        try {
            checkNeedleOptions(o);
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("(no error)");
    };
    NeedleOptions o = grid();
    CHECK(refusal(o) == "(no error)");
    o.lengths = {4};
    CHECK(refusal(o) == "--lengths: 4 leaves no room beside the needle's 4 ids");
    o.lengths = {50};
    CHECK(refusal(o) == "--lengths: 50 needs 46 haystack ids, the haystack has 40");
    o = grid();
    o.depths = {0.5, 1.5};
    CHECK(refusal(o) == "--depths: 1.5 is outside [0, 1]");
    o.depths = {NAN};
    CHECK(refusal(o).rfind("--depths: ", 0) == 0);
    o = grid();
    o.lengths.clear();
    CHECK(refusal(o) == "--lengths: no context length given");
    o = grid();
    o.lengths = {62};
    o.haystack.resize(100, 1);
    auto model = copyingModel();
    CHECK_THROWS_WITH(needleScan(*model, o),
                      "niah: a context of 62 ids + the question + 3 new tokens exceeds the model's 64 positions");
}

}  // namespace test_needle
