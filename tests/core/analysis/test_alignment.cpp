// Hard alignment from cross maps (analysis/alignment.h): hand-made maps with known argmaxes,
// word grouping of each vocabulary style, and the trained built-in reverse model, whose
// alignment is known (target token i is source token n-1-i).
#include "attnscope/analysis/alignment.h"
#include "attnscope/models/builtin.h"
#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"

#include <catch2/catch.hpp>

#include <algorithm>

namespace test_alignment {

using namespace attnscope;

namespace {

// rows x cols map with one strong cell per row at `argmax[r]` (-1: an all-zero row).
HeadMap peaked(int rows, int cols, const std::vector<int>& argmax) {
    HeadMap m{rows, cols, std::vector<float>(static_cast<std::size_t>(rows) * cols, 0.f)};
    for (int r = 0; r < rows; ++r) {
        if (argmax[r] < 0) continue;
        for (int j = 0; j < cols; ++j) m.values[r * cols + j] = j == argmax[r] ? 0.6f : 0.4f / (cols - 1);
    }
    return m;
}

using Links = std::vector<std::pair<int, int>>;

}  // namespace

TEST_CASE("alignment: per target row the argmax source column, in Pharaoh i-j", "[alignment]") {
    // Source: ▁Das ▁Haus ist </s>  (3 tokens + end mark); target rows: <s> ▁The ▁hou se </s>
    const std::vector<std::string> source = {"\u2581Das", "\u2581Haus", "ist", "</s>"};
    const std::vector<std::string> rows = {"<s>", "\u2581The", "\u2581hou", "se", "</s>"};
    // Row 0 (<s>) peaks on Haus, rows 1-3 on Das, Haus, ist; row 4 (</s>) on </s>.
    HeadMap map = peaked(5, 4, {1, 0, 1, 2, 3});

    SECTION("tokens, rows as fed") {
        const Alignment a = alignCrossMap(map, source, rows, AlignmentUnits::Tokens, AlignmentRows::Input);
        REQUIRE(a.sourceUnits == std::vector<std::string>{"Das", "Haus", "ist"});
        REQUIRE(a.targetUnits == std::vector<std::string>{"The", "hou", "se"});
        CHECK(a.rowArgmax == std::vector<int>{-1, 0, 1, 2, -1});  // start row and </s> row dropped
        CHECK(a.links == Links{{0, 0}, {1, 1}, {2, 2}});
        CHECK(pharaohLine(a) == "0-0 1-1 2-2");
    }
    SECTION("words: a word pair is linked when any of its token pairs is") {
        const Alignment a = alignCrossMap(map, source, rows, AlignmentUnits::Words, AlignmentRows::Input);
        REQUIRE(a.sourceUnits == std::vector<std::string>{"Das", "Hausist"});
        REQUIRE(a.targetUnits == std::vector<std::string>{"The", "house"});
        CHECK(a.targetUnitOf == std::vector<int>{-1, 0, 1, 1, -1});
        CHECK(pharaohLine(a) == "0-0 1-1");  // hou->Haus and se->ist both land in word pair 1-1
    }
    SECTION("rows that predict the token (default)") {
        const Alignment a = alignCrossMap(map, source, rows);
        // Row 0 predicts The (-> Haus), row 1 predicts hou (-> Das), row 2 predicts se (-> Haus).
        CHECK(a.rowArgmax == std::vector<int>{1, 0, 1, -1, -1});
        CHECK(a.rowTarget == std::vector<int>{0, 1, 2, -1, -1});
        CHECK(pharaohLine(a) == "0-1 1-0 1-2");
    }
    SECTION("the argmax skips special source tokens; ties take the lowest column; empty rows link nothing") {
        HeadMap m = peaked(5, 4, {1, 3, 1, -1, 0});        // row 1 peaks on </s>
        m.values[1 * 4 + 1] = m.values[1 * 4 + 2] = 0.2f;  // among Das/Haus/ist: Haus and ist tie, above Das
        m.values[1 * 4 + 0] = 0.1f;
        const Alignment a = alignCrossMap(m, source, rows, AlignmentUnits::Tokens, AlignmentRows::Input);
        CHECK(a.rowArgmax == std::vector<int>{-1, 1, 1, -1, -1});
        CHECK(pharaohLine(a) == "1-0 1-1");
    }
    SECTION("labels that do not fit the map are an error") {
        REQUIRE_THROWS_WITH(alignCrossMap(map, {"a"}, rows), Catch::Contains("5x4") && Catch::Contains("1 source"));
    }
}

TEST_CASE("alignment: words from each vocabulary's marks", "[alignment]") {
    const std::vector<bool> keep4(4, false);
    // SentencePiece and byte-level BPE mark word starts; a piece without the mark continues.
    CHECK(groupWords({"\u2581un", "believ", "able", "\u2581day"}, keep4) == std::vector<int>{0, 0, 0, 1});
    CHECK(groupWords({"\u0120un", "believ", "\u0120day", "."}, keep4) == std::vector<int>{0, 0, 1, 1});
    // The first token starts a word even without a mark (GPT-2 writes no Ġ on the first word).
    CHECK(groupWords({"Hello", "\u0120wor", "ld", "!"}, keep4) == std::vector<int>{0, 1, 1, 1});
    // Readable labels ("·" for a space).
    CHECK(groupWords({"\u00b7un", "believ", "\u00b7day", "x"}, keep4) == std::vector<int>{0, 0, 1, 1});
    // WordPiece: "##" continues, everything else starts a word.
    CHECK(groupWords({"un", "##believ", "##able", "day"}, keep4) == std::vector<int>{0, 0, 0, 1});
    // The built-in models: one symbol per token, so every symbol is a word.
    CHECK(groupWords({"a", "b", "3", "z"}, keep4) == std::vector<int>{0, 1, 2, 3});
    // Dropped tokens (specials) get -1 and are not counted.
    CHECK(groupWords({"[CLS]", "un", "##able", "[SEP]"}, {true, false, false, true}) == std::vector<int>{-1, 0, 0, -1});
    for (const char* s : {"<s>", "</s>", "<pad>", "<extra_id_3>", "[CLS]", "[SEP]", "en_XX", ">>fra<<"})
        CHECK(isSpecialLabel(s));
    for (const char* s : {"<0x0A>", "a", "<", "[x]", "\u2581the", "##s", "ab_CD_"}) CHECK_FALSE(isSpecialLabel(s));
}

TEST_CASE("alignment: the trained built-in reverse model aligns target i with source n-1-i", "[alignment][builtin]") {
    LoadOptions load;
    load.device = DeviceChoice::Cpu;
    const auto model = Model::load("builtin:reverse-dot", load);
    // Every cross head of both layers, and their default mean, writes target token i while
    // attending to source token n-1-i (the rows that predict the tokens).
    std::vector<AlignmentOptions> choices(1);
    for (int l = 0; l < 2; ++l)
        for (int h = 0; h < 2; ++h) {
            AlignmentOptions o;
            o.heads = {{l, h}};
            choices.push_back(o);
        }
    TaskData data(7, Split::HeldOut);
    int sentences = 0;
    for (int k = 0; k < 20; ++k) {
        const std::string text = data.reverseSource();
        const auto trace = model->forward(model->encodeText(text));
        std::string output;
        for (const auto& t : trace->outputTokens()) output += t;
        if (output != std::string(text.rbegin(), text.rend()))
            continue;  // the known alignment is that of correct decodes
        ++sentences;
        const int n = static_cast<int>(text.size());
        Links expected;
        for (int i = 0; i < n; ++i) expected.push_back({n - 1 - i, i});
        std::sort(expected.begin(), expected.end());
        for (const AlignmentOptions& o : choices) {
            const Alignment a = alignTrace(*trace, o);
            INFO(text << ": " << pharaohLine(a) << " (" << a.heads << ")");
            CHECK(a.links == expected);
            CHECK(a.targetUnits.size() == std::size_t(n));
        }
        // Read from the rows the symbols are fed in, the same heads do not give it.
        AlignmentOptions shifted;
        shifted.rows = AlignmentRows::Input;
        if (n > 2) CHECK(alignTrace(*trace, shifted).links != expected);
    }
    CHECK(sentences >= 15);
    const auto trace = model->forward(model->encodeText("abc"));
    CHECK(alignTrace(*trace).heads == "every head of the last layer (layer 1, 2 heads)");
    CHECK(alignTrace(*trace, choices[2]).heads == "layer 0 head 1");
    AlignmentOptions bad;
    bad.heads = {{2, 0}};
    REQUIRE_THROWS_WITH(alignTrace(*trace, bad), Catch::Contains("head 2:0") && Catch::Contains("layers 0-1"));
}

}  // namespace test_alignment
