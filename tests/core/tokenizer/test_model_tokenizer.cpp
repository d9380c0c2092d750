// Model::tokenizer / hasTokenizer: a model reports the tokenizer its folder was loaded with, and
// its labels and encodings are those of the files (read here independently of core).
#include "attnscope/models/model.h"
#include "attnscope/tokenizer/tokenizer.h"
#include "family_fixtures.h"
#include "golden.h"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <fstream>

namespace test_model_tokenizer {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

const std::filesystem::path kData = ATTNSCOPE_TOKENIZER_DATA;

std::vector<std::int64_t> allIds(int vocab) {
    std::vector<std::int64_t> ids(static_cast<std::size_t>(vocab));
    for (int i = 0; i < vocab; ++i) ids[static_cast<std::size_t>(i)] = i;
    return ids;
}

nlohmann::json readJsonFile(const std::filesystem::path& file) {
    std::ifstream in(file);
    REQUIRE(in);
    return nlohmann::json::parse(in);
}

std::shared_ptr<const Model> loadCpu(const std::filesystem::path& dir) {
    return Model::load(dir, LoadOptions{DeviceChoice::Cpu, {}});
}

}  // namespace

TEST_CASE("a model with tokenizer.json reports its tokenizer; labels are the file's vocabulary", "[tokenizer][model]") {
    const auto dir = freshDir("model-tokenizer-json");
    writeGpt2TokenizerFolder(dir, kData / "gpt2.json", 3);
    const auto model = loadCpu(dir);
    const int vocab = model->info().vocabSize;  // 8257: the pruned GPT-2 vocabulary
    REQUIRE(vocab == 8257);

    REQUIRE(model->tokenizer() != nullptr);
    CHECK(model->hasTokenizer());
    CHECK(model->tokenizer()->origin() == (dir / "tokenizer.json").string());
    CHECK(model->tokenizer()->vocabSize() == vocab);

    // Labels: model.vocab, then added_tokens, as the file says; ids without a token in decimal.
    const auto json = readJsonFile(dir / "tokenizer.json");
    std::vector<std::string> expected(static_cast<std::size_t>(vocab));
    for (int i = 0; i < vocab; ++i) expected[static_cast<std::size_t>(i)] = std::to_string(i);
    for (auto it = json["model"]["vocab"].begin(); it != json["model"]["vocab"].end(); ++it)
        expected.at(it.value().get<std::size_t>()) = it.key();
    for (const auto& t : json["added_tokens"])
        expected.at(t["id"].get<std::size_t>()) = t["content"].get<std::string>();
    CHECK(model->tokenLabels(allIds(vocab)) == expected);

    // Encoding: the reference ids, the same through the model and through its tokenizer.
    for (std::size_t text : {0u, 5u, 11u}) {
        INFO("text " << text);
        const auto ids = model->encodeText(goldenText(text));
        CHECK(nlohmann::json(ids) == goldenResult("gpt2", text)["ids"]);
        CHECK(model->tokenizer()->encode(goldenText(text)).ids == ids);
    }
}

TEST_CASE("a model with vocab.txt or vocab.json + merges.txt reports its tokenizer", "[tokenizer][model]") {
    SECTION("BERT, vocab.txt: labels are the file's lines") {
        BertSpec spec;
        spec.vocab = 11506;  // the pruned bert-base-uncased vocabulary
        const auto dir = freshDir("model-tokenizer-vocab-txt");
        writeCheckpoint(dir, makeBert(spec, 5));
        std::filesystem::copy_file(kData / "bert-uncased" / "vocab.txt", dir / "vocab.txt");
        const auto model = loadCpu(dir);
        REQUIRE(model->tokenizer() != nullptr);
        CHECK(model->hasTokenizer());
        std::ifstream in(dir / "vocab.txt", std::ios::binary);
        std::vector<std::string> lines;
        for (std::string line; std::getline(in, line);) lines.push_back(line);
        REQUIRE(lines.size() == static_cast<std::size_t>(spec.vocab));
        CHECK(model->tokenLabels(allIds(spec.vocab)) == lines);
        CHECK(nlohmann::json(model->encodeText(goldenText(4))) == goldenResult("bert-uncased", 4)["ids"]);
    }
    SECTION("vocab.txt: an empty line or a repeated token leaves its id to the decimal label") {
        // The tokenizer gives a repeated token its first id, so the later one is never produced.
        const auto dir = freshDir("model-tokenizer-vocab-txt-gaps");
        writeCheckpoint(dir, makeBert(BertSpec{}, 6));
        std::string vocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n\nhello\nhello\n";
        for (int i = 7; i < 50; ++i) vocab += "w" + std::to_string(i) + "\n";
        writeText(dir / "vocab.txt", vocab);
        const auto model = loadCpu(dir);
        CHECK(model->tokenLabels({2, 4, 5, 6, 49}) == std::vector<std::string>{"[CLS]", "4", "hello", "6", "w49"});
        CHECK(model->encodeText("hello") == std::vector<std::int64_t>{2, 5, 3});
    }
    SECTION("GPT-2, vocab.json + merges.txt: labels are vocab.json's tokens") {
        Gpt2Spec spec;
        spec.vocab = 8257;
        spec.vocabJson = false;
        const auto dir = freshDir("model-tokenizer-legacy-bpe");
        writeGpt2Folder(dir, makeGpt2(spec, 4));
        for (const char* f : {"vocab.json", "merges.txt"}) std::filesystem::copy_file(kData / "gpt2" / f, dir / f);
        const auto model = loadCpu(dir);
        REQUIRE(model->tokenizer() != nullptr);
        const auto vocab = readJsonFile(dir / "vocab.json");
        std::vector<std::string> expected(static_cast<std::size_t>(spec.vocab));
        for (int i = 0; i < spec.vocab; ++i) expected[static_cast<std::size_t>(i)] = std::to_string(i);
        for (auto it = vocab.begin(); it != vocab.end(); ++it) expected.at(it.value().get<std::size_t>()) = it.key();
        CHECK(model->tokenLabels(allIds(spec.vocab)) == expected);
        CHECK(nlohmann::json(model->encodeText(goldenText(0))) == goldenResult("gpt2", 0)["ids"]);
    }
}

TEST_CASE("a model without a tokenizer says so; vocab.json alone still labels", "[tokenizer][model]") {
    SECTION("vocab.json without merges.txt: labels, no tokenizer") {
        const auto dir = freshDir("model-no-tokenizer");
        writeGpt2Folder(dir, makeGpt2(Gpt2Spec{}, 3));  // writes vocab.json {"t0": 0, ...}
        const auto model = loadCpu(dir);
        CHECK(model->tokenizer() == nullptr);
        CHECK_FALSE(model->hasTokenizer());
        CHECK(model->tokenLabels({0, 1, 39}) == std::vector<std::string>{"t0", "t1", "t39"});
        CHECK_THROWS_WITH(model->encodeText("hi"), Catch::Contains("has no tokenizer"));
    }
    SECTION("a malformed vocab.json alone fails the load, naming it") {
        const auto dir = freshDir("model-bad-vocab-json");
        writeGpt2Folder(dir, makeGpt2(Gpt2Spec{}, 3));
        writeText(dir / "vocab.json", "{\"a\": 0, \"b\": \"one\"}");
        CHECK_THROWS_WITH(loadCpu(dir), Catch::Contains("vocab.json: token 'b' has an invalid id \"one\""));
        writeText(dir / "vocab.json", "{\"a\": -3}");
        CHECK_THROWS_WITH(loadCpu(dir), Catch::Contains("vocab.json: token 'a' has id -3, below 0"));
    }
    SECTION("no vocabulary at all: decimal labels") {
        Gpt2Spec spec;
        spec.vocabJson = false;
        const auto dir = freshDir("model-no-vocab");
        writeGpt2Folder(dir, makeGpt2(spec, 3));
        const auto model = loadCpu(dir);
        CHECK(model->tokenizer() == nullptr);
        CHECK_FALSE(model->hasTokenizer());
        CHECK(model->tokenLabels({0, 7}) == std::vector<std::string>{"0", "7"});
    }
    SECTION("built-in models split text with their symbols, which are no tokenizer.json") {
        const auto model = Model::load("builtin:reverse-dot", LoadOptions{DeviceChoice::Cpu, {}});
        CHECK(model->tokenizer() == nullptr);
        CHECK(model->hasTokenizer());
        CHECK(model->encodeText("ab").size() == 2);
    }
}

}  // namespace test_model_tokenizer
