// attnscope-cli corpus and corpus-merge end to end on the built-in sentiment model.
#include "attnscope/models/builtin.h"
#include "cli_run.h"

#include <nlohmann/json.hpp>

namespace test_cli_corpus {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

std::filesystem::path corpusFile(const std::string& name, int n) {
    const auto dir = freshDir(name);
    TaskData data(11, Split::HeldOut);
    std::ofstream f(dir / "c.jsonl");
    for (int i = 0; i < n; ++i) {
        const auto e = data.sentiment();
        f << nlohmann::json{{"text", e.text}, {"label", e.positive ? "positive" : "negative"}}.dump() << "\n";
    }
    return dir / "c.jsonl";
}

}  // namespace

TEST_CASE("cli corpus writes heads.json/csv, pruning.csv and PDF plots; shards merge to the same files",
          "[cli][corpus]") {
    const auto data = corpusFile("cli-corpus", 5);
    const auto one = freshDir("cli-corpus-one");
    const CliResult r = runCli(
            {"corpus", "builtin:sentiment-dot", "--data", data.string(), "--out", one.string(), "--device", "cpu"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.err, Catch::Contains("examples/s"));
    CHECK_THAT(r.err, Catch::Contains("corpus: 5 examples, accuracy"));
    const auto heads = nlohmann::json::parse(slurpFile(one / "heads.json"));
    CHECK(heads["heads"].size() == 4);
    CHECK(heads["pruning"].size() == 5);
    CHECK(slurpFile(one / "pruning.csv").rfind("k,head,metric_mean", 0) == 0);
#ifdef ATTNSCOPE_CLI_HAS_EXPORT
    CHECK(slurpFile(one / "importance.pdf").rfind("%PDF", 0) == 0);
    CHECK(slurpFile(one / "pruning.pdf").rfind("%PDF", 0) == 0);
#endif
    std::vector<std::string> merge1 = {"corpus-merge"}, merge2 = {"corpus-merge"};
    for (int k = 0; k < 2; ++k) {
        const auto dir = freshDir("cli-corpus-shard" + std::to_string(k));
        const std::string shard = std::to_string(k) + "/2";
        REQUIRE(runCli({"corpus", "builtin:sentiment-dot", "--data", data.string(), "--out", dir.string(), "--shard",
                        shard, "--analyses", "stats,importance", "--no-plots"})
                        .code == 0);
        merge1.push_back(dir.string());
        merge2.push_back(dir.string());
    }
    const auto m1 = freshDir("cli-corpus-m1"), m2 = freshDir("cli-corpus-m2");
    merge1.insert(merge1.end(), {"--out", m1.string(), "--no-plots"});
    REQUIRE(runCli(merge1).code == 0);
    for (int k = 0; k < 2; ++k)
        REQUIRE(runCli({"corpus", "builtin:sentiment-dot", "--data", data.string(), "--out", merge2[k + 1], "--shard",
                        std::to_string(k) + "/2", "--analyses", "pruning", "--order", (m1 / "heads.json").string(),
                        "--no-plots"})
                        .code == 0);
    merge2.insert(merge2.end(), {"--out", m2.string()});
    const CliResult mr = runCli(merge2);
    INFO(mr.err);
    REQUIRE(mr.code == 0);
    for (const char* name : {"heads.json", "heads.csv", "pruning.csv"}) {
        INFO(name);
        CHECK(slurpFile(m2 / name) == slurpFile(one / name));
    }
}

TEST_CASE("cli corpus: a bad line exits 2 naming file and line, --skip-bad-lines lists it", "[cli][corpus]") {
    const auto dir = freshDir("cli-corpus-bad");
    {
        std::ofstream f(dir / "c.jsonl");
        f << "{\"text\": \"the film was good\", \"label\": \"positive\"}\n{\"text\": 3}\n{\"text\": \"a dull plot\", \"label\": 0}\n";
    }
    requireCliInputError(runCli({"corpus", "builtin:sentiment-dot", "--data", (dir / "c.jsonl").string(), "--out",
                                 (dir / "o").string()}),
                         "c.jsonl:2: \"text\" is not a string");
    const CliResult r = runCli({"corpus", "builtin:sentiment-dot", "--data", (dir / "c.jsonl").string(), "--out",
                                (dir / "o").string(), "--skip-bad-lines", "--no-plots"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.err, Catch::Contains("skipped line 2: \"text\" is not a string"));
    CHECK_THAT(r.err, Catch::Contains("corpus: 2 examples"));
    requireCliInputError(runCli({"corpus", "builtin:sentiment-dot", "--data", (dir / "c.jsonl").string(), "--out",
                                 (dir / "p").string(), "--shard", "2/2"}),
                         "--shard '2/2'");
    requireCliInputError(runCli({"corpus", "builtin:sentiment-dot", "--data", (dir / "c.jsonl").string(), "--out",
                                 (dir / "p").string(), "--analyses", "speed"}),
                         "'speed' is not one of stats, importance, pruning");
}

}  // namespace test_cli_corpus
