// SentencePiece model files read through libsentencepiece: ids and pieces identical to what
// SentencePiece itself encodes (tests/data/tokenizers/spm/golden_spm.json, written by
// python3-sentencepiece at development time, make_spm.py) for a Unigram model (nmt_nfkc
// charsmap) and a BPE model with byte fallback, on the hard texts; decode, vocabulary lookups
// and readable tokens on the same files.
#include "attnscope/runtime/error.h"
#include "attnscope/tokenizer/tokenizer.h"
#include "gpt2_fixture.h"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <fstream>

namespace test_sentencepiece_model {

using namespace attnscope;

namespace {

const std::filesystem::path kSpm = std::filesystem::path(ATTNSCOPE_TOKENIZER_DATA) / "spm";

const nlohmann::json& spmGolden() {
    static const nlohmann::json g = [] {
        std::ifstream in(kSpm / "golden_spm.json", std::ios::binary);
        return nlohmann::json::parse(in);
    }();
    return g;
}

// A folder holding `model` under `name` (and a tokenizer_config.json when given).
std::filesystem::path folderWith(const std::string& model, const std::string& name,
                                 const nlohmann::json& config = nullptr) {
    const auto dir = testing::freshDir("spm-" + name);
    std::filesystem::copy_file(kSpm / model, dir / name);
    if (!config.is_null()) std::ofstream(dir / "tokenizer_config.json") << config.dump();
    return dir;
}

// Llama's layout without its <s>, so that encode() is SentencePiece's encoding alone.
std::unique_ptr<Tokenizer> plainTokenizer(const std::string& model) {
    auto tok = Tokenizer::fromFolder(
            folderWith(model, "tokenizer.model", {{"tokenizer_class", "LlamaTokenizer"}, {"add_bos_token", false}}));
    REQUIRE(tok);
    return tok;
}

}  // namespace

TEST_CASE("SentencePiece Unigram and BPE (byte fallback) models encode as SentencePiece does",
          "[tokenizer][sentencepiece]") {
    for (const char* name : {"unigram", "bpe", "target"}) {
        INFO(name);
        const auto tok = plainTokenizer(std::string(name) + ".model");
        CHECK(tok->style() == TokenStyle::Metaspace);
        CHECK(tok->vocabSize() == spmGolden()["sizes"][name].get<std::int64_t>());
        std::size_t unknown = 0, bytes = 0;
        const std::size_t plainTexts = spmGolden()["texts"].size();  // the rest hold special tokens
        for (std::size_t k = 0; k < plainTexts; ++k) {
            const auto& c = spmGolden()[name][k];
            const std::string text = c["text"];
            INFO("text: " << text);
            const Encoding e = tok->encode(text, false);
            REQUIRE(e.ids == c["ids"].get<std::vector<std::int64_t>>());
            const auto pieces = c["pieces"].get<std::vector<std::string>>();
            REQUIRE(e.tokens.size() == pieces.size());
            for (std::size_t i = 0; i < pieces.size(); ++i) {
                // An unknown character's piece is its surface in SentencePiece, <unk> here.
                if (e.tokens[i] == "<unk>") {
                    ++unknown;
                    continue;
                }
                CHECK(e.tokens[i] == pieces[i]);
                bytes += e.tokens[i].rfind("<0x", 0) == 0;
                CHECK(tok->tokenToId(e.tokens[i]) == e.ids[i]);
                CHECK(tok->idToToken(e.ids[i]) == e.tokens[i]);
            }
            for (const auto& [b, en] : e.offsets) {
                CHECK(b <= en);
                CHECK(en <= text.size());
            }
        }
        // The texts reach both the unknown piece (Unigram) and the byte pieces (BPE).
        if (std::string(name) == "unigram") CHECK(unknown > 0);
        if (std::string(name) == "bpe") CHECK(bytes > 20);
    }
}

TEST_CASE("SentencePiece decode gives back SentencePiece's own decoding", "[tokenizer][sentencepiece]") {
    for (const char* name : {"unigram", "bpe"}) {
        INFO(name);
        const auto tok = plainTokenizer(std::string(name) + ".model");
        const auto& texts = spmGolden()["texts"];
        for (std::size_t i = 0; i < texts.size(); ++i) {
            INFO("text: " << texts[i].get<std::string>());
            CHECK(tok->decode(tok->encode(texts[i], false).ids) == spmGolden()["decoded"][name][i].get<std::string>());
        }
    }
    // Byte fallback round-trips text exactly (the BPE model keeps spaces and does not normalize).
    const auto bpe = plainTokenizer("bpe.model");
    CHECK(bpe->decode(bpe->encode("Tab\there: 日本 😀", false).ids) == "Tab\there: 日本 😀");
}

TEST_CASE("SentencePiece tokens read in the Metaspace style", "[tokenizer][sentencepiece]") {
    const auto tok = plainTokenizer("bpe.model");
    // Printable byte pieces read as their character, others stay as written.
    const auto j = tok->tokenToId("<0x4A>"), tab = tok->tokenToId("<0x09>");
    REQUIRE(j);
    REQUIRE(tab);
    CHECK(tok->displayToken(*j) == "J");
    CHECK(tok->displayToken(*tab) == "<0x09>");
    const auto world = tok->encode("Hello world", false);
    REQUIRE(world.tokens.front() == "▁H");
    CHECK(tok->displayToken(world.ids.front()) == "·H");
    CHECK_THROWS_AS(tok->displayToken(tok->vocabSize() + 5), Error);
}

}  // namespace test_sentencepiece_model
