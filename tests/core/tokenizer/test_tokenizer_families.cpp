// The decoder families' tokenizer.json layouts (tests/data/tokenizers/families/, built by
// families.mjs the way each family ships its file) against Hugging Face's tokenizers on 33 texts
// (families.json): ids, tokens, byte offsets, decoded text; the special tokens each family's
// post-processor adds; legacy folders (OPT's vocab.json + merges.txt with add_bos_token); and
// Model::encodeText through model folders that carry these tokenizers.
#include "attnscope/models/model.h"
#include "attnscope/attention/trace.h"
#include "attnscope/tokenizer/tokenizer.h"
#include "family_fixtures.h"
#include "golden.h"
#include "gpt2_fixture.h"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <fstream>
#include <set>

namespace test_tokenizer_families {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

const std::filesystem::path kData = ATTNSCOPE_TOKENIZER_DATA;

const nlohmann::json& familyCase(const std::string& name) {
    for (const auto& c : familyGolden()["cases"])
        if (c["name"] == name) return c;
    throw std::runtime_error("no family case " + name);
}

std::unique_ptr<Tokenizer> familyTokenizer(const std::string& name) {
    return Tokenizer::fromFile(kData / "families" / (name + ".json"));
}

std::size_t textIndex(const std::string& text) {
    const auto& texts = familyGolden()["texts"];
    for (std::size_t i = 0; i < texts.size(); ++i)
        if (texts[i] == text) return i;
    throw std::runtime_error("no family text " + text);
}

nlohmann::json readJson(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    REQUIRE(in);
    return nlohmann::json::parse(in);
}

}  // namespace

TEST_CASE("each decoder family's tokenizer.json layout tokenizes like Hugging Face's tokenizers",
          "[tokenizer][families]") {
    const auto& cases = familyGolden()["cases"];
    std::set<std::string> names;
    for (const auto& c : cases) names.insert(c["name"].get<std::string>());
    CHECK(names == std::set<std::string>{"gpt_neox", "gptj", "phi", "opt", "bloom", "falcon", "gemma", "gemma3",
                                         "qwen3", "olmo2", "phi3"});
    for (const auto& c : cases) {
        const std::string name = c["name"];
        auto tok = Tokenizer::fromFile(kData / c["base"].get<std::string>());
        const auto problems = tokenizerMismatches(familyGolden()["texts"], c["results"], *tok);
        std::string report;
        for (std::size_t i = 0; i < problems.size() && i < 4; ++i) report += "\n  " + problems[i];
        INFO("family " << name << ": " << problems.size() << " mismatches" << report);
        CHECK(problems.empty());
    }
}

TEST_CASE("each family adds the special tokens its post-processor names, and only those", "[tokenizer][families]") {
    // (family, tokens added before the text, tokens added after it)
    struct Expect {
        const char* family;
        std::vector<std::string> before, after;
    };
    const std::vector<Expect> expected = {
            {"gpt_neox", {}, {}}, {"gptj", {}, {}},   {"phi", {}, {}},          {"opt", {"</s>"}, {}},
            {"bloom", {}, {}},    {"falcon", {}, {}}, {"gemma", {"<bos>"}, {}}, {"gemma3", {"<bos>"}, {}},
            {"qwen3", {}, {}},    {"olmo2", {}, {}},  {"phi3", {"<s>"}, {}},
    };
    for (const auto& x : expected) {
        INFO("family " << x.family);
        auto tok = familyTokenizer(x.family);
        const Encoding e = tok->encode("Hello world");
        const Encoding plain = tok->encode("Hello world", false);
        REQUIRE(e.ids.size() == plain.ids.size() + x.before.size() + x.after.size());
        for (std::size_t i = 0; i < e.ids.size(); ++i) {
            const bool added = i < x.before.size() || i >= e.ids.size() - x.after.size();
            CHECK(e.special[i] == added);
            if (i < x.before.size()) {
                CHECK(e.tokens[i] == x.before[i]);
                CHECK(e.offsets[i] == std::make_pair(std::size_t{0}, std::size_t{0}));
                CHECK(tok->tokenToId(x.before[i]) == e.ids[i]);
            }
        }
        CHECK(nlohmann::json(e.ids) == familyCase(x.family)["results"][0]["ids"]);
    }
    // A special token written in the text is the token itself, not the post-processor's.
    auto gemma = familyTokenizer("gemma3");
    const std::size_t chat = textIndex(
            "<bos><start_of_turn>user\nHi there<end_of_turn>\n<start_of_turn>model\n\xE2\x96\x81\xE2\x96\x81\xE2\x96\x81 spaces<eos>");
    const Encoding e = gemma->encode(familyGolden()["texts"][chat].get<std::string>());
    REQUIRE(e.tokens.size() > 3);
    CHECK(e.tokens[0] == "<bos>");
    CHECK(e.special[0]);
    CHECK(e.tokens[1] == "<bos>");
    CHECK_FALSE(e.special[1]);  // from the text
    CHECK(e.tokens[2] == "<start_of_turn>");
}

TEST_CASE("an OPT folder with vocab.json, merges.txt and add_bos_token tokenizes like its converted tokenizer.json",
          "[tokenizer][families]") {
    // OPT ships GPT-2's files with fairseq's <s> <pad> </s> <unk> first and tokenizer_config.json
    // saying add_bos_token with bos "</s>": transformers' GPT2Converter makes that "</s> $A", not
    // RoBERTa's "<s> $A </s>".
    const auto dir = freshDir("opt-legacy-tokenizer");
    const auto opt = readJson(kData / "families" / "opt.json");
    std::ofstream(dir / "vocab.json") << opt["model"]["vocab"].dump();
    {
        std::ofstream merges(dir / "merges.txt");
        merges << "#version: 0.2\n";
        for (const auto& m : opt["model"]["merges"]) merges << m.get<std::string>() << "\n";
    }
    std::ofstream(dir / "tokenizer_config.json")
            << R"({"add_bos_token": true, "add_prefix_space": false, "errors": "replace",
        "bos_token": {"__type": "AddedToken", "content": "</s>", "lstrip": false, "normalized": true, "rstrip": false, "single_word": false},
        "eos_token": {"__type": "AddedToken", "content": "</s>", "lstrip": false, "normalized": true, "rstrip": false, "single_word": false},
        "unk_token": {"__type": "AddedToken", "content": "</s>", "lstrip": false, "normalized": true, "rstrip": false, "single_word": false},
        "pad_token": {"__type": "AddedToken", "content": "<pad>", "lstrip": false, "normalized": true, "rstrip": false, "single_word": false},
        "tokenizer_class": "GPT2Tokenizer"})";
    auto tok = Tokenizer::fromFolder(dir);
    REQUIRE(tok);
    const auto problems = tokenizerMismatches(familyGolden()["texts"], familyCase("opt")["results"], *tok);
    INFO((problems.empty() ? std::string() : problems.front()));
    CHECK(problems.empty());

    // Without tokenizer_class, a vocabulary with <s> and </s> still reads as RoBERTa's.
    std::filesystem::remove(dir / "tokenizer_config.json");
    auto roberta = Tokenizer::fromFolder(dir);
    const auto ids = roberta->encode("Hello world").ids;
    REQUIRE(ids.size() >= 2);
    CHECK(ids.front() == 0);  // <s>
    CHECK(ids.back() == 2);   // </s>
}

TEST_CASE("Model::encodeText gives each family folder's post-processor tokens", "[tokenizer][families]") {
    auto checkFolder = [](const std::filesystem::path& dir, const std::string& family) {
        INFO("family " << family);
        auto model = Model::load(dir, LoadOptions{DeviceChoice::Cpu, {}});
        REQUIRE(model->tokenizer());
        const auto& ref = familyCase(family)["results"];
        for (std::size_t text : {0u, 4u, 7u, 13u}) {
            INFO("text " << text);
            CHECK(nlohmann::json(model->encodeText(familyGolden()["texts"][text].get<std::string>())) ==
                  ref[text]["ids"]);
        }
        auto trace = model->forward(model->encodeText("Hello world"));
        CHECK(nlohmann::json(trace->tokens()) == ref[0]["tokens"]);
        return trace;
    };
    SECTION("GPT-2 folders with the GPT-NeoX, CodeGen/Phi and OPT layouts") {
        for (const char* family : {"gpt_neox", "phi", "opt"}) {
            auto tok = familyTokenizer(family);
            Gpt2Spec spec;
            spec.vocab = static_cast<int>(tok->vocabSize());
            spec.vocabJson = false;
            const auto dir = freshDir(std::string("gpt2-") + family);
            writeGpt2Folder(dir, makeGpt2(spec, 3));
            std::filesystem::copy_file(kData / "families" / (std::string(family) + ".json"), dir / "tokenizer.json");
            auto trace = checkFolder(dir, family);
            if (std::string(family) == "opt") CHECK(trace->tokens().front() == "</s>");
        }
    }
    SECTION("a Llama folder with Phi-3's tokenizer starts with <s>") {
        LlamaSpec spec;
        spec.vocab = static_cast<int>(familyTokenizer("phi3")->vocabSize());
        spec.tied = true;
        const auto dir = freshDir("llama-phi3-tokenizer");
        writeCheckpoint(dir, makeLlama(spec, 8));
        std::filesystem::copy_file(kData / "families" / "phi3.json", dir / "tokenizer.json");
        auto trace = checkFolder(dir, "phi3");
        CHECK(trace->tokens().front() == "<s>");
    }
    SECTION("a Qwen2 folder with Qwen3's tokenizer adds no BOS") {
        LlamaSpec spec;
        spec.type = "qwen2";
        spec.vocab = static_cast<int>(familyTokenizer("qwen3")->vocabSize());
        spec.tied = true;
        const auto dir = freshDir("qwen2-qwen3-tokenizer");
        writeCheckpoint(dir, makeLlama(spec, 9));
        std::filesystem::copy_file(kData / "families" / "qwen3.json", dir / "tokenizer.json");
        auto trace = checkFolder(dir, "qwen3");
        CHECK(trace->tokens().front() == "H");
    }
}

TEST_CASE("Oniguruma's nested classes are unions; a negated nested class is refused by name", "[tokenizer][families]") {
    // Split with behavior Removed drops what the regex matches, so the tokens show what it matched.
    auto removing = [](const std::string& regex) {
        const nlohmann::json j = {
                {"pre_tokenizer",
                 {{"type", "Split"}, {"pattern", {{"Regex", regex}}}, {"behavior", "Removed"}, {"invert", false}}},
                {"model",
                 {{"type", "BPE"},
                  {"vocab", {{"a", 0}, {"b", 1}, {"c", 2}, {"[", 3}, {"]", 4}, {"^", 5}, {"x", 6}}},
                  {"merges", nlohmann::json::array()}}},
        };
        return Tokenizer::fromJson(j.dump(), "nested.json");
    };
    // "[a[bc]]" is one of a, b, c; PCRE2 alone would read the class "[a[bc]" followed by a literal "]".
    CHECK(removing("[a[bc]]")->encode("a]x[c^b").tokens == std::vector<std::string>{"]", "x", "[", "^"});
    CHECK(removing("[^a[bc]]")->encode("a]x[c^b").tokens == std::vector<std::string>{"a", "c", "b"});
    CHECK(removing("[x[:punct:]]")->encode("a]x[c^b").tokens == std::vector<std::string>{"a", "c", "b"});
    CHECK_THROWS_WITH(removing("[a[^b]]"), Catch::Contains("nested.json: pre_tokenizer (Split)") &&
                                                   Catch::Contains("has a negated class inside a class (offset 2)"));
}

TEST_CASE("a Llama or Gemma tokenizer_config.json rebuilds the post-processor as transformers does",
          "[tokenizer][families]") {
    // transformers' Llama, Gemma and GPT-NeoX fast tokenizers replace tokenizer.json's
    // post-processor with "[bos] $A [eos]" from add_bos_token / add_eos_token on loading.
    const auto& cases = familyGolden()["config_cases"];
    REQUIRE(cases.size() == 4);
    for (const auto& c : cases) {
        const std::string name = c["name"];
        INFO("case " << name);
        const auto dir = freshDir("tokenizer-config-" + name);
        std::filesystem::copy_file(kData / c["base"].get<std::string>(), dir / "tokenizer.json");
        std::ofstream(dir / "tokenizer_config.json") << c["tokenizer_config"].dump();
        auto tok = Tokenizer::fromFolder(dir);
        REQUIRE(tok);
        const auto problems = tokenizerMismatches(familyGolden()["texts"], c["results"], *tok);
        INFO((problems.empty() ? std::string() : problems.front()));
        CHECK(problems.empty());
    }
    // Phi-3's file says "<s> $A"; its config turns the BOS off, so the folder gives none.
    const auto dir = freshDir("tokenizer-config-phi3-errors");
    std::filesystem::copy_file(kData / "families" / "phi3.json", dir / "tokenizer.json");
    CHECK(Tokenizer::fromFolder(dir)->encode("Hello").tokens.front() == "<s>");
    std::ofstream(dir / "tokenizer_config.json") << R"({"tokenizer_class": "LlamaTokenizer", "add_bos_token": false})";
    CHECK(Tokenizer::fromFolder(dir)->encode("Hello").tokens.front() == "\xE2\x96\x81H");
    // A class other than Llama's or Gemma's leaves tokenizer.json's post-processor alone.
    std::ofstream(dir / "tokenizer_config.json")
            << R"({"tokenizer_class": "PreTrainedTokenizerFast", "add_bos_token": false})";
    CHECK(Tokenizer::fromFolder(dir)->encode("Hello").tokens.front() == "<s>");
    std::ofstream(dir / "tokenizer_config.json")
            << R"({"tokenizer_class": "LlamaTokenizerFast", "add_eos_token": true, "eos_token": "<|nope|>"})";
    CHECK_THROWS_WITH(
            Tokenizer::fromFolder(dir),
            Catch::Contains(
                    "tokenizer_config.json: add_eos_token is set but eos_token '<|nope|>' is not in the tokenizer's vocabulary"));
}

TEST_CASE("added whitespace tokens read as whitespace marks; special tokens as written", "[tokenizer][families]") {
    auto neox = familyTokenizer("gpt_neox");
    const auto fourSpaces = neox->tokenToId("    ");
    REQUIRE(fourSpaces);
    CHECK(neox->displayToken(*fourSpaces) == "\xC2\xB7\xC2\xB7\xC2\xB7\xC2\xB7");  // ····
    CHECK(neox->displayToken(0) == "<|endoftext|>");
    auto phi = familyTokenizer("phi");
    CHECK(phi->displayToken(*phi->tokenToId("\t\t")) == "\xE2\x87\xA5\xE2\x87\xA5");  // ⇥⇥
    auto gemma = familyTokenizer("gemma3");
    CHECK(gemma->displayToken(*gemma->tokenToId("\n\n")) == "\xE2\x86\xB5\xE2\x86\xB5");  // ↵↵
    CHECK(gemma->displayToken(*gemma->tokenToId("\xE2\x96\x81\xE2\x96\x81\xE2\x96\x81")) == "\xC2\xB7\xC2\xB7\xC2\xB7");
    CHECK(gemma->displayToken(*gemma->tokenToId("<start_of_turn>")) == "<start_of_turn>");
    CHECK(gemma->displayToken(*gemma->tokenToId("<unused0>")) == "<unused0>");  // added, not special
}

}  // namespace test_tokenizer_families
