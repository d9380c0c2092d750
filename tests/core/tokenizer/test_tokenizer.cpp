// Tokenizer loading errors (messages name the file and the component), readable labels, and the
// tokenizer inside a model folder (Model::encodeText, Trace labels).
#include "attnscope/runtime/error.h"
#include "attnscope/models/model.h"
#include "attnscope/tokenizer/tokenizer.h"
#include "attnscope/attention/trace.h"
#include "gpt2_fixture.h"
#include "golden.h"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <thread>

namespace test_tokenizer {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

const std::filesystem::path kData = ATTNSCOPE_TOKENIZER_DATA;

nlohmann::json tinyBpe() {  // a valid byte-level BPE over "ab"
    return {{"added_tokens", nlohmann::json::array()},
            {"normalizer", nullptr},
            {"pre_tokenizer",
             {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}}},
            {"post_processor", nullptr},
            {"decoder", {{"type", "ByteLevel"}}},
            {"model", {{"type", "BPE"}, {"vocab", {{"a", 0}, {"b", 1}, {"ab", 2}}}, {"merges", {"a b"}}}}};
}

std::string loadError(const nlohmann::json& j) {
    try {
        Tokenizer::fromJson(j.dump(), "tok.json");
    } catch (const Error& e) {
        return e.what();
    }
    return "(no error)";
}

}  // namespace

TEST_CASE("a tiny tokenizer.json encodes and decodes", "[tokenizer]") {
    auto tok = Tokenizer::fromJson(tinyBpe().dump(), "tok.json");
    const Encoding e = tok->encode("abab a");
    // " a" is 'Ġ' + 'a': the vocabulary has no 'Ġ' and no unknown token, so the space is dropped;
    // like Hugging Face's BPE, offsets count only the symbols kept, so 'a' points at the space.
    CHECK(e.ids == std::vector<std::int64_t>{2, 2, 0});
    CHECK(e.offsets == std::vector<std::pair<std::size_t, std::size_t>>{{0, 2}, {2, 4}, {4, 5}});
    CHECK(tok->decode({2, 0, 1}) == "abab");
    CHECK(tok->vocabSize() == 3);
    CHECK(tok->tokenToId("ab") == 2);
    CHECK_FALSE(tok->idToToken(7).has_value());
}

TEST_CASE("malformed tokenizer files name the file and the component", "[tokenizer][errors]") {
    SECTION("bad JSON") {
        CHECK_THROWS_WITH(Tokenizer::fromJson("{\"model\": ", "tok.json"),
                          Catch::StartsWith("tok.json: not valid JSON"));
    }
    SECTION("no model") {
        auto j = tinyBpe();
        j.erase("model");
        CHECK_THAT(loadError(j), Catch::Contains("tok.json: model") && Catch::Contains("missing"));
    }
    SECTION("unknown component types") {
        const std::pair<const char*, const char*> slots[] = {{"normalizer", "Fancy"},
                                                             {"pre_tokenizer", "UnicodeScripts"},
                                                             {"post_processor", "Magic"},
                                                             {"decoder", "CTC"},
                                                             {"model", "WordLevel"}};
        for (const auto& [slot, type] : slots) {
            auto j = tinyBpe();
            j[slot] = {{"type", type}};
            const std::string message = loadError(j);
            INFO(message);
            CHECK_THAT(message, Catch::StartsWith(std::string("tok.json: ") + slot) &&
                                        Catch::Contains(std::string("type '") + type + "' is not supported"));
        }
    }
    SECTION("a component inside a Sequence") {
        auto j = tinyBpe();
        j["normalizer"] = {{"type", "Sequence"}, {"normalizers", {{{"type", "NFC"}}, {{"type", "Nope"}}}}};
        CHECK_THAT(loadError(j), Catch::Contains("normalizer: type 'Nope' is not supported"));
    }
    SECTION("merges naming unknown tokens") {
        auto j = tinyBpe();
        j["model"]["merges"] = {"a b", "ab zz"};
        CHECK_THAT(loadError(j), Catch::StartsWith("tok.json: model (BPE): merge 1 'ab zz' needs 'zz'"));
        j["model"]["merges"] = {"ab"};
        CHECK_THAT(loadError(j), Catch::Contains("merge 0 'ab' is not two tokens"));
    }
    SECTION("a regex that does not compile") {
        auto j = tinyBpe();
        j["pre_tokenizer"] = {
                {"type", "Split"}, {"pattern", {{"Regex", "(\\p{L}+"}}}, {"behavior", "Isolated"}, {"invert", false}};
        CHECK_THAT(loadError(j),
                   Catch::StartsWith("tok.json: pre_tokenizer (Split): regex '(\\p{L}+' does not compile"));
        j["pre_tokenizer"]["pattern"] = {{"Regex", "a"}};
        j["pre_tokenizer"]["behavior"] = "Sideways";
        CHECK_THAT(loadError(j), Catch::Contains("behavior 'Sideways' is not one of"));
    }
    SECTION("a template naming a missing special token") {
        auto j = tinyBpe();
        j["post_processor"] = {
                {"type", "TemplateProcessing"},
                {"single",
                 {{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}}, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
                {"special_tokens", nlohmann::json::object()}};
        CHECK_THAT(loadError(j),
                   Catch::StartsWith("tok.json: post_processor (TemplateProcessing): the template names '<s>'"));
    }
    SECTION("wrong field types") {
        auto j = tinyBpe();
        j["model"]["vocab"]["c"] = "three";
        CHECK_THAT(loadError(j), Catch::Contains("model (BPE): token 'c' has an invalid id \"three\""));
        j = tinyBpe();
        j["added_tokens"] = {{{"content", "<s>"}}};
        CHECK_THAT(loadError(j), Catch::Contains("tok.json: added_tokens: 'id' is missing"));
    }
    SECTION("a file that cannot be read") {
        CHECK_THROWS_WITH(Tokenizer::fromFile(kData / "no-such.json"), Catch::EndsWith("no-such.json: cannot be read"));
    }
}

TEST_CASE("text that is not UTF-8 is refused", "[tokenizer][errors]") {
    auto tok = Tokenizer::fromJson(tinyBpe().dump(), "tok.json");
    CHECK_THROWS_WITH(tok->encode(std::string("ab\xC3(", 4)), "the text is not valid UTF-8 (byte 2)");
    CHECK_THROWS_WITH(tok->encode(std::string("\xED\xA0\x80", 3)),
                      "the text is not valid UTF-8 (byte 0)");  // a surrogate
}

TEST_CASE("a WordPiece model whose unknown token is missing says so when it needs it", "[tokenizer][errors]") {
    nlohmann::json j = {{"model", {{"type", "WordPiece"}, {"unk_token", "[UNK]"}, {"vocab", {{"a", 0}}}}},
                        {"pre_tokenizer", {{"type", "WhitespaceSplit"}}}};
    auto tok = Tokenizer::fromJson(j.dump(), "wp.json");
    CHECK(tok->encode("a a").ids == std::vector<std::int64_t>{0, 0});
    CHECK_THROWS_WITH(tok->encode("a b"), "wp.json: model (WordPiece): unk_token '[UNK]' is not in the vocabulary");
}

TEST_CASE("readable labels for each token style", "[tokenizer][display]") {
    // Byte-level: space 0x20 -> U+0120 'Ġ', \n -> U+010A 'Ċ', \t -> U+0109 'ĉ'; é = C3 A9 -> "Ã©".
    CHECK(readableToken("\xC4\xA0world", TokenStyle::ByteLevel) == "\xC2\xB7world");  // ·world
    CHECK(readableToken("\xC4\x8A", TokenStyle::ByteLevel) == "\xE2\x86\xB5");        // ↵
    CHECK(readableToken("\xC4\x89x", TokenStyle::ByteLevel) == "\xE2\x87\xA5x");      // ⇥x
    CHECK(readableToken("caf\xC3\x83\xC2\xA9", TokenStyle::ByteLevel) == "caf\xC3\xA9");
    CHECK(readableToken("\xC3\xB0\xC5\x81", TokenStyle::ByteLevel) == "<0xF0><0x9F>");  // half an emoji
    CHECK(readableToken("<|endoftext|>", TokenStyle::ByteLevel) == "<|endoftext|>");
    CHECK(readableToken("##ing", TokenStyle::WordPiece) == "ing");
    CHECK(readableToken("##", TokenStyle::WordPiece) == "##");
    CHECK(readableToken("\xE2\x96\x81Hello", TokenStyle::Metaspace) == "\xC2\xB7Hello");
    CHECK(readableToken("<0x41>", TokenStyle::Metaspace) == "A");
    CHECK(readableToken("<0xE2>", TokenStyle::Metaspace) == "<0xE2>");
    CHECK(readableToken("a b", TokenStyle::Plain) == "a\xC2\xB7"
                                                     "b");

    auto gpt2 = Tokenizer::fromFolder(kData / "gpt2");
    REQUIRE(gpt2);
    CHECK(gpt2->style() == TokenStyle::ByteLevel);
    const auto ids = gpt2->encode("Hello world\n").ids;
    CHECK(gpt2->displayTokens(ids) == std::vector<std::string>{"H", "ell", "o", "\xC2\xB7world", "\xE2\x86\xB5"});
    auto bert = Tokenizer::fromFolder(kData / "bert-uncased");
    REQUIRE(bert);
    CHECK(bert->style() == TokenStyle::WordPiece);
    CHECK(bert->displayTokens(bert->encode("Hello").ids) == std::vector<std::string>{"[CLS]", "hell", "o", "[SEP]"});
    CHECK_THROWS_WITH(bert->displayToken(999999), Catch::Contains("token id 999999 is not in the vocabulary"));
}

TEST_CASE("a folder without tokenizer files has no tokenizer", "[tokenizer]") {
    const auto dir = freshDir("no-tokenizer");
    CHECK(Tokenizer::fromFolder(dir) == nullptr);
    writeText(dir / "vocab.json", "{\"a\": 0}");  // vocab.json alone is only labels
    CHECK(Tokenizer::fromFolder(dir) == nullptr);
    writeText(dir / "merges.txt", "#version: 0.2\na b c\n");
    CHECK_THROWS_WITH(Tokenizer::fromFolder(dir), Catch::Contains("merges.txt: line 2 is not two tokens"));
}

TEST_CASE("encode is safe from several threads at once", "[tokenizer]") {
    auto tok = Tokenizer::fromFolder(kData / "gpt2");
    const std::string text = "The quick brown fox jumps over the lazy dog, again and again.";
    const auto expected = tok->encode(text).ids;
    std::vector<std::thread> threads;
    std::vector<int> ok(4, 0);
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            for (int i = 0; i < 50; ++i)
                ok[t] += tok->encode(text + std::to_string(i % 7)).ids.size() > expected.size() - 1;
        });
    for (auto& th : threads) th.join();
    CHECK(ok == std::vector<int>(4, 50));
}

TEST_CASE("a GPT-2 folder's tokenizer feeds encodeText and readable Trace labels", "[tokenizer][gpt2]") {
    const auto dir = freshDir("gpt2-tokenizer");
    writeGpt2TokenizerFolder(dir, kData / "gpt2.json", 3);
    auto model = Model::load(dir, LoadOptions{DeviceChoice::Cpu, {}});

    const auto ids = model->encodeText(goldenText(0));  // "Hello world"
    CHECK(nlohmann::json(ids) == goldenResult("gpt2", 0)["ids"]);
    auto trace = model->forward(ids);
    CHECK(trace->tokens() == std::vector<std::string>{"H", "ell", "o", "\xC4\xA0world"});
    CHECK(trace->displayTokens() == std::vector<std::string>{"H", "ell", "o", "\xC2\xB7world"});
    CHECK(trace->blocks()[0].queryTokens == trace->displayTokens());
    CHECK(trace->blocks()[0].keyTokens == trace->displayTokens());
    CHECK_THROWS_WITH(model->encodeText(""), "the text is empty: give at least one character");

    const auto plain = freshDir("gpt2-no-tokenizer");
    writeGpt2Folder(plain, makeGpt2(Gpt2Spec{}, 3));
    auto bare = Model::load(plain, LoadOptions{DeviceChoice::Cpu, {}});
    CHECK_THROWS_WITH(bare->encodeText("hi"), Catch::Contains("has no tokenizer"));
    auto bareTrace = bare->forward({1, 2});
    CHECK(bareTrace->displayTokens() == bareTrace->tokens());
}

TEST_CASE("a regex that backtracks without end is an error, not a hang", "[tokenizer][errors]") {
    auto j = tinyBpe();
    j["pre_tokenizer"] = {
            {"type", "Split"}, {"pattern", {{"Regex", "(a|aa)+$"}}}, {"behavior", "Isolated"}, {"invert", false}};
    auto tok = Tokenizer::fromJson(j.dump(), "tok.json");
    CHECK(tok->encode("aaa").ids == std::vector<std::int64_t>{0, 0, 0});
    CHECK_THROWS_WITH(tok->encode(std::string(60, 'a') + "b"),
                      Catch::StartsWith("tok.json: pre_tokenizer (Split): regex '(a|aa)+$' failed on the text"));
}

TEST_CASE("random text through every committed pipeline: offsets stay on character boundaries", "[tokenizer]") {
    // Pieces of hard text, glued at random: whatever the mix, encoding must not throw and every
    // offset must be an ordered range of whole characters inside the text.
    const std::vector<std::string> pieces = {" ",
                                             "  ",
                                             "\t",
                                             "\n",
                                             "\r\n",
                                             "a",
                                             "The",
                                             "don't",
                                             "42",
                                             "3.5",
                                             "\xC3\xA9",
                                             "e\xCC\x81",
                                             "\xE4\xB8\xAD\xE6\x96\x87",
                                             "\xD0\x9F\xD1\x80\xD0\xB8",
                                             "\xD9\x85\xD8\xB1",
                                             "\xE0\xA4\xA8\xE0\xA4\xAE\xE0\xA4\xB8\xE0\xA5\x8D",
                                             "\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD",
                                             "\xE2\x80\x8B",
                                             "\xC2\xA0",
                                             "<s>",
                                             "[CLS]",
                                             "<|endoftext|>",
                                             "!!",
                                             "https://x.org/?a=1",
                                             "\xEF\xBC\x8C"};
    std::uint32_t state = 12345;
    auto next = [&] { return state = state * 1664525u + 1013904223u; };
    for (const char* file :
         {"gpt2.json", "bert-uncased.json", "llama2.json", "llama3.json", "unigram.json", "affix-bpe.json"}) {
        auto tok = Tokenizer::fromFile(kData / file);
        for (int round = 0; round < 40; ++round) {
            std::string text;
            const int n = static_cast<int>(next() % 12);
            for (int i = 0; i < n; ++i) text += pieces[next() % pieces.size()];
            INFO(file << " text " << nlohmann::json(text).dump());
            const Encoding e = tok->encode(text);
            REQUIRE(e.ids.size() == e.offsets.size());
            auto boundary = [&](std::size_t at) {
                return at == text.size() || (at < text.size() && (static_cast<unsigned char>(text[at]) & 0xC0) != 0x80);
            };
            for (const auto& [b, en] : e.offsets) {
                REQUIRE(b <= en);
                REQUIRE(en <= text.size());
                REQUIRE(boundary(b));
                REQUIRE(boundary(en));
            }
            CHECK_NOTHROW(tok->decode(e.ids));
        }
    }
}

}  // namespace test_tokenizer
