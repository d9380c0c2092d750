// Big-model options of attnscope-cli (issue 14): --weights, --progress, --capture-dtype.
#include "npy_read.h"

#include "cli_run.h"

#include <cmath>

namespace test_cli_big {

using namespace attnscope::testing;

namespace {

std::filesystem::path bf16Model(const std::string& name) {
    Gpt2Spec spec;
    spec.dtype = "BF16";
    const auto dir = freshDir(name);
    writeGpt2Folder(dir, makeGpt2(spec, 43));
    return dir;
}

}  // namespace

TEST_CASE("cli info and bench say how the weights are held; --weights stream streams them", "[cli][streamed]") {
    const auto model = bf16Model("cli-big-info");
    const CliResult converted = runCli({"info", model.string(), "--device", "cpu"});
    INFO(converted.err);
    REQUIRE(converted.code == 0);
    CHECK_THAT(converted.out, Catch::Contains("weights:       converted to float32\n"));
    const CliResult streamed = runCli({"info", model.string(), "--weights", "stream"});
    REQUIRE(streamed.code == 0);
    CHECK_THAT(streamed.out, Catch::Contains("weights:       streamed from BF16 (one layer at a time"));
    const CliResult bench = runCli({"bench", model.string(), "--weights", "stream", "--seq", "8", "--repeat", "1"});
    REQUIRE(bench.code == 0);
    CHECK_THAT(bench.out, Catch::Contains("weights streamed from BF16") && Catch::Contains("RssAnon"));
    const CliResult bad = runCli({"info", model.string(), "--weights", "lazy"});
    CHECK(bad.code == 2);
    CHECK_THAT(bad.err, Catch::Contains("--weights 'lazy' is not one of auto, convert, stream"));
}

TEST_CASE("cli --progress writes one updating line per job on stderr", "[cli][progress]") {
    const auto model = bf16Model("cli-big-progress");
    const auto out = freshDir("cli-big-progress-out");
    const CliResult r = runCli({"attention", model.string(), "--ids", "1,2,3", "--out", out.string(), "--progress",
                                "--weights", "stream"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    // Each report rewrites the line (\r); the last of a job ends it.
    CHECK_THAT(r.err, Catch::Contains("\rforward: layer 1/2") && Catch::Contains("\rforward: layer 2/2   \n"));
    CHECK_THAT(r.err, Catch::Contains("\rloading: tensors"));
    const CliResult quiet = runCli({"attention", model.string(), "--ids", "1,2,3", "--out", out.string()});
    REQUIRE(quiet.code == 0);
    CHECK_THAT(quiet.err, !Catch::Contains("forward:") && !Catch::Contains("\r"));  // only the "wrote" lines
}

TEST_CASE("cli --capture-dtype bfloat16 writes maps close to the float32 capture's", "[cli][capture]") {
    const auto model = bf16Model("cli-big-capture");
    const auto full = freshDir("cli-big-capture-f32"), half = freshDir("cli-big-capture-bf16");
    REQUIRE(runCli({"attention", model.string(), "--ids", "1,2,3,4,5", "--out", full.string()}).code == 0);
    const CliResult r = runCli(
            {"attention", model.string(), "--ids", "1,2,3,4,5", "--out", half.string(), "--capture-dtype", "bfloat16"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    const auto a = readNpy(full / "attention.npy"), b = readNpy(half / "attention.npy");
    REQUIRE(a.shape == b.shape);
    double worst = 0;
    for (std::size_t i = 0; i < a.values.size(); ++i)
        worst = std::max(worst, static_cast<double>(std::abs(a.values[i] - b.values[i])));
    CHECK(worst > 0);
    CHECK(worst < 2e-2);
    const CliResult bad =
            runCli({"attention", model.string(), "--ids", "1", "--out", half.string(), "--capture-dtype", "int8"});
    CHECK(bad.code == 2);
    CHECK_THAT(bad.err, Catch::Contains("--capture-dtype 'int8' is not one of compute, float16, bfloat16"));
}

}  // namespace test_cli_big
