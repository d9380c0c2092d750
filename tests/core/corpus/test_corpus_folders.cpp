// Corpus run folders as input (core/src/corpus/corpus_folder.cpp): every run.json field of a
// shard typed and range-checked, record lines parsed strictly, the file named in every message,
// no merge onto its own shard; ids checked when corpus lines are read; --out an existing file.
#include "attnscope/corpus/corpus_run.h"
#include "attnscope/models/builtin.h"
#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"
#include "gpt2_fixture.h"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

namespace test_corpus_folders {

using namespace attnscope;
using namespace attnscope::testing;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string slurp(const fs::path& f) {
    std::ifstream in(f, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

const std::shared_ptr<const Model>& sentimentModel() {
    static const auto m = Model::load("builtin:sentiment-dot", LoadOptions{DeviceChoice::Cpu, {}});
    return m;
}

// Two finished shards (stats and importance) of a 4-example corpus, made once.
const std::vector<fs::path>& cleanShards() {
    static const std::vector<fs::path> dirs = [] {
        const auto dir = freshDir("corpus-folders-clean");
        TaskData data(3, Split::HeldOut);
        {
            std::ofstream f(dir / "c.jsonl");
            for (int i = 0; i < 4; ++i) {
                const SentimentExample e = data.sentiment();
                f << json{{"text", e.text}, {"label", e.positive ? "positive" : "negative"}}.dump() << "\n";
            }
        }
        std::vector<fs::path> out;
        for (int k = 0; k < 2; ++k) {
            CorpusOptions o;
            o.shard = k;
            o.shards = 2;
            o.pruning = false;
            out.push_back(dir / ("s" + std::to_string(k)));
            runCorpus(*sentimentModel(), dir / "c.jsonl", out.back(), o);
        }
        return out;
    }();
    return dirs;
}

// Copies of the clean shards, for one corruption.
std::vector<fs::path> shardCopies(const std::string& name) {
    const auto dir = freshDir(name);
    std::vector<fs::path> out;
    for (const fs::path& s : cleanShards()) {
        out.push_back(dir / s.filename());
        fs::copy(s, out.back(), fs::copy_options::recursive);
    }
    return out;
}

std::string mergeError(const std::vector<fs::path>& shards) {
    try {
        mergeCorpus(shards, shards[0].parent_path() / "merged");
    } catch (const Error& e) {
        return e.what();
    }
    return "(merged)";
}

}  // namespace

TEST_CASE("corpus-merge refuses every mistyped or out-of-range run.json field, naming file and field",
          "[corpus][rules]") {
    REQUIRE(mergeError(shardCopies("corpus-folders-ok")) == "(merged)");
    const std::vector<json> badValues = {
            nullptr, -1, json(std::uint64_t(1) << 63), "x", json::array({1, "x"}), json::object({{"a", 1}})};
    for (const char* field : {"format", "version", "heads", "model_spec", "labelled", "output", "targets", "examples",
                              "bad_lines", "shard", "settings", "stat_keys"}) {
        for (std::size_t v = 0; v < badValues.size(); ++v) {
            if (std::string(field) == "settings" && badValues[v].is_object()) continue;  // a valid, other settings
            const auto shards = shardCopies("corpus-folders-field");
            json run = json::parse(slurp(shards[1] / "run.json"));
            run[field] = badValues[v];
            writeText(shards[1] / "run.json", run.dump(1));
            const std::string message = mergeError(shards);
            INFO(field << " = " << badValues[v].dump() << ": " << message);
            CHECK_THAT(message, Catch::StartsWith((shards[1] / "run.json").string() + ": "));
            CHECK((message.find(std::string("'") + field + "'") != std::string::npos ||
                   message.find("another settings") != std::string::npos ||
                   message.find("older AttnScope") != std::string::npos));
            CHECK(message.find("json.exception") == std::string::npos);
            CHECK_FALSE(fs::exists(shards[0].parent_path() / "merged" / "heads.json"));
        }
    }
}

TEST_CASE("corpus-merge: a string shard is named with its file, not a json exception", "[corpus][rules]") {
    const auto shards = shardCopies("corpus-folders-shard-string");
    json run = json::parse(slurp(shards[0] / "run.json"));
    run["shard"] = "0/2";
    writeText(shards[0] / "run.json", run.dump());
    CHECK(mergeError(shards) == (shards[0] / "run.json").string() + ": 'shard' must be a list, found \"0/2\"");
}

TEST_CASE("corpus-merge reads record lines strictly", "[corpus][rules]") {
    SECTION("a garbage line") {
        const auto shards = shardCopies("corpus-folders-garbage");
        std::ofstream(shards[1] / "stats.jsonl", std::ios::app) << "{garbage\n";
        CHECK_THAT(mergeError(shards),
                   Catch::StartsWith((shards[1] / "stats.jsonl").string() + ":3: not valid JSON ("));
    }
    SECTION("a cut last line") {
        const auto shards = shardCopies("corpus-folders-cut");
        std::ofstream(shards[0] / "importance.jsonl", std::ios::app) << "{\"i\": 2";
        CHECK_THAT(mergeError(shards),
                   Catch::StartsWith((shards[0] / "importance.jsonl").string() + ":3: the last record is cut short"));
    }
    SECTION("a record of another shard, or of a value of the wrong type") {
        const auto shards = shardCopies("corpus-folders-values");
        const std::string stats = slurp(shards[0] / "stats.jsonl");
        json first = json::parse(stats.substr(0, stats.find('\n')));
        json moved = first;
        moved["i"] = 1;  // shard 0 of 2 holds the even examples
        writeText(shards[0] / "stats.jsonl", stats + moved.dump() + "\n");
        CHECK(mergeError(shards) ==
              (shards[0] / "stats.jsonl").string() + ":3: 'i' is example 1, which is not in shard 0/2");
        json typed = first;
        typed["s"][0][0] = "x";
        writeText(shards[0] / "stats.jsonl", typed.dump() + "\n");
        CHECK(mergeError(shards) == (shards[0] / "stats.jsonl").string() + ":1: 's' must be a number, found \"x\"");
        json pattern = first;
        pattern["p"][0] = 99;
        writeText(shards[0] / "stats.jsonl", pattern.dump() + "\n");
        CHECK_THAT(mergeError(shards),
                   Catch::StartsWith((shards[0] / "stats.jsonl").string() + ":1: 'p' must be between 0 and"));
    }
}

TEST_CASE("corpus-merge onto one of its own shards is refused and leaves it as it was", "[corpus][rules]") {
    const auto shards = shardCopies("corpus-folders-self");
    const std::string before = slurp(shards[0] / "run.json"), stats = slurp(shards[0] / "stats.jsonl");
    REQUIRE_THROWS_WITH(mergeCorpus(shards, shards[0]),
                        shards[0].string() + ": is also an input of this command; write to another path");
    REQUIRE_THROWS_WITH(mergeCorpus(shards, shards[1] / "."),
                        (shards[1] / ".").string() + ": is also an input of this command; write to another path");
    CHECK(slurp(shards[0] / "run.json") == before);
    CHECK(slurp(shards[0] / "stats.jsonl") == stats);
    CHECK(mergeError(shards) == "(merged)");  // still mergeable
}

TEST_CASE("corpus ids outside the vocabulary are bad lines, skipped with --skip-bad-lines", "[corpus][rules]") {
    const auto dir = freshDir("corpus-folders-ids");
    const auto& model = *sentimentModel();
    const std::int64_t vocab = model.info().vocabSize;
    writeText(dir / "c.jsonl", "{\"ids\": [1, 2, 3], \"label\": 0}\n{\"ids\": [1, 2, 999999], \"label\": 1}\n"
                               "{\"ids\": [3, 2, 1], \"label\": 1}\n");
    CorpusOptions o;
    o.pruning = false;
    const std::string reason = "token id 999999 is outside the vocabulary (0.." + std::to_string(vocab - 1) + ")";
    REQUIRE_THROWS_WITH(runCorpus(model, dir / "c.jsonl", dir / "out", o),
                        (dir / "c.jsonl").string() + ":2: " + reason);
    o.read.badLines = BadLinePolicy::Skip;
    const CorpusRunSummary s = runCorpus(model, dir / "c.jsonl", dir / "out", o);
    CHECK(s.result.examples == 2);
    REQUIRE(s.result.badLines.size() == 1);
    CHECK(s.result.badLines[0].line == 2);
    CHECK(s.result.badLines[0].reason == reason);
}

TEST_CASE("corpus --out naming an existing file says so", "[corpus][rules]") {
    const auto dir = freshDir("corpus-folders-out-file");
    writeText(dir / "c.txt", "the film was good\n");
    writeText(dir / "taken", "not a folder");
    CorpusOptions o;
    o.pruning = false;
    REQUIRE_THROWS_WITH(runCorpus(*sentimentModel(), dir / "c.txt", dir / "taken", o),
                        "--out " + (dir / "taken").string() +
                                ": not a folder (--out names the run folder to create or resume)");
    CHECK(slurp(dir / "taken") == "not a folder");
}

}  // namespace test_corpus_folders
