// attnscope-cli tokenize and attention --text, end to end on the committed vocabularies: output
// ids, tokens and offsets against the reference's golden values, exit codes and error lines.
#include "gpt2_fixture.h"

#include "cli_run.h"
#include "golden.h"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <sys/wait.h>

namespace test_cli_tokenize {

using namespace attnscope::testing;

namespace {

const std::filesystem::path kData = ATTNSCOPE_TOKENIZER_DATA;

void requireError(const CliResult& r, int code, const std::string& mentions) {
    requireCliExit(r, code, mentions);
    REQUIRE(r.out.empty());
}

}  // namespace

TEST_CASE("cli tokenize prints ids, tokens and byte offsets as the reference does", "[cli][tokenize]") {
    const std::string text = goldenText(7);  // "café naïve résumé Ångström façade"
    const auto& expected = goldenCase("bert-uncased")["results"][7];

    SECTION("a model folder with vocab.txt") {
        const CliResult r = runCli({"tokenize", (kData / "bert-uncased").string(), "--text", text});
        INFO(r.err);
        REQUIRE(r.code == 0);
        const auto j = nlohmann::json::parse(r.out);
        CHECK(j.size() == 4);
        CHECK(j["tokenizer"] == (kData / "bert-uncased").string() + " (vocab.txt)");
        CHECK(j["ids"] == expected["ids"]);
        CHECK(j["tokens"] == expected["tokens"]);
        CHECK(j["offsets"] == expected["offsets"]);
    }
    SECTION("a tokenizer.json file, without special tokens") {
        const CliResult r =
                runCli({"tokenize", (kData / "bert-uncased.json").string(), "--text", text, "--no-special"});
        REQUIRE(r.code == 0);
        CHECK(nlohmann::json::parse(r.out)["ids"] == expected["ids_no_special"]);
    }
    SECTION("--text-file reads the text from a file") {
        const auto dir = freshDir("tokenize-file");
        const std::string multi = goldenText(3);  // tabs, \n and \r\n
        writeText(dir / "in.txt", multi);
        const CliResult r = runCli({"tokenize", (kData / "gpt2").string(), "--text-file", (dir / "in.txt").string()});
        REQUIRE(r.code == 0);
        const auto j = nlohmann::json::parse(r.out);
        CHECK(j["ids"] == goldenCase("gpt2")["results"][3]["ids"]);
        CHECK(j["offsets"] == goldenCase("gpt2")["results"][3]["offsets"]);
    }
}

TEST_CASE("cli tokenize rejects bad input with exit code 2 and usage errors with 1", "[cli][tokenize]") {
    const auto dir = freshDir("tokenize-errors");
    requireError(runCli({"tokenize", (dir / "missing.json").string(), "--text", "x"}), 2,
                 "missing.json: no such file or folder");
    requireError(runCli({"tokenize", dir.string(), "--text", "x"}), 2, "no tokenizer here");
    writeText(dir / "bad.json", "{\"model\": {\"type\": \"BPE\", ");
    requireError(runCli({"tokenize", (dir / "bad.json").string(), "--text", "x"}), 2, "bad.json: not valid JSON");
    writeText(dir / "unknown.json",
              R"({"model": {"type": "BPE", "vocab": {}, "merges": []}, "pre_tokenizer": {"type": "Fancy"}})");
    requireError(runCli({"tokenize", (dir / "unknown.json").string(), "--text", "x"}), 2,
                 "unknown.json: pre_tokenizer: type 'Fancy' is not supported");
    writeText(dir / "merges.json", R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a b"]}})");
    requireError(runCli({"tokenize", (dir / "merges.json").string(), "--text", "x"}), 2,
                 "merges.json: model (BPE): merge 0 'a b' needs 'b', which is not in the vocabulary");
    writeText(
            dir / "regex.json",
            R"({"model": {"type": "BPE", "vocab": {}, "merges": []}, "pre_tokenizer": {"type": "Split", "pattern": {"Regex": "[a-"}, "behavior": "Isolated"}})");
    requireError(runCli({"tokenize", (dir / "regex.json").string(), "--text", "x"}), 2,
                 "regex.json: pre_tokenizer (Split): regex '[a-' does not compile");
    requireError(runCli({"tokenize", (kData / "gpt2").string(), "--text-file", (dir / "none.txt").string()}), 2,
                 "none.txt: cannot be read");
    requireError(runCli({"tokenize", (kData / "gpt2").string(), "--text", std::string("\xFF", 1)}), 2,
                 "not valid UTF-8");
    requireError(runCli({"tokenize", (kData / "gpt2").string()}), 1, "missing input");
    requireError(runCli({"tokenize", (kData / "gpt2").string(), "--text", "a", "--text-file", "b"}), 1, "not both");
}

TEST_CASE("cli attention --text runs the folder's tokenizer", "[cli][tokenize]") {
    Gpt2Spec spec;
    spec.vocab = 8257;  // the pruned GPT-2 vocabulary
    spec.vocabJson = false;
    const auto model = freshDir("attention-text");
    writeGpt2Folder(model, makeGpt2(spec, 5));
    std::filesystem::copy_file(kData / "gpt2" / "vocab.json", model / "vocab.json");
    std::filesystem::copy_file(kData / "gpt2" / "merges.txt", model / "merges.txt");
    const auto out = freshDir("attention-text-out");
    const CliResult r =
            runCli({"attention", model.string(), "--text", goldenText(4), "--out", out.string(), "--device", "cpu"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    const auto tokens = nlohmann::json::parse(slurpFile(out / "tokens.json"));
    CHECK(tokens["ids"] == goldenCase("gpt2")["results"][4]["ids"]);
    CHECK(tokens["tokens"] == goldenCase("gpt2")["results"][4]["tokens"]);

    const auto bare = freshDir("attention-text-bare");
    writeGpt2Folder(bare, makeGpt2(Gpt2Spec{}, 5));
    requireError(runCli({"attention", bare.string(), "--text", "hi", "--out", out.string()}), 2, "has no tokenizer");
}

}  // namespace test_cli_tokenize
