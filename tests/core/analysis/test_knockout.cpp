// Attention knockout (RunOptions::knockouts): the knocked cells are 0 in the maps the model used
// and their rows are the plain rows renormalised over the keys left (exactly, in the first layer,
// whose inputs the knockout cannot change); later layers and the output change; refusals.
#include "attnscope/runtime/error.h"
#include "family_checks.h"

#include <catch2/catch.hpp>

namespace test_knockout {

using namespace attnscope;
using namespace attnscope::testing;

TEST_CASE("knocked-out cells are 0 and their rows renormalised over the keys left", "[analysis][knockout]") {
    LlamaSpec spec;  // 2 layers, 4 heads over 2 kv heads
    const auto model = writeAndLoad(makeLlama(spec, 15), "knockout-llama");
    const std::vector<std::int64_t> ids = {3, 17, 0, 39, 22, 5, 11};
    const auto plain = model->forward(ids);
    RunOptions run;
    run.knockouts.push_back({{6, 4}, {0, 2}, 0, 0});  // queries 6 and 4 lose keys 0 and 2 in layer 0
    const auto knocked = model->forward(ids, run);
    const int n = static_cast<int>(ids.size());
    for (int h = 0; h < spec.heads; ++h) {
        const HeadMap a = plain->map(0, 0, h), b = knocked->map(0, 0, h);
        for (int i = 0; i < n; ++i) {
            const bool row = i == 6 || i == 4;
            double left = 0;
            for (int j = 0; j <= i; ++j)
                if (!row || (j != 0 && j != 2)) left += a.at(i, j);
            for (int j = 0; j < n; ++j) {
                const bool cut = row && (j == 0 || j == 2);
                const double want = cut ? 0.0 : row ? a.at(i, j) / left : a.at(i, j);
                CHECK(b.at(i, j) == Approx(want).margin(1e-6));
            }
        }
    }
    // Layer 1 reads what layer 0 changed, and so does the output.
    double moved = 0;
    for (int h = 0; h < spec.heads; ++h) {
        const HeadMap a = plain->map(0, 1, h), b = knocked->map(0, 1, h);
        for (std::size_t c = 0; c < a.values.size(); ++c)
            moved = std::max(moved, double(std::abs(a.values[c] - b.values[c])));
    }
    CHECK(moved > 1e-4);
    double logits = 0;
    for (std::size_t v = 0; v < plain->nextTokenLogits().size(); ++v)
        logits = std::max(logits, double(std::abs(plain->nextTokenLogits()[v] - knocked->nextTokenLogits()[v])));
    CHECK(logits > 1e-4);
    // A knockout outside the run's layers changes nothing.
    RunOptions later;
    later.knockouts.push_back({{6}, {0}, 1, 1});
    const auto onlyLast = model->forward(ids, later);
    for (int h = 0; h < spec.heads; ++h) CHECK(onlyLast->map(0, 0, h).values == plain->map(0, 0, h).values);
}

TEST_CASE("knockout refuses rows left with no key, positions and layers out of range, and encoders",
          "[analysis][knockout]") {
    LlamaSpec spec;
    const auto model = writeAndLoad(makeLlama(spec, 16), "knockout-refusals");
    const std::vector<std::int64_t> ids = {3, 17, 0, 39};
    RunOptions run;
    run.knockouts.push_back({{1}, {0, 1}, 0, 1});  // causal row 1 sees only keys 0 and 1
    CHECK_THROWS_WITH(model->forward(ids, run), Catch::Contains("leaves query position 1 with no key in layer 0"));
    run.knockouts = {{{4}, {0}, 0, 0}};
    CHECK_THROWS_WITH(model->forward(ids, run), Catch::Contains("knockout position 4 is outside the input (0..3)"));
    run.knockouts = {{{3}, {0}, 1, 2}};
    CHECK_THROWS_WITH(model->forward(ids, run), Catch::Contains("knockout layers 1-2 are not a range within 0..1"));
    BertSpec bert;
    run.knockouts = {{{1}, {0}, 0, 0}};
    CHECK_THROWS_WITH(writeAndLoad(makeBert(bert, 3), "knockout-bert")->forward(ids, run),
                      Catch::Contains("decoder-only language models; bert is not one"));
}

}  // namespace test_knockout
