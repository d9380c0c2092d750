// attnscope-cli info: what a family does to its maps (ModelInfo::notes) in the text and JSON forms.
#include "cli_run.h"
#include "fixtures_alibi.h"
#include "fixtures_gemma.h"

#include <nlohmann/json.hpp>

namespace test_cli_info {

using namespace attnscope::testing;

TEST_CASE("cli info names a Gemma-2 checkpoint's windows, soft-cap and kv groups", "[cli][info]") {
    RmsFamilySpec spec;
    spec.type = "gemma2";
    spec.attnSoftcap = 50;
    spec.window = 4;
    const auto dir = freshDir("cli-info-gemma2");
    writeCheckpoint(dir, makeRmsFamily(spec, 3));
    const CliResult text = runCli({"info", dir.string(), "--device", "cpu"});
    INFO(text.err);
    REQUIRE(text.code == 0);
    CHECK_THAT(text.out, Catch::Contains("family:        gemma2"));
    CHECK_THAT(text.out, Catch::Contains("maps:          sliding window 4 on layers 0, 2"));
    CHECK_THAT(text.out, Catch::Contains("soft-cap"));
    CHECK_THAT(text.out, Catch::Contains("2 kv groups"));

    const CliResult json = runCli({"info", dir.string(), "--device", "cpu", "--json"});
    REQUIRE(json.code == 0);
    const auto j = nlohmann::json::parse(json.out);
    REQUIRE(j["notes"].is_array());
    CHECK(j["notes"].size() >= 3u);
    CHECK(j["notes"][0].get<std::string>().rfind("sliding window 4", 0) == 0);
}

TEST_CASE("cli info on a family with nothing special gives an empty notes list", "[cli][info]") {
    RmsFamilySpec spec;
    spec.type = "olmo2";
    spec.kvHeads = spec.heads;
    const auto dir = freshDir("cli-info-olmo2");
    writeCheckpoint(dir, makeRmsFamily(spec, 3));
    const CliResult json = runCli({"info", dir.string(), "--device", "cpu", "--json"});
    INFO(json.err);
    REQUIRE(json.code == 0);
    const auto j = nlohmann::json::parse(json.out);
    CHECK(j["family"] == "olmo2");
    REQUIRE(j["notes"].is_array());
    for (const auto& note : j["notes"]) CHECK_THAT(note.get<std::string>(), !Catch::Contains("kv groups"));
}

TEST_CASE("cli info and bench on BLOOM, which has no position table", "[cli][info]") {
    const auto dir = freshDir("cli-info-bloom");
    writeCheckpoint(dir, makeBloom(BloomSpec{}, 3));
    const CliResult info = runCli({"info", dir.string(), "--device", "cpu"});
    INFO(info.err);
    REQUIRE(info.code == 0);
    CHECK_THAT(info.out, Catch::Contains("max positions: no limit (no position table)"));
    CHECK_THAT(info.out, Catch::Contains("maps:          ALiBi"));
    // Any length is allowed but memory's limit (was refused as "only 0 positions").
    const CliResult bench =
            runCli({"bench", dir.string(), "--seq", "300", "--repeat", "1", "--warmup", "0", "--device", "cpu"});
    INFO(bench.err);
    CHECK(bench.code == 0);
    CHECK_THAT(bench.out, Catch::Contains("300 tokens"));
}

}  // namespace test_cli_info
