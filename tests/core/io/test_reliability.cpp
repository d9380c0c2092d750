// Hostile files for every parser of outside data (issue 15, faults 4, 6, 9, 13): each case used to
// crash, allocate gigabytes, read past a buffer or give a raw library message; now each is one
// attnscope::Error naming the file and the problem.
#include "attnscope/analysis/metrics.h"
#include "attnscope/analysis/rollout.h"
#include "attnscope/io/safetensors.h"
#include "attnscope/lab/lab.h"
#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"
#include "attnscope/tokenizer/tokenizer.h"
#include "family_fixtures.h"
#include "gpt2_fixture.h"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <string>

namespace test_reliability {

using namespace attnscope;
using namespace attnscope::testing;
namespace fs = std::filesystem;

namespace {

// 100,000 nested arrays: enough to overflow the stack of any recursive walk of the tree.
std::string deep(std::size_t levels = 100000) { return std::string(levels, '[') + "1" + std::string(levels, ']'); }

std::string lengthPrefix(std::uint64_t n) {
    std::string s(8, '\0');
    for (int i = 0; i < 8; ++i) s[i] = static_cast<char>((n >> (8 * i)) & 0xFF);
    return s;
}

std::string slurp(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string messageOf(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "(no error)";
}

LoadOptions cpu() {
    LoadOptions o;
    o.device = DeviceChoice::Cpu;
    return o;
}

}  // namespace

TEST_CASE("JSON nested 100,000 deep is refused where it is read, in every kind of file (fault 9)", "[reliability]") {
    const std::string depthError = "JSON nested deeper than 128 levels";
    SECTION("safetensors header") {
        const std::string header = "{\"__metadata__\":{\"x\":" + deep() + "}}";
        const auto file = freshDir("rel-deep-st") / "model.safetensors";
        writeText(file, lengthPrefix(header.size()) + header);
        const std::string m = messageOf([&] { SafetensorsFile::open(file); });
        CHECK_THAT(m, Catch::Contains(file.string()) && Catch::Contains(depthError));
    }
    SECTION("config.json") {
        const auto dir = freshDir("rel-deep-config");
        writeGpt2Folder(dir, makeGpt2({}, 1));
        writeText(dir / "config.json", "{\"model_type\":\"gpt2\",\"n_layer\":" + deep() + "}");
        const std::string m = messageOf([&] { Model::load(dir, cpu()); });
        CHECK_THAT(m, Catch::Contains("config.json") && Catch::Contains(depthError));
    }
    SECTION("preprocessor_config.json") {
        const auto dir = freshDir("rel-deep-pre");
        writeCheckpoint(dir, makeVit(VitSpec{}, 3));
        writeText(dir / "preprocessor_config.json", "{\"image_mean\":" + deep() + "}");
        const std::string m = messageOf([&] { Model::load(dir, cpu()); });
        CHECK_THAT(m, Catch::Contains("preprocessor_config.json") && Catch::Contains(depthError));
    }
    SECTION("tokenizer.json") {
        const std::string m = messageOf([&] { Tokenizer::fromJson("{\"model\":" + deep() + "}", "tok.json"); });
        CHECK_THAT(m, Catch::Contains("tok.json") && Catch::Contains(depthError));
    }
    SECTION("shallow nesting inside strings does not count") {
        const std::string quoted = "\"" + std::string(1000, '[') + "\"";
        CHECK_THAT(messageOf([&] { Tokenizer::fromJson("{\"model\":" + quoted + "}", "tok.json"); }),
                   !Catch::Contains(depthError));
    }
}

TEST_CASE("error messages quote a bad value briefly, never megabytes of it (fault 9)", "[reliability]") {
    const auto dir = freshDir("rel-long-value");
    writeGpt2Folder(dir, makeGpt2({}, 1));
    nlohmann::json config = nlohmann::json::parse(slurp(dir / "config.json"));
    config["n_layer"] = std::string(1 << 20, 'x');  // a 1 MiB string where a number belongs
    writeText(dir / "config.json", config.dump());
    const std::string m = messageOf([&] { Model::load(dir, cpu()); });
    CHECK_THAT(m, Catch::Contains("'n_layer'"));
    CHECK(m.size() < 400);
    CHECK(m.find('\n') == std::string::npos);
}

TEST_CASE("a bad UTF-8 byte in merges.txt or vocab.txt names the file and line (fault 13)", "[reliability]") {
    SECTION("merges.txt") {
        const auto dir = freshDir("rel-utf8-merges");
        writeText(dir / "vocab.json", R"({"a": 0, "b": 1, "ab": 2})");
        writeText(dir / "merges.txt", "#version: 0.2\na b\n\xff b\n");
        const std::string m = messageOf([&] { Tokenizer::fromFolder(dir); });
        CHECK_THAT(m,
                   Catch::Contains((dir / "merges.txt").string() + ": line 3 is not valid UTF-8 (byte 1 of the line)"));
        CHECK_THAT(m, !Catch::Contains("json.exception"));
    }
    SECTION("vocab.txt") {
        const auto dir = freshDir("rel-utf8-vocab");
        writeText(dir / "vocab.txt", "[PAD]\n[UNK]\nhel\xc3\n");
        const std::string m = messageOf([&] { Tokenizer::fromFolder(dir); });
        CHECK_THAT(m,
                   Catch::Contains((dir / "vocab.txt").string() + ": line 3 is not valid UTF-8 (byte 4 of the line)"));
    }
}

// Fault 4: one limit on announced ids, from the file's own size (at least 2^17, at most 2^24), so a
// small file cannot make the id -> token table (8 bytes per id) gigabytes large.
TEST_CASE("token ids in tokenizer files are limited by the file's size (fault 4)", "[reliability]") {
    nlohmann::json t = nlohmann::json::parse(slurp(fs::path(ATTNSCOPE_TOKENIZER_DATA) / "gpt2.json"));
    SECTION("an added token far beyond what the file holds") {
        t["added_tokens"].push_back({{"id", 2147483000}, {"content", "<big>"}, {"special", true}});
        const std::string json = t.dump();
        CHECK_THAT(messageOf([&] { Tokenizer::fromJson(json, "big.json"); }),
                   Catch::Contains("big.json: added_tokens") &&
                           Catch::Contains("token '<big>' has id 2147483000, above the limit " +
                                           std::to_string(json.size()) + " (the file's size in bytes)"));
    }
    SECTION("a vocabulary entry, just above the file's size and at it") {
        t["model"]["vocab"]["<big>"] = 100000;
        const std::size_t bytes = t.dump().size();  // six digits, as the ids below: the size stays
        REQUIRE(bytes > (std::size_t{1} << 17));
        REQUIRE(bytes < 999999);
        t["model"]["vocab"]["<big>"] = bytes + 1;
        CHECK_THAT(messageOf([&] { Tokenizer::fromJson(t.dump(), "big.json"); }),
                   Catch::Contains("big.json: model (BPE)") &&
                           Catch::Contains("token '<big>' has id " + std::to_string(bytes + 1) + ", above the limit"));
        t["model"]["vocab"]["<big>"] = bytes;
        CHECK(Tokenizer::fromJson(t.dump(), "edge.json")->vocabSize() == static_cast<std::int64_t>(bytes) + 1);
    }
    SECTION("a post-processor's special token") {
        t["post_processor"] = {{"type", "BertProcessing"}, {"sep", {"[SEP]", 4294967296LL}}, {"cls", {"[CLS]", 1}}};
        CHECK_THAT(messageOf([&] { Tokenizer::fromJson(t.dump(), "big.json"); }),
                   Catch::Contains("'sep' has id 4294967296, above the limit"));
        t["post_processor"] = {{"type", "TemplateProcessing"},
                               {"single", nlohmann::json::array()},
                               {"pair", nlohmann::json::array()},
                               {"special_tokens", {{"<x>", {{"id", "<x>"}, {"ids", {-5}}, {"tokens", {"<x>"}}}}}}};
        CHECK_THAT(messageOf([&] { Tokenizer::fromJson(t.dump(), "big.json"); }),
                   Catch::Contains("special token '<x>' has id -5, below 0"));
    }
    SECTION("a tiny file may use ids up to 2^17, not beyond") {
        const auto tiny = [](std::int64_t id) {
            return nlohmann::json{
                    {"model", {{"type", "BPE"}, {"vocab", {{"a", 0}}}, {"merges", nlohmann::json::array()}}},
                    {"added_tokens", {{{"id", id}, {"content", "<s>"}, {"special", true}}}}}
                    .dump();
        };
        CHECK(Tokenizer::fromJson(tiny(128000), "tiny.json")->vocabSize() == 128001);
        CHECK(Tokenizer::fromJson(tiny(std::int64_t{1} << 17), "tiny.json")->vocabSize() ==
              (std::int64_t{1} << 17) + 1);
        CHECK_THAT(messageOf([&] { Tokenizer::fromJson(tiny((std::int64_t{1} << 17) + 1), "tiny.json"); }),
                   Catch::Contains("token '<s>' has id 131073, above the limit 131072") && !Catch::Contains("bytes"));
    }
    SECTION("vocab.json + merges.txt and vocab.txt") {
        const auto dir = freshDir("rel-vocab-id");
        writeText(dir / "vocab.json", "{\"a\": 0, \"b\": 1, \"ab\": 16777216}");
        writeText(dir / "merges.txt", "#version: 0.2\na b\n");
        CHECK_THAT(messageOf([&] { Tokenizer::fromFolder(dir); }),
                   Catch::Contains("(vocab.json + merges.txt)") &&
                           Catch::Contains("token 'ab' has id 16777216, above the limit 131072"));
    }
    SECTION("a vocab.json without merges.txt labels a model's axes") {
        const auto dir = freshDir("rel-vocab-labels");
        writeGpt2Folder(dir, makeGpt2({}, 1));
        writeText(dir / "vocab.json", "{\"t0\": 0, \"t1\": 1, \"huge\": 2147483000}");
        CHECK_THAT(messageOf([&] { Model::load(dir, cpu()); }),
                   Catch::Contains((dir / "vocab.json").string() +
                                   ": token 'huge' has id 2147483000, above the limit 131072"));
    }
}

TEST_CASE("maps whose values do not match rows x cols are refused by every public measure (fault 6)", "[reliability]") {
    const HeadMap good{2, 2, {0.5f, 0.5f, 1.0f, 0.0f}};
    const HeadMap shortMap{2, 2, {0.5f, 0.5f, 1.0f}};
    const HeadMap negative{-1, 2, {}};
    for (const HeadMap* bad : {&shortMap, &negative}) {
        CHECK_THROWS_WITH(meanRowEntropy(*bad), Catch::Contains("mean row entropy: a map of"));
        CHECK_THROWS_AS(meanRowKl(good, *bad), Error);
        CHECK_THROWS_AS(meanRowKl(*bad, good), Error);
        CHECK_THROWS_AS(meanAttentionDistance(*bad), Error);
        CHECK_THROWS_AS(attentionToKeys(*bad, {0}), Error);
        CHECK_THROWS_AS(patternScores(*bad), Error);
        CHECK_THROWS_AS(mapCosine(good, *bad), Error);
        CHECK_THROWS_AS(similarityMatrix({good, *bad}), Error);
        CHECK_THROWS_AS(attentionRollout({good, *bad}), Error);
        CHECK_THROWS_AS(averageHeads({good, *bad}), Error);
        CHECK_THROWS_AS(mixMaps(good, *bad, 0.5), Error);
    }
    CHECK_THROWS_WITH(meanRowEntropy(shortMap), Catch::Contains("a map of 2x2 needs 4 values, it holds 3"));
    CHECK(meanRowEntropy(good) == Approx(std::log(2.0) / 2));
}

namespace {

// Every file and folder under dir with its size and modification time, to see that nothing was
// written.
std::map<std::string, std::pair<std::uintmax_t, fs::file_time_type>> snapshot(const fs::path& dir) {
    std::map<std::string, std::pair<std::uintmax_t, fs::file_time_type>> out;
    for (const auto& e : fs::recursive_directory_iterator(dir))
        out[e.path().string()] = {e.is_regular_file() ? e.file_size() : 0, e.last_write_time()};
    out[dir.string()] = {0, fs::last_write_time(dir)};
    return out;
}

void setWritable(const fs::path& dir, bool writable) {
    const auto perms = fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write;
    const auto how = writable ? fs::perm_options::add : fs::perm_options::remove;
    for (const auto& e : fs::recursive_directory_iterator(dir)) fs::permissions(e.path(), perms, how);
    fs::permissions(dir, perms, how);
}

}  // namespace

TEST_CASE("a model folder is opened read-only: a read-only copy loads, runs and stays unchanged", "[reliability]") {
    const auto source = freshDir("rel-ro-source");
    writeGpt2TokenizerFolder(source, fs::path(ATTNSCOPE_TOKENIZER_DATA) / "gpt2.json", 5);
    const auto dir = freshDir("rel-ro") / "model";
    fs::copy(source, dir, fs::copy_options::recursive);
    setWritable(dir, false);
    const auto before = snapshot(dir);
    {
        const auto model = Model::load(dir, cpu());
        const auto ids = model->encodeText("Hello world");
        REQUIRE_FALSE(ids.empty());
        const auto trace = model->forward(ids);
        CHECK(trace->map(0, 0, 0).rows == int(ids.size()));
        // The weights are mapped while the model lives: every mapping of the folder's files is
        // read-only (checked here because root, which CI may run as, ignores the permissions).
        std::ifstream maps("/proc/self/maps");
        int mapped = 0;
        for (std::string line; std::getline(maps, line);)
            if (line.find(dir.string()) != std::string::npos) {
                ++mapped;
                INFO(line);
                const std::string perms = line.substr(line.find(' ') + 1, 4);
                CHECK(perms.find('w') == std::string::npos);
            }
        CHECK(mapped >= 1);
    }
    CHECK(snapshot(dir) == before);
    setWritable(dir, true);
}

TEST_CASE("a number too large for a double is one error in every JSON file (found by fuzz_tokenizer_json)",
          "[reliability]") {
    // 1e309 overflows a double: nlohmann throws out_of_range, not parse_error, and the tokenizer
    // once let it escape (std::terminate).
    const std::string tok =
            messageOf([] { Tokenizer::fromJson(R"({"model": {"type": "BPE", "dropout": 21e309}})", "tok.json"); });
    CHECK_THAT(tok, Catch::Contains("tok.json: not valid JSON"));
    CHECK_THAT(tok, Catch::Contains("number overflow"));
    const auto dir = freshDir("rel-1e309");
    writeGpt2Folder(dir, makeGpt2({}, 1));
    writeText(dir / "config.json", R"({"model_type": "gpt2", "n_layer": 1e309})");
    const std::string cfg = messageOf([&] { Model::load(dir, cpu()); });
    CHECK_THAT(cfg, Catch::Contains("config.json: not valid JSON"));
    CHECK(cfg.find('\n') == std::string::npos);
}

}  // namespace test_reliability
