// attnscope-cli compare-models end to end: two copies of one model give kl.npy of zeros and an
// output KL of 0; a Q8_0 GGUF copy gives the per-head KL core computes for the same pair, a
// report and a figure; bad calls exit 2 with one line.
#include "cli_run.h"
#include "family_checks.h"
#include "gguf_writer.h"
#include "npy_read.h"

#include "attnscope/lab/model_comparison.h"

#include <nlohmann/json.hpp>

namespace test_cli_compare_models {

using namespace attnscope;
using namespace attnscope::testing;
namespace fs = std::filesystem;

namespace {

LlamaSpec spec64() {
    LlamaSpec s;
    s.hidden = 64;  // whole Q8_0 blocks
    s.inner = 64;
    return s;
}

}  // namespace

TEST_CASE("cli compare-models: per-head KL, the output change, a report and a figure", "[cli][compare_models]") {
    const Checkpoint c = makeLlama(spec64(), 31);
    const fs::path dir = freshDir("cli-cmp");
    writeCheckpoint(dir / "full", c);
    writeCheckpoint(dir / "copy", c);
    ggufFromCheckpoint(c, "llama", Ggml::Q8_0).write(dir / "q8.gguf");

    const fs::path same = dir / "same";
    const CliResult r = runCli({"compare-models", (dir / "full").string(), (dir / "copy").string(), "--ids",
                                "3,1,4,1,5,9,2,6", "--out", same.string(), "--device", "cpu"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    const NpyArray kl = readNpy(same / "kl.npy");
    CHECK(kl.shape == std::vector<std::int64_t>{2, 4});
    for (float v : kl.values) CHECK(v == 0.0f);
    const auto report = nlohmann::json::parse(slurpFile(same / "report.json"));
    CHECK(report["output"]["kl"] == 0.0);
    CHECK(report["output"]["top1_agree"] == true);
    CHECK(report["tokens"] == 8);
#ifdef ATTNSCOPE_CLI_HAS_EXPORT
    CHECK(fs::file_size(same / "kl.pdf") > 0);
#endif

    const fs::path quant = dir / "quant";
    const CliResult q = runCli({"compare-models", (dir / "full").string(), (dir / "q8.gguf").string(), "--ids",
                                "3,1,4,1,5,9,2,6", "--out", quant.string(), "--device", "cpu"});
    INFO(q.err);
    REQUIRE(q.code == 0);
    const ModelComparison want =
            compareModels(*loadCpu(dir / "full"), *loadCpu(dir / "q8.gguf"), {3, 1, 4, 1, 5, 9, 2, 6});
    const NpyArray qkl = readNpy(quant / "kl.npy");
    REQUIRE(qkl.values.size() == want.blocks[0].kl.size());
    for (std::size_t i = 0; i < qkl.values.size(); ++i) {
        CHECK(qkl.values[i] > 0);
        CHECK(qkl.values[i] == Approx(want.blocks[0].kl[i]).epsilon(1e-5));
    }
    const auto qr = nlohmann::json::parse(slurpFile(quant / "report.json"));
    CHECK(qr["output"]["kl"].get<double>() == Approx(want.output.kl).epsilon(1e-5));
    CHECK(qr["b"]["family"] == "llama");
    CHECK(qr["blocks"][0]["max_kl"].get<double>() == Approx(want.blocks[0].maxKl).epsilon(1e-5));
    CHECK(q.out.find("8 tokens: output KL ") == 0);

    const CliResult one = runCli({"compare-models", (dir / "full").string(), "--ids", "1,2", "--out", quant.string()});
    CHECK(one.code == 1);  // a usage error, as every command's
    CHECK(one.err.rfind("attnscope-cli compare-models: missing MODEL_B\n", 0) == 0);
    LlamaSpec three = spec64();
    three.layers = 3;
    writeCheckpoint(dir / "three", makeLlama(three, 1));
    const CliResult shape = runCli({"compare-models", (dir / "full").string(), (dir / "three").string(), "--ids", "1,2",
                                    "--out", quant.string(), "--device", "cpu"});
    CHECK(shape.code == 2);
    CHECK(shape.err ==
          "error: the models differ in shape: block 'self' has 2 layers x 4 heads in the first and 3 x 4 in the "
          "second\n");
}

}  // namespace test_cli_compare_models
