// BERT- and Llama-family folders use their tokenizer: Model::encodeText gives the reference ids
// (tests/data/tokenizers/golden.json, from Hugging Face's tokenizers) and Trace labels are the
// readable forms, with the raw vocabulary strings kept in Trace::tokens().
#include "attnscope/runtime/error.h"
#include "attnscope/models/model.h"
#include "attnscope/attention/trace.h"
#include "family_fixtures.h"
#include "golden.h"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <fstream>

namespace test_bert_llama_folder_tokenizers {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

const std::filesystem::path kData = ATTNSCOPE_TOKENIZER_DATA;

}  // namespace

TEST_CASE("a BERT folder with vocab.txt encodes like the reference and labels readably", "[tokenizer][bert]") {
    BertSpec spec;
    spec.vocab = 11506;  // the pruned bert-base-uncased vocabulary in tests/data/tokenizers
    const auto dir = freshDir("bert-tokenizer");
    writeCheckpoint(dir, makeBert(spec, 5));
    std::filesystem::copy_file(kData / "bert-uncased" / "vocab.txt", dir / "vocab.txt");
    auto model = Model::load(dir, LoadOptions{DeviceChoice::Cpu, {}});

    for (std::size_t text : {0u, 4u, 7u, 16u}) {
        INFO("text " << text);
        const auto& ref = goldenResult("bert-uncased", text);
        const auto ids = model->encodeText(goldenText(text));
        CHECK(nlohmann::json(ids) == ref["ids"]);
        if (ids.size() > static_cast<std::size_t>(spec.positions)) continue;
        auto trace = model->forward(ids);
        CHECK(nlohmann::json(trace->tokens()) == ref["tokens"]);  // raw vocabulary strings
    }
    // "Hello world" -> [CLS] hell ##o world [SEP]; the readable forms drop "##".
    auto trace = model->forward(model->encodeText("Hello world"));
    CHECK(trace->tokens() == std::vector<std::string>{"[CLS]", "hell", "##o", "world", "[SEP]"});
    CHECK(trace->displayTokens() == std::vector<std::string>{"[CLS]", "hell", "o", "world", "[SEP]"});
    CHECK(trace->blocks()[0].queryTokens == trace->displayTokens());
    CHECK(trace->blocks()[0].keyTokens == trace->displayTokens());
    CHECK_THROWS_WITH(model->encodeText(""), "the text is empty: give at least one character");
}

TEST_CASE("a DistilBERT folder with tokenizer.json encodes like the reference", "[tokenizer][bert]") {
    BertSpec spec;
    spec.type = "distilbert";
    spec.vocab = 11506;
    const auto dir = freshDir("distilbert-tokenizer");
    writeCheckpoint(dir, makeBert(spec, 6));
    std::filesystem::copy_file(kData / "bert-uncased.json", dir / "tokenizer.json");
    auto model = Model::load(dir, LoadOptions{DeviceChoice::Cpu, {}});
    const auto& ref = goldenResult("bert-uncased", 4);
    const auto ids = model->encodeText(goldenText(4));
    CHECK(nlohmann::json(ids) == ref["ids"]);
    auto trace = model->forward(ids);
    CHECK(nlohmann::json(trace->tokens()) == ref["tokens"]);
    CHECK(trace->displayTokens().front() == "[CLS]");
}

TEST_CASE("a Llama folder with the Llama-2 tokenizer encodes like the reference and labels readably",
          "[tokenizer][llama]") {
    LlamaSpec spec;
    spec.vocab = 9295;  // the pruned Llama-2 vocabulary in tests/data/tokenizers
    spec.tied = true;
    const auto dir = freshDir("llama-tokenizer");
    writeCheckpoint(dir, makeLlama(spec, 7));
    std::filesystem::copy_file(kData / "llama2.json", dir / "tokenizer.json");
    auto model = Model::load(dir, LoadOptions{DeviceChoice::Cpu, {}});

    for (std::size_t text : {0u, 3u, 7u, 9u, 13u}) {
        INFO("text " << text);
        const auto& ref = goldenResult("llama2", text);
        const auto ids = model->encodeText(goldenText(text));
        CHECK(nlohmann::json(ids) == ref["ids"]);
        if (ids.size() > static_cast<std::size_t>(spec.positions)) continue;
        auto trace = model->forward(ids);
        CHECK(nlohmann::json(trace->tokens()) == ref["tokens"]);
    }
    auto trace = model->forward(model->encodeText("Hello world"));
    CHECK(trace->tokens() == std::vector<std::string>{"<s>", "\xE2\x96\x81H", "ello", "\xE2\x96\x81world"});
    // "▁" reads as a discreet space mark "·".
    CHECK(trace->displayTokens() == std::vector<std::string>{"<s>", "\xC2\xB7H", "ello", "\xC2\xB7world"});
    CHECK(trace->blocks()[0].queryTokens == trace->displayTokens());
    CHECK(trace->blocks()[0].keyTokens == trace->displayTokens());

    const auto bare = freshDir("llama-no-tokenizer");
    writeCheckpoint(bare, makeLlama(LlamaSpec{}, 7));
    auto plain = Model::load(bare, LoadOptions{DeviceChoice::Cpu, {}});
    CHECK_THROWS_WITH(plain->encodeText("hi"), Catch::Contains("has no tokenizer"));
}

}  // namespace test_bert_llama_folder_tokenizers
