// attnscope-cli attention on the text-encoder families' fixture folders (ModernBERT): every head
// written, the local window's zeros, the masked-LM head's predictions, --text through the
// folder's tokenizer.json, and bad configs as one-line errors.
#include "cli_run.h"
#include "fixtures_encoders.h"
#include "npy_read.h"

#include <nlohmann/json.hpp>

using namespace attnscope::testing;

namespace {

const std::filesystem::path kData = ATTNSCOPE_TOKENIZER_DATA;

}  // namespace

TEST_CASE("cli attention on a ModernBERT folder: maps, local windows, MLM predictions", "[cli][modernbert]") {
    ModernBertSpec spec;
    spec.head = "mlm";
    const auto dir = freshDir("cli-modernbert");
    writeCheckpoint(dir, makeModernBert(spec, 2));
    const auto out = freshDir("cli-modernbert-out");
    CliResult r =
            runCli({"attention", dir.string(), "--ids", "2,7,9,3,4,8,1", "--out", out.string(), "--device", "cpu"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    const NpyArray maps = readNpy(out / "attention.npy");
    REQUIRE(maps.shape == std::vector<std::int64_t>{4, 2, 7, 7});
    auto at = [&](int l, int h, int i, int j) { return maps.values[((l * 2 + h) * 7 + i) * 7 + j]; };
    CHECK(at(1, 0, 6, 0) == 0.0f);  // local layer: |6 - 0| > 2
    CHECK(at(0, 0, 6, 0) > 0.0f);   // global layer
    const auto tokens = nlohmann::json::parse(slurpFile(out / "tokens.json"));
    REQUIRE(tokens["predictions"].size() == 7);
    CHECK(tokens["predictions"][0]["ids"].size() == 5);
    CHECK(tokens["predictions"][0]["probabilities"][0].get<double>() >=
          tokens["predictions"][0]["probabilities"][1].get<double>());

    Checkpoint bad = makeModernBert(spec, 2);
    bad.config["layer_types"] = {"full_attention"};
    const auto badDir = freshDir("cli-modernbert-bad");
    writeCheckpoint(badDir, bad);
    requireOneLineError(runCli({"attention", badDir.string(), "--ids", "1,2", "--out", out.string()}),
                        "config.json: 'layer_types' must list one type per layer (4)");
}

TEST_CASE("cli attention --text on a ModernBERT folder uses its tokenizer.json", "[cli][modernbert][tokenizer]") {
    ModernBertSpec spec;
    spec.vocab = 8006;  // the pruned OLMo vocabulary ModernBERT's tokenizer starts from, and its added tokens
    const auto dir = freshDir("cli-modernbert-text");
    writeCheckpoint(dir, makeModernBert(spec, 4));
    std::filesystem::copy_file(kData / "families" / "olmo2.json", dir / "tokenizer.json");
    const auto out = freshDir("cli-modernbert-text-out");
    const CliResult tok = runCli({"tokenize", dir.string(), "--text", "Hello world, again"});
    INFO(tok.err);
    REQUIRE(tok.code == 0);
    const CliResult r = runCli(
            {"attention", dir.string(), "--text", "Hello world, again", "--out", out.string(), "--device", "cpu"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    const auto tokens = nlohmann::json::parse(slurpFile(out / "tokens.json"));
    CHECK(tokens["ids"] == nlohmann::json::parse(tok.out)["ids"]);
    CHECK(tokens["ids"].size() >= 4);
}
