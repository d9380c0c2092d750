// attnscope-cli tokenize on SentencePiece folders: the ids SentencePiece gives
// (tests/data/tokenizers/spm/golden_spm.json), the file it read, and exit 2 with one line naming
// the file for a .model that is not a SentencePiece model or a Marian vocab.json that lacks pieces.
#include "gpt2_fixture.h"

#include "cli_run.h"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <fstream>

namespace test_cli_sentencepiece {

using namespace attnscope::testing;

namespace {

const std::filesystem::path kSpm = std::filesystem::path(ATTNSCOPE_TOKENIZER_DATA) / "spm";

nlohmann::json spmLayout(const std::string& name, std::size_t row) {
    std::ifstream in(kSpm / "golden_spm.json", std::ios::binary);
    return nlohmann::json::parse(in)["layouts"][name][row];
}

}  // namespace

TEST_CASE("cli tokenize reads a SentencePiece folder and says which file", "[cli][tokenize][sentencepiece]") {
    const auto dir = freshDir("cli-spm");
    std::filesystem::copy_file(kSpm / "unigram.model", dir / "sentencepiece.bpe.model");
    const auto row = spmLayout("xlmr", 4);  // accents
    const CliResult r = runCli({"tokenize", dir.string(), "--text", row["text"].get<std::string>()});
    INFO(r.err);
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["ids"] == row["ids"]);
    CHECK(j["tokenizer"] == (dir / "sentencepiece.bpe.model").string());
    // tokenizer.json, when there too, is what it reads.
    std::filesystem::copy_file(kSpm / "unigram.json", dir / "tokenizer.json");
    const CliResult both = runCli({"tokenize", dir.string(), "--text", "x"});
    REQUIRE(both.code == 0);
    CHECK(nlohmann::json::parse(both.out)["tokenizer"] == (dir / "tokenizer.json").string());
}

TEST_CASE("cli tokenize exits 2 on a bad .model or a Marian vocab.json without the pieces",
          "[cli][tokenize][sentencepiece]") {
    const auto dir = freshDir("cli-spm-bad");
    writeText(dir / "tokenizer.model", "not a model at all");
    const CliResult bad = runCli({"tokenize", dir.string(), "--text", "x"});
    requireCliExit(bad, 2, (dir / "tokenizer.model").string() + ": not a SentencePiece model");
    CHECK(bad.out.empty());

    const auto marian = freshDir("cli-marian-bad");
    std::filesystem::copy_file(kSpm / "unigram.model", marian / "source.spm");
    writeText(marian / "vocab.json", R"({"</s>": 0, "<unk>": 1, "▁the": 2})");
    const CliResult lacks = runCli({"tokenize", marian.string(), "--text", "x"});
    requireCliExit(lacks, 2, (marian / "vocab.json").string() + ": lacks 996 of the 1000 pieces of source.spm");
}

}  // namespace test_cli_sentencepiece
