// attnscope-cli on OPT, BLOOM and Falcon: the maps it writes equal the double-precision
// reference (fixtures_alibi.h), with propagated temperature and masked heads too; bad configs
// and variants without a place for ALiBi exit 2 with one line.
#include "cli_run.h"
#include "fixtures_alibi.h"
#include "npy_read.h"

#include <cmath>
#include <sstream>

namespace test_cli_opt_bloom_falcon {

using namespace attnscope::testing;

namespace {

const std::vector<long long> kIds = {3, 17, 0, 47, 22, 5, 5, 11, 30, 1};

std::string idList() {
    std::ostringstream s;
    for (std::size_t i = 0; i < kIds.size(); ++i) s << (i ? "," : "") << kIds[i];
    return s.str();
}

// Runs `attention DIR --ids kIds --out OUT extra...` and returns the largest |npy - reference|.
double cliMapError(const std::filesystem::path& dir, const Reference& ref, const std::vector<std::string>& extra = {}) {
    const auto out = freshDir("cli-alibi-out");
    std::vector<std::string> args = {"attention", dir.string(), "--ids",    idList(),
                                     "--out",     out.string(), "--device", "cpu"};
    args.insert(args.end(), extra.begin(), extra.end());
    const CliResult r = runCli(args);
    INFO(r.err);
    REQUIRE(r.code == 0);
    const NpyArray maps = readNpy(out / "attention.npy");
    const auto L = static_cast<std::int64_t>(ref.probs.size()), H = static_cast<std::int64_t>(ref.probs[0].size());
    const auto n = static_cast<std::int64_t>(kIds.size());
    REQUIRE(maps.shape == std::vector<std::int64_t>{L, H, n, n});
    double worst = 0;
    for (std::int64_t l = 0; l < L; ++l)
        for (std::int64_t h = 0; h < H; ++h)
            for (std::int64_t i = 0; i < n * n; ++i)
                worst = std::max(worst, std::abs(maps.values[(l * H + h) * n * n + i] - ref.probs[l][h][i]));
    return worst;
}

std::filesystem::path written(const Checkpoint& c, const std::string& name, const WriteOptions& o = {}) {
    const auto dir = freshDir(name);
    writeCheckpoint(dir, c, o);
    return dir;
}

Checkpoint roundedCopy(Checkpoint c, const std::string& dtype) {
    roundTensors(c, dtype);
    return c;
}

}  // namespace

TEST_CASE("cli attention on OPT writes the reference's maps", "[cli][opt]") {
    OptSpec spec;
    spec.preNorm = false;
    spec.projDim = 24;
    const Checkpoint c = makeOpt(spec, 61);
    const auto dir = written(c, "cli-opt");
    CHECK(cliMapError(dir, referenceOpt(c, spec, kIds)) < 1e-5);
    AlibiFamilyRun hot;
    hot.temperature = 2.0;
    CHECK(cliMapError(dir, referenceOpt(c, spec, kIds, hot), {"--temperature", "2", "--propagate"}) < 1e-5);
    const CliResult info = runCli({"info", dir.string(), "--device", "cpu"});
    REQUIRE(info.code == 0);
    CHECK_THAT(info.out, Catch::Contains("family:        opt"));
    const Checkpoint half = roundedCopy(makeOpt(OptSpec{}, 62), "BF16");
    CHECK(cliMapError(written(half, "cli-opt-bf16", WriteOptions{"BF16", 2}), referenceOpt(half, OptSpec{}, kIds)) <
          1e-5);
}

TEST_CASE("cli attention on BLOOM: ALiBi maps, propagated temperature, masked heads", "[cli][bloom]") {
    BloomSpec spec;
    const Checkpoint c = roundedCopy(makeBloom(spec, 63), "F16");
    const auto dir = written(c, "cli-bloom", WriteOptions{"F16", 2});
    CHECK(cliMapError(dir, referenceBloom(c, spec, kIds)) < 1e-5);
    AlibiFamilyRun run;
    run.temperature = 0.5;
    run.temperatureLayers = {1};
    CHECK(cliMapError(dir, referenceBloom(c, spec, kIds, run),
                      {"--temperature", "0.5", "--propagate", "--layers", "1"}) < 1e-5);
    AlibiFamilyRun masked;
    masked.maskHeads = {{0, 4}};
    CHECK(cliMapError(dir, referenceBloom(c, spec, kIds, masked), {"--mask-heads", "0:4"}) < 1e-5);
    const auto out = freshDir("cli-bloom-linear");
    requireCliInputError(
            runCli({"attention", dir.string(), "--ids", idList(), "--out", out.string(), "--variant", "linear"}),
            "linear attention has no place for ALiBi");
}

TEST_CASE("cli attention on Falcon: multi-query rotary, grouped, ALiBi", "[cli][falcon]") {
    FalconSpec mq;
    const Checkpoint a = makeFalcon(mq, 64);
    CHECK(cliMapError(written(a, "cli-falcon-mq"), referenceFalcon(a, mq, kIds)) < 1e-5);
    FalconSpec grouped;
    grouped.heads = 8;
    grouped.kvHeads = 2;
    grouped.newArch = true;
    const Checkpoint b = roundedCopy(makeFalcon(grouped, 65), "BF16");
    const auto dir = written(b, "cli-falcon-40b", WriteOptions{"BF16", 3});
    CHECK(cliMapError(dir, referenceFalcon(b, grouped, kIds)) < 1e-5);
    const CliResult info = runCli({"info", dir.string(), "--device", "cpu"});
    REQUIRE(info.code == 0);
    CHECK_THAT(info.out, Catch::Contains("heads:         8 (2 key/value heads)"));
    FalconSpec rw;
    rw.hidden = 36;
    rw.heads = 6;
    rw.alibi = true;
    rw.multiQuery = false;
    rw.parallel = false;
    rw.bias = true;
    rw.prefix = false;
    const Checkpoint c = makeFalcon(rw, 66);
    AlibiFamilyRun masked;
    masked.maskHeads = {{0, 2}, {1, 5}};
    CHECK(cliMapError(written(c, "cli-falcon-rw"), referenceFalcon(c, rw, kIds, masked), {"--mask-heads", "0:2,1:5"}) <
          1e-5);
}

TEST_CASE("cli on bad OPT, BLOOM and Falcon configs: exit 2, one line naming file and field",
          "[cli][opt][bloom][falcon]") {
    const auto out = freshDir("cli-alibi-bad-out");
    auto bad = [&](Checkpoint c, const std::string& name) {
        const auto dir = freshDir(name);
        writeCheckpoint(dir, c);
        return runCli({"attention", dir.string(), "--ids", "1,2", "--out", out.string(), "--device", "cpu"});
    };
    Checkpoint falcon = makeFalcon(FalconSpec{}, 1);
    falcon.config["new_decoder_architecture"] = true;
    falcon.config["num_kv_heads"] = 3;
    requireCliInputError(bad(falcon, "cli-falcon-bad"),
                         "config.json: 'num_kv_heads' (3) must divide num_attention_heads (4)");
    Checkpoint bloom = makeBloom(BloomSpec{}, 1);
    bloom.tensors.erase("transformer.h.0.self_attention.query_key_value.weight");
    requireCliInputError(bad(bloom, "cli-bloom-bad"), "'transformer.h.0.self_attention.query_key_value.weight'");
    Checkpoint opt = makeOpt(OptSpec{}, 1);
    opt.config["hidden_size"] = 30;
    requireCliInputError(bad(opt, "cli-opt-bad"),
                         "config.json: 'hidden_size' (30) must be divisible by num_attention_heads (4)");
    const auto dir = freshDir("cli-opt-long");
    writeCheckpoint(dir, makeOpt(OptSpec{}, 1));
    std::string ids = "1";
    for (int i = 1; i < 65; ++i) ids += ",1";
    requireCliInputError(runCli({"attention", dir.string(), "--ids", ids, "--out", out.string(), "--device", "cpu"}),
                         "65 tokens but the model has only 64 positions");
}

}  // namespace test_cli_opt_bloom_falcon
