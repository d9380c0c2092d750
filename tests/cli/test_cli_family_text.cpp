// attnscope-cli attention / export --text on BERT and Llama folders that carry a tokenizer: the ids
// are the reference tokenizer's (tests/data/tokenizers/golden.json) and the labels readable.
#include "cli_run.h"
#include "family_fixtures.h"
#include "golden.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>

namespace test_cli_family_text {

using namespace attnscope::testing;

namespace {

const std::filesystem::path kData = ATTNSCOPE_TOKENIZER_DATA;

std::filesystem::path bertFolder() {
    static const auto dir = [] {
        const auto d = freshDir("cli-bert-text");
        BertSpec spec;
        spec.vocab = 11506;  // the pruned bert-base-uncased vocabulary
        writeCheckpoint(d, makeBert(spec, 11));
        std::filesystem::copy_file(kData / "bert-uncased" / "vocab.txt", d / "vocab.txt");
        return d;
    }();
    return dir;
}

std::filesystem::path llamaFolder() {
    static const auto dir = [] {
        const auto d = freshDir("cli-llama-text");
        LlamaSpec spec;
        spec.vocab = 9295;  // the pruned Llama-2 vocabulary
        spec.tied = true;
        writeCheckpoint(d, makeLlama(spec, 12));
        std::filesystem::copy_file(kData / "llama2.json", d / "tokenizer.json");
        return d;
    }();
    return dir;
}

}  // namespace

TEST_CASE("cli attention --text on a BERT folder uses its WordPiece tokenizer", "[cli][bert][tokenizer]") {
    const auto out = freshDir("cli-bert-text-out");
    const CliResult r = runCli(
            {"attention", bertFolder().string(), "--text", "Hello world", "--out", out.string(), "--device", "cpu"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    const auto tokens = nlohmann::json::parse(slurpFile(out / "tokens.json"));
    CHECK(tokens["ids"] == goldenResult("bert-uncased", 0)["ids"]);
    CHECK(tokens["tokens"] == nlohmann::json({"[CLS]", "hell", "##o", "world", "[SEP]"}));
    CHECK(tokens["blocks"]["self"]["queries"] == nlohmann::json({"[CLS]", "hell", "o", "world", "[SEP]"}));
}

TEST_CASE("cli attention --text on a Llama folder uses its byte-fallback BPE", "[cli][llama][tokenizer]") {
    const auto out = freshDir("cli-llama-text-out");
    const std::string emoji = goldenText(13);  // byte fallback for emoji with modifiers
    const CliResult r =
            runCli({"attention", llamaFolder().string(), "--text", emoji, "--out", out.string(), "--device", "cpu"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(nlohmann::json::parse(slurpFile(out / "tokens.json"))["ids"] == goldenResult("llama2", 13)["ids"]);
    const CliResult hello =
            runCli({"attention", llamaFolder().string(), "--text", "Hello world", "--out", out.string()});
    REQUIRE(hello.code == 0);
    const auto helloTokens = nlohmann::json::parse(slurpFile(out / "tokens.json"));
    CHECK(helloTokens["ids"] == goldenResult("llama2", 0)["ids"]);
    CHECK(helloTokens["blocks"]["self"]["keys"] == nlohmann::json({"<s>", "\xC2\xB7H", "ello", "\xC2\xB7world"}));
}

TEST_CASE("cli attention --text on a folder without a tokenizer names what is missing", "[cli][bert][tokenizer]") {
    const auto dir = freshDir("cli-bert-bare");
    writeCheckpoint(dir, makeBert(BertSpec{}, 13));
    const auto out = freshDir("cli-bert-bare-out");
    requireCliInputError(runCli({"attention", dir.string(), "--text", "hi", "--out", out.string()}),
                         "has no tokenizer");
    CHECK(std::filesystem::is_empty(out));
}

#ifdef ATTNSCOPE_CLI_HAS_EXPORT
TEST_CASE("cli export --text on BERT and Llama folders draws the readable tokens", "[cli][export][tokenizer]") {
    const auto dir = freshDir("cli-family-text-export");
    CliResult r = runCli({"export", bertFolder().string(), "--text", "Hello world", "--layer", "0", "--head", "1",
                          "--out", (dir / "bert.svg").string(), "--device", "cpu"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    const std::string svg = slurpFile(dir / "bert.svg");
    CHECK(svg.find(">[CLS]<") != std::string::npos);
    CHECK(svg.find(">hell<") != std::string::npos);
    CHECK(svg.find(">##o<") == std::string::npos);  // the raw WordPiece mark is not drawn

    r = runCli({"export", llamaFolder().string(), "--text", "Hello world", "--layer", "1", "--head", "3", "--out",
                (dir / "llama.svg").string(), "--device", "cpu"});
    REQUIRE(r.code == 0);
    const std::string llama = slurpFile(dir / "llama.svg");
    CHECK(llama.find(">&lt;s&gt;<") != std::string::npos);
    CHECK(llama.find(">ello<") != std::string::npos);
}
#endif

TEST_CASE("cli attention --mask-heads on a BERT folder reports the final hidden-state change", "[cli][bert][lab]") {
    const auto out = freshDir("cli-bert-hidden-out");
    const std::vector<long long> ids = {101, 7592, 2088, 999, 102};
    const CliResult r = runCli({"attention", bertFolder().string(), "--ids", "101,7592,2088,999,102", "--mask-heads",
                                "0:1", "--out", out.string(), "--device", "cpu"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    // Expected: 1 - cos per token between two reference forwards, without and with head 0:1 masked.
    BertSpec spec;
    spec.vocab = 11506;
    const Checkpoint c = makeBert(spec, 11);
    const auto a = referenceBert(c, spec, ids).hidden, b = referenceBert(c, spec, ids, {}, {}, {{0, 1}}).hidden;
    std::vector<double> want;
    double mean = 0;
    std::size_t most = 0;
    for (std::size_t t = 0; t < a.size(); ++t) {
        double dot = 0, na = 0, nb = 0;
        for (std::size_t e = 0; e < a[t].size(); ++e)
            dot += a[t][e] * b[t][e], na += a[t][e] * a[t][e], nb += b[t][e] * b[t][e];
        want.push_back(1.0 - dot / std::sqrt(na * nb));
        mean += want.back() / a.size();
        if (want.back() > want[most]) most = t;
    }
    REQUIRE(mean > 1e-3);
    const auto change = nlohmann::json::parse(slurpFile(out / "output_change.json"));
    CHECK(change["kind"] == "hidden");
    CHECK(change["mean_cosine_distance"].get<double>() == Approx(mean).margin(1e-5));
    CHECK(change["max_cosine_distance"].get<double>() == Approx(want[most]).margin(1e-5));
    CHECK(change["most_changed_token"] == most);
    REQUIRE(change["cosine_distances"].size() == want.size());
    for (std::size_t t = 0; t < want.size(); ++t)
        CHECK(change["cosine_distances"][t].get<double>() == Approx(want[t]).margin(1e-5));
    const auto tokens = nlohmann::json::parse(slurpFile(out / "tokens.json"));
    const std::string label = tokens["blocks"]["self"]["queries"][most];
    CHECK(change["most_changed_label"] == label);
    CHECK_THAT(r.out, Catch::Contains("final hidden states, cosine distance"));
    CHECK_THAT(r.out, Catch::Contains("at token " + std::to_string(most) + " '" + label + "'"));
    CHECK_THAT(r.out, !Catch::Contains("no outputs to compare"));
}

}  // namespace test_cli_family_text
