// attnscope-cli on the mixture-of-experts decoders: `attention` writes the reference's maps,
// router.npy [layers, tokens, experts] (NaN rows for dense layers) and tokens.json's router_topk;
// a bad config exits 2 with one line naming the file and the field.
#include "cli_run.h"
#include "fixtures_moe.h"
#include "npy_read.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>

namespace test_cli_moe {

using namespace attnscope::testing;

namespace {

const std::vector<long long> kIds = {3, 17, 0, 47, 22, 5, 5, 11, 30};
const std::string kIdText = "3,17,0,47,22,5,5,11,30";

}  // namespace

TEST_CASE("cli attention on MoE decoders writes the maps, router.npy and router_topk of the reference", "[cli][moe]") {
    for (const std::string type : {"mixtral", "qwen2_moe", "olmoe"}) {
        MoeFamilySpec spec;
        spec.type = type;
        if (type == "qwen2_moe") spec.mlpOnly = {1};
        if (type == "mixtral") spec.window = 3;
        Checkpoint c = makeMoeFamily(spec, 7);
        roundTensors(c, "BF16");
        const auto dir = freshDir("cli-moe-" + type);
        writeCheckpoint(dir, type == "olmoe" ? fuseMoeExperts(c, spec) : c, WriteOptions{"BF16", 2});
        const auto out = freshDir("cli-moe-" + type + "-out");
        const CliResult r =
                runCli({"attention", dir.string(), "--ids", kIdText, "--out", out.string(), "--device", "cpu"});
        INFO(type << ": " << r.err);
        REQUIRE(r.code == 0);
        CHECK_THAT(r.err, Catch::Contains("router.npy [3, 9, 4]"));
        const MoeReference ref = referenceMoeFamily(c, spec, kIds);
        const int n = static_cast<int>(kIds.size()), L = spec.layers, H = spec.heads, E = spec.experts;
        const NpyArray maps = readNpy(out / "attention.npy");
        REQUIRE(maps.shape == std::vector<std::int64_t>{L, H, n, n});
        double mapDiff = 0, routerDiff = 0;
        for (int l = 0; l < L; ++l)
            for (int h = 0; h < H; ++h)
                for (int i = 0; i < n * n; ++i)
                    mapDiff =
                            std::max(mapDiff, std::abs(maps.values[(l * H + h) * n * n + i] - ref.ref.probs[l][h][i]));
        const NpyArray router = readNpy(out / "router.npy");
        REQUIRE(router.shape == std::vector<std::int64_t>{L, n, E});
        std::ifstream f(out / "tokens.json");
        const nlohmann::json tokens = nlohmann::json::parse(f);
        REQUIRE(tokens.at("router_topk").size() == static_cast<std::size_t>(L));
        CHECK(tokens.at("router_experts") == E);
        for (int l = 0; l < L; ++l)
            for (int i = 0; i < n; ++i) {
                const bool routed = moeRouted(spec, l);
                for (int e = 0; e < E; ++e) {
                    const double v = router.values[(l * n + i) * E + e];
                    if (!routed)
                        CHECK(std::isnan(v));
                    else
                        routerDiff = std::max(routerDiff, std::abs(v - ref.router[l][i][e]));
                }
                const auto& chosen = tokens["router_topk"][l][i];
                REQUIRE(chosen.size() == static_cast<std::size_t>(spec.topK));
                for (int k = 0; k < spec.topK; ++k) CHECK(chosen[k] == (routed ? ref.chosen[l][i][k] : -1));
            }
        INFO(type << ": max |map - reference| " << mapDiff << ", |router - reference| " << routerDiff);
        CHECK(mapDiff < 1e-5);
        CHECK(routerDiff < 1e-5);
    }
}

TEST_CASE("cli refuses a MoE config choosing more experts than it has, in one line", "[cli][moe]") {
    MoeFamilySpec spec;
    spec.type = "olmoe";
    Checkpoint c = makeMoeFamily(spec, 1);
    c.config["num_experts_per_tok"] = 9;
    const auto dir = freshDir("cli-moe-bad");
    writeCheckpoint(dir, c);
    const auto out = freshDir("cli-moe-bad-out");
    requireCliInputError(
            runCli({"attention", dir.string(), "--ids", "1,2,3", "--out", out.string(), "--device", "cpu"}),
            "config.json: 'num_experts_per_tok' (9) exceeds num_experts (4)");
}

}  // namespace test_cli_moe
