// Token kinds (analysis/token_kind.h) as AttentionViz colours tokens: exact kinds of hand-made
// token sequences of each vocabulary style, and the kinds of a real GPT-2 tokenizer's tokens in a
// Trace, checked against the raw strings the tokenizer.json file gives those ids.
#include "attnscope/analysis/token_kind.h"
#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"
#include "gpt2_fixture.h"

#include <catch2/catch.hpp>

namespace test_token_kind {

using namespace attnscope;
using namespace attnscope::testing;
using K = TokenKind;

TEST_CASE("token kinds of byte-level, WordPiece, SentencePiece and plain tokens", "[analysis][token-kind]") {
    // GPT-2: "Ġ" is a leading space; a piece without it continues the word before.
    CHECK(tokenKinds({"<|endoftext|>", "The",
                      "\xC4\xA0"
                      "cat",
                      "\xC4\xA0"
                      "sat",
                      "ting", ",",
                      "\xC4\xA0"
                      "!",
                      "\xC4\x8A", "Hello"}) == std::vector<K>{K::Special, K::WordStart, K::WordStart, K::WordStart,
                                                              K::Continuation, K::Punctuation, K::Punctuation,
                                                              K::Punctuation, K::WordStart});
    // BERT: "##" marks continuations.
    CHECK(tokenKinds({"[CLS]", "the", "cat", "##s", "sat", ".", "[SEP]"}) ==
          std::vector<K>{K::Special, K::WordStart, K::WordStart, K::Continuation, K::WordStart, K::Punctuation,
                         K::Special});
    // SentencePiece: "▁" is a leading space; "<0x0A>" is a byte, not a special token.
    CHECK(tokenKinds({"<s>",
                      "\xE2\x96\x81"
                      "The",
                      "\xE2\x96\x81"
                      "cat",
                      "s", "\xE2\x80\x9C", "<0x0A>"}) ==
          std::vector<K>{K::Special, K::WordStart, K::WordStart, K::Continuation, K::Punctuation, K::Continuation});
    // Readable labels (a decoder's target): "·" shows the leading space.
    CHECK(tokenKinds({"\xC2\xB7"
                      "Das",
                      "\xC2\xB7"
                      "Haus",
                      "es", "."}) == std::vector<K>{K::WordStart, K::WordStart, K::Continuation, K::Punctuation});
    // No markers at all (built-in character models): every token is a word of its own.
    CHECK(tokenKinds({"a", "b", "1", "+"}) == std::vector<K>{K::WordStart, K::WordStart, K::WordStart, K::Punctuation});
    CHECK(std::string(tokenKindName(K::Continuation)) == "continuation");
}

TEST_CASE("token kinds of a GPT-2 trace follow its tokenizer's raw tokens", "[analysis][token-kind]") {
    const auto dir = freshDir("token-kind-gpt2");
    writeGpt2TokenizerFolder(dir, std::filesystem::path(ATTNSCOPE_TOKENIZER_DATA) / "gpt2.json", 3);
    const auto model = Model::load(dir, LoadOptions{DeviceChoice::Cpu, {}});
    const auto trace = model->forward(model->encodeText("The cats, sleeping!"));
    const auto& tokens = trace->tokens();
    const auto queries = blockTokenKinds(*trace, 0, false), keys = blockTokenKinds(*trace, 0, true);
    REQUIRE(queries.size() == tokens.size());
    CHECK(keys == queries);  // self-attention: the same tokens on both sides
    bool sawStart = false, sawPunct = false;
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        INFO("token " << i << " '" << tokens[i] << "'");
        const std::string& t = tokens[i];
        if (t == "," || t == "!") {
            CHECK(queries[i] == K::Punctuation);
            sawPunct = true;
        } else if (i == 0 || t.rfind("\xC4\xA0", 0) == 0) {
            CHECK(queries[i] == K::WordStart);
            sawStart = true;
        } else {
            CHECK(queries[i] == K::Continuation);
        }
    }
    CHECK(sawStart);
    CHECK(sawPunct);
    CHECK_THROWS_WITH(blockTokenKinds(*trace, 3, false), Catch::Contains("block 3 is out of range"));
}

}  // namespace test_token_kind
