// tokenizer.json with the Precompiled normalizer (a SentencePiece model's charsmap, as Hugging
// Face's converter writes it for T5, XLM-R, ALBERT, DeBERTa-v2): ids, tokens and byte offsets
// identical to Hugging Face's tokenizers (tests/data/tokenizers/spm/hf_golden.json, hf_golden.mjs)
// on unigram.json (unigram.model converted, make_spm.py), with the normalizer sequences those
// converters build, and the Nmt normalizer.
#include "attnscope/runtime/error.h"
#include "attnscope/tokenizer/tokenizer.h"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <fstream>

namespace test_sentencepiece_precompiled {

using namespace attnscope;

namespace {

const std::filesystem::path kSpm = std::filesystem::path(ATTNSCOPE_TOKENIZER_DATA) / "spm";

nlohmann::json readJson(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    REQUIRE(in);
    return nlohmann::json::parse(in);
}

const nlohmann::json& unigramJson() {
    static const nlohmann::json j = readJson(kSpm / "unigram.json");
    return j;
}

// The case's normalizer with {"type": "Precompiled"} standing for unigram.json's own.
nlohmann::json withCharsmap(const nlohmann::json& n) {
    if (n.is_object() && n.value("type", "") == "Precompiled" && !n.contains("precompiled_charsmap"))
        return unigramJson()["normalizer"];
    if (n.is_object() && n.contains("normalizers")) {
        nlohmann::json out = n;
        for (auto& item : out["normalizers"]) item = withCharsmap(item);
        return out;
    }
    return n;
}

std::string jsonWithNormalizer(const nlohmann::json& normalizer) {
    nlohmann::json j = unigramJson();
    j["normalizer"] = normalizer;
    return j.dump();
}

}  // namespace

TEST_CASE("Precompiled and the SentencePiece converters' normalizers give Hugging Face's ids",
          "[tokenizer][sentencepiece][precompiled]") {
    const nlohmann::json golden = readJson(kSpm / "hf_golden.json");
    const auto texts = golden["texts"].get<std::vector<std::string>>();
    REQUIRE(golden["cases"].size() == 4);
    for (const auto& c : golden["cases"]) {
        const std::string name = c["name"];
        INFO("case " << name);
        const auto tok = Tokenizer::fromJson(jsonWithNormalizer(withCharsmap(c["normalizer"])), name);
        for (std::size_t i = 0; i < texts.size(); ++i) {
            INFO("text: " << texts[i]);
            const auto& r = c["results"][i];
            const Encoding e = tok->encode(texts[i]);
            CHECK(e.ids == r["ids"].get<std::vector<std::int64_t>>());
            CHECK(e.tokens == r["tokens"].get<std::vector<std::string>>());
            std::vector<std::pair<std::size_t, std::size_t>> offsets;
            for (const auto& o : r["offsets"]) offsets.emplace_back(o[0].get<std::size_t>(), o[1].get<std::size_t>());
            CHECK(e.offsets == offsets);
            CHECK(tok->encode(texts[i], false).ids == r["ids_no_special"].get<std::vector<std::int64_t>>());
            CHECK(tok->decode(e.ids, true) == r["decoded"].get<std::string>());
        }
    }
}

TEST_CASE("Precompiled agrees with SentencePiece's own normalization on plain text",
          "[tokenizer][sentencepiece][precompiled]") {
    // T5's tokenizer.json and unigram.model encode the hard texts alike (the two normalizers
    // differ only in corner cases: Hugging Face looks up grapheme clusters).
    const nlohmann::json sp = readJson(kSpm / "golden_spm.json");
    const auto tok = Tokenizer::fromJson(unigramJson().dump(), "unigram.json");
    for (const auto& c : sp["unigram"]) {
        const std::string text = c["text"];
        if (text.find('<') != std::string::npos) continue;  // special tokens are split out only in tokenizer.json
        INFO("text: " << text);
        CHECK(tok->encode(text, false).ids == c["ids"].get<std::vector<std::int64_t>>());
    }
}

TEST_CASE("A damaged Precompiled charsmap is refused naming the normalizer",
          "[tokenizer][sentencepiece][precompiled]") {
    auto refuse = [](const nlohmann::json& normalizer, const std::string& what) {
        INFO(normalizer.dump());
        try {
            Tokenizer::fromJson(jsonWithNormalizer(normalizer), "t.json")->encode("text ｆｕｌｌ");
            FAIL("accepted");
        } catch (const Error& e) {
            CHECK_THAT(e.what(), Catch::Contains("t.json: normalizer (Precompiled)"));
            CHECK_THAT(e.what(), Catch::Contains(what));
        }
    };
    refuse({{"type", "Precompiled"}, {"precompiled_charsmap", "not base64!"}}, "not base64");
    refuse({{"type", "Precompiled"}, {"precompiled_charsmap", "AAA="}}, "too short");
    refuse({{"type", "Precompiled"}, {"precompiled_charsmap", "/////wAAAAA="}}, "does not fit");  // trie size 2^32-1
    // A one-unit trie whose root links outside itself.
    refuse({{"type", "Precompiled"}, {"precompiled_charsmap", "BAAAAAD8//8="}}, "points outside the trie");
    // A null or empty map normalizes nothing.
    for (const nlohmann::json& map : {nlohmann::json(nullptr), nlohmann::json("")}) {
        const auto tok = Tokenizer::fromJson(
                jsonWithNormalizer({{"type", "Precompiled"}, {"precompiled_charsmap", map}}), "t.json");
        CHECK(tok->encode("ﬁ", false).tokens !=
              Tokenizer::fromJson(unigramJson().dump(), "u")->encode("ﬁ", false).tokens);
    }
}

}  // namespace test_sentencepiece_precompiled
