// attnscope-cli attention on the text-encoder families' fixture folders (ModernBERT, DeBERTa v2/v3):
// every head written, the local window's zeros, the masked-LM head's predictions, --text through
// the folder's tokenizer.json or spm.model, DeBERTa's --terms (and its refusal elsewhere), and bad
// configs as one-line errors.
#include "cli_run.h"
#include "fixtures_deberta.h"
#include "fixtures_encoders.h"
#include "npy_read.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace test_cli_encoders {

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

TEST_CASE("cli attention --terms on a DeBERTa folder: c2c + c2p + p2c are the logits; refused elsewhere",
          "[cli][deberta]") {
    DebertaSpec spec;
    spec.convKernel = 3;
    spec.posAtt = {"c2p"};  // p2c left out: written as zeros
    spec.vocab = 701;       // the test spm.model's pieces and [MASK]
    const auto dir = freshDir("cli-deberta");
    writeCheckpoint(dir, makeDeberta(spec, 2));
    std::filesystem::copy_file(kData / "spm" / "deberta.model", dir / "spm.model");
    const auto out = freshDir("cli-deberta-out");
    const CliResult r = runCli({"attention", dir.string(), "--text", "Hello world, again", "--terms", "--out",
                                out.string(), "--device", "cpu"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    const auto tokens = nlohmann::json::parse(slurpFile(out / "tokens.json"));
    CHECK(tokens["terms"] == nlohmann::json({"c2c", "c2p", "p2c"}));
    REQUIRE(tokens["ids"].size() >= 4);
    CHECK(tokens["ids"].front() == 1);  // [CLS] $A [SEP]
    CHECK(tokens["ids"].back() == 2);
    const auto n = static_cast<std::int64_t>(tokens["ids"].size());
    const NpyArray maps = readNpy(out / "attention.npy");
    const NpyArray terms = readNpy(out / "terms.npy");
    REQUIRE(terms.shape == std::vector<std::int64_t>{2, 3, 3, n, n});
    double worst = 0, p2c = 0;
    for (std::int64_t lh = 0; lh < 2 * 3; ++lh)
        for (std::int64_t i = 0; i < n; ++i) {
            std::vector<double> row(static_cast<std::size_t>(n));
            double mx = -1e300, sum = 0;
            for (std::int64_t j = 0; j < n; ++j) {
                for (std::int64_t t = 0; t < 3; ++t) row[j] += terms.values[((lh * 3 + t) * n + i) * n + j];
                p2c = std::max(p2c, static_cast<double>(std::abs(terms.values[((lh * 3 + 2) * n + i) * n + j])));
                mx = std::max(mx, row[j]);
            }
            for (double v : row) sum += std::exp(v - mx);
            for (std::int64_t j = 0; j < n; ++j)
                worst = std::max(worst, std::abs(std::exp(row[j] - mx) / sum - maps.values[(lh * n + i) * n + j]));
        }
    CHECK(worst < 1e-5);
    CHECK(p2c == 0.0);

    ModernBertSpec other;
    const auto bertDir = freshDir("cli-deberta-refuse");
    writeCheckpoint(bertDir, makeModernBert(other, 2));
    requireOneLineError(runCli({"attention", bertDir.string(), "--ids", "1,2,3", "--terms", "--out", out.string()}),
                        "--terms needs a model with disentangled attention (DeBERTa v2/v3, model_type deberta-v2); "
                        "this is a modernbert model");

    Checkpoint bad = makeDeberta(spec, 2);
    bad.config["pos_att_type"] = "c2p|x";
    const auto badDir = freshDir("cli-deberta-bad");
    writeCheckpoint(badDir, bad);
    requireOneLineError(runCli({"attention", badDir.string(), "--ids", "1,2", "--out", out.string()}),
                        "config.json: 'pos_att_type' 'x' is not supported (c2p, p2c)");
}

TEST_CASE("cli attention and metrics --source score-*: DeBERTa's terms as maps; refused elsewhere",
          "[cli][deberta][sources]") {
    DebertaSpec spec;
    spec.buckets = 4;
    spec.maxRelative = 16;
    const auto dir = freshDir("cli-deberta-sources");
    writeCheckpoint(dir, makeDeberta(spec, 5));
    const auto all = freshDir("cli-deberta-sources-terms");
    REQUIRE(runCli({"attention", dir.string(), "--ids", "1,7,9,30,4,2", "--terms", "--out", all.string()}).code == 0);
    const NpyArray terms = readNpy(all / "terms.npy");
    const std::int64_t n = 6, L = spec.layers, H = spec.heads;
    REQUIRE(terms.shape == std::vector<std::int64_t>{L, H, 3, n, n});
    const char* names[] = {"score-c2c", "score-c2p", "score-p2c"};
    for (std::int64_t t = 0; t < 3; ++t) {
        const auto out = freshDir(std::string("cli-deberta-") + names[t]);
        const CliResult r = runCli({"attention", dir.string(), "--ids", "1,7,9,30,4,2", "--source", names[t], "--out",
                                    out.string()});
        INFO(r.err);
        REQUIRE(r.code == 0);
        const NpyArray maps = readNpy(out / "attention.npy");
        REQUIRE(maps.shape == std::vector<std::int64_t>{L, H, n, n});
        for (std::int64_t lh = 0; lh < L * H; ++lh)  // the same floats as terms.npy's slice
            for (std::int64_t a = 0; a < n * n; ++a)
                REQUIRE(maps.values[lh * n * n + a] == terms.values[(lh * 3 + t) * n * n + a]);
    }
    // metrics on a term's maps: per-head rows, one per layer and head.
    const auto csv = freshDir("cli-deberta-sources-metrics") / "m.csv";
    const CliResult m = runCli({"metrics", dir.string(), "--ids", "1,7,9,30,4,2", "--source", "score-p2c", "--out",
                                csv.string()});
    INFO(m.err);
    REQUIRE(m.code == 0);
    const std::string table = slurpFile(csv);
    CHECK(std::count(table.begin(), table.end(), '\n') == 1 + L * H);

    ModernBertSpec other;
    const auto bertDir = freshDir("cli-deberta-sources-refuse");
    writeCheckpoint(bertDir, makeModernBert(other, 2));
    requireOneLineError(runCli({"attention", bertDir.string(), "--ids", "1,2,3", "--source", "score-c2p", "--out",
                                freshDir("cli-deberta-sources-refused").string()}),
                        "--source score-c2p needs a model with disentangled attention (DeBERTa v2/v3, model_type "
                        "deberta-v2); this is a modernbert model");
}

}  // namespace test_cli_encoders
