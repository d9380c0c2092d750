// Golden tests: every tokenizer.json pipeline in tests/data/tokenizers/golden.json, on 24 hard
// texts, against the ids, tokens, byte offsets and decoded strings that Hugging Face's own
// `tokenizers` (Rust, 0.23.2) produced for the same files (generate.mjs, run at development time).
#include "attnscope/tokenizer/tokenizer.h"
#include "golden.h"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <sstream>

namespace test_tokenizer_golden {

using namespace attnscope;
using attnscope::testing::golden;

namespace {

const std::filesystem::path kData = ATTNSCOPE_TOKENIZER_DATA;

nlohmann::json readJson(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    REQUIRE(in);
    return nlohmann::json::parse(in);
}

// The base file with the case's patch applied: top-level keys replaced, "model" keys merged.
std::string caseJson(const nlohmann::json& c) {
    static std::map<std::string, nlohmann::json> bases;
    const std::string base = c["base"];
    if (!bases.count(base)) bases[base] = readJson(kData / base);
    nlohmann::json j = bases[base];
    for (auto it = c["patch"].begin(); it != c["patch"].end(); ++it) {
        if (it.key() == "model")
            for (auto m = it.value().begin(); m != it.value().end(); ++m) j["model"][m.key()] = m.value();
        else
            j[it.key()] = it.value();
    }
    return j.dump();
}

std::vector<std::string> compareCase(const nlohmann::json& c, const Tokenizer& tok) {
    return attnscope::testing::tokenizerMismatches(golden()["texts"], c["results"], tok);
}

}  // namespace

TEST_CASE("tokenizer.json pipelines reproduce Hugging Face tokenizers id for id", "[tokenizer][golden]") {
    const auto& cases = golden()["cases"];
    REQUIRE(cases.size() >= 40);
    std::size_t failed = 0;
    for (const auto& c : cases) {
        const std::string name = c["name"];
        auto tok = Tokenizer::fromJson(caseJson(c), name);
        const auto problems = compareCase(c, *tok);
        std::string report;
        for (std::size_t i = 0; i < problems.size() && i < 4; ++i) report += "\n  " + problems[i];
        INFO("case " << name << ": " << problems.size() << " mismatches" << report);
        CHECK(problems.empty());
        failed += problems.empty() ? 0 : 1;
    }
    INFO(failed << " of " << cases.size() << " cases differ");
    CHECK(failed == 0);
}

TEST_CASE("legacy folders tokenize like the tokenizer.json they stand for", "[tokenizer][golden]") {
    auto check = [](const std::filesystem::path& folder, const std::string& caseName) {
        const nlohmann::json* c = nullptr;
        for (const auto& k : golden()["cases"])
            if (k["name"] == caseName) c = &k;
        REQUIRE(c);
        auto tok = Tokenizer::fromFolder(folder);
        REQUIRE(tok);
        const auto problems = compareCase(*c, *tok);
        INFO(folder << " vs " << caseName << ": " << (problems.empty() ? std::string() : problems.front()));
        CHECK(problems.empty());
    };
    SECTION("vocab.json + merges.txt is GPT-2's byte-level BPE") { check(kData / "gpt2", "gpt2"); }
    SECTION("vocab.txt is BERT's WordPiece, lower-cased by default") { check(kData / "bert-uncased", "bert-uncased"); }
    SECTION("tokenizer_config.json's do_lower_case false keeps the case") {
        const auto dir = std::filesystem::temp_directory_path() / "attnscope-legacy-cased";
        std::filesystem::remove_all(dir);
        std::filesystem::create_directories(dir);
        std::filesystem::copy_file(kData / "bert-uncased" / "vocab.txt", dir / "vocab.txt");
        std::ofstream(dir / "tokenizer_config.json") << R"({"do_lower_case": false})";
        check(dir, "bert-legacy-cased");
    }
    SECTION("vocab.json with <s> and </s> is RoBERTa's byte-level BPE") {
        const auto dir = std::filesystem::temp_directory_path() / "attnscope-legacy-roberta";
        std::filesystem::remove_all(dir);
        std::filesystem::create_directories(dir);
        auto vocab = readJson(kData / "gpt2" / "vocab.json");
        const auto size = static_cast<std::int64_t>(vocab.size());  // 8257; <|endoftext|> is the last
        vocab["<s>"] = size;
        vocab["</s>"] = size + 1;
        vocab["<mask>"] = size + 2;
        std::ofstream(dir / "vocab.json") << vocab.dump();
        std::filesystem::copy_file(kData / "gpt2" / "merges.txt", dir / "merges.txt");
        check(dir, "roberta-legacy");
    }
}

TEST_CASE("CLIP's tokenizer.json layout (lowercase, CLIP's Split, BPE with </w>) reproduces Hugging Face id for id",
          "[tokenizer][golden][clip]") {
    // clip.json and clip_golden.json: tests/data/tokenizers/clip.mjs.
    const nlohmann::json expected = attnscope::testing::readGoldenFile("clip_golden.json");
    std::ifstream in(kData / "clip.json", std::ios::binary);
    REQUIRE(in);
    std::stringstream text;
    text << in.rdbuf();
    auto tok = Tokenizer::fromJson(text.str(), "clip.json");
    const auto problems = compareCase(expected, *tok);
    std::string report;
    for (std::size_t i = 0; i < problems.size() && i < 4; ++i) report += "\n  " + problems[i];
    INFO(problems.size() << " mismatches" << report);
    CHECK(problems.empty());
    // The pipeline lowercases and keeps </w> on each word's last piece.
    const auto& hello = expected["results"][0];
    CHECK(hello["tokens"] == nlohmann::json::array({"<|startoftext|>", "hello</w>", "world</w>", "<|endoftext|>"}));
}

}  // namespace test_tokenizer_golden
