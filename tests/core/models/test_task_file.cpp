// train --task FILE in core: a user's JSONL task (classification or sequence to sequence) trains
// a built-in architecture whose folder opens like the built-ins (maps equal the independent
// reference), and bad lines are refused naming the file and the line.
#include "attnscope/models/builtin.h"
#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"
#include "attnscope/attention/trace.h"
#include "gpt2_fixture.h"
#include "reference_builtin.h"

#include <catch2/catch.hpp>

#include <fstream>

namespace test_task_file {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

std::filesystem::path writeLines(const std::string& name, const std::vector<std::string>& lines) {
    const auto file = freshDir("task-file") / name;
    std::ofstream out(file);
    for (const auto& l : lines) out << l << "\n";
    return file;
}

TrainOptions tinyFile(const std::filesystem::path& file, AttentionKind kind) {
    TrainOptions o;
    o.taskFile = file;
    o.attention = kind;
    o.steps = 8;
    o.batch = 8;
    o.out = freshDir("task-file-model");
    return o;
}

std::vector<std::string> classificationLines() {
    std::vector<std::string> lines;
    const char* good[] = {"good", "great", "fine"};
    const char* bad[] = {"bad", "dull", "poor"};
    for (int i = 0; i < 40; ++i) {
        const bool pos = i % 2 == 0;
        lines.push_back(std::string("{\"text\": \"the show ") + std::to_string(i % 7) + " was " +
                        (pos ? good[i % 3] : bad[i % 3]) + "\", \"label\": \"" + (pos ? "up" : "down") + "\"}");
    }
    return lines;
}

std::vector<long long> asLong(const std::vector<std::int64_t>& ids) { return {ids.begin(), ids.end()}; }

double worstDifference(const Trace& trace, const std::string& block, const RefBlock& ref) {
    const int b = trace.blockIndex(block);
    double worst = 0;
    for (int l = 0; l < trace.blocks()[b].layers; ++l)
        for (int h = 0; h < trace.blocks()[b].heads; ++h) {
            const HeadMap map = trace.map(b, l, h);
            REQUIRE(map.values.size() == ref.maps[l][h].size());
            for (std::size_t i = 0; i < map.values.size(); ++i)
                worst = std::max(worst, std::abs(map.values[i] - ref.maps[l][h][i]));
        }
    return worst;
}

}  // namespace

TEST_CASE("a classification task file trains a classifier that opens like the built-ins", "[taskfile]") {
    const auto file = writeLines("sentiment.jsonl", classificationLines());
    TrainOptions o = tinyFile(file, AttentionKind::TopK);
    o.sparse.keep = 2;
    const TrainResult r = trainBuiltin(o);
    CHECK(r.heldOutExamples >= 1);  // the held-out split was scored
    const auto model = Model::load(o.out, LoadOptions{DeviceChoice::Cpu, {}});
    CHECK(model->info().task == "file");
    CHECK(model->info().attention == "topk");
    const auto ids = model->encodeText("The show 3 was GREAT!");  // words: lowercased, punctuation dropped
    const auto trace = model->forward(ids);
    CHECK(trace->classLabels() == std::vector<std::string>{"up", "down"});  // in order of first appearance
    const RefClassifier ref = referenceClassifier(o.out, asLong(ids));
    CHECK(worstDifference(*trace, "self", ref.self) < 2e-5);
    CHECK(trace->classProbabilities()[0] == Approx(ref.probabilities[0]).margin(1e-5));
    CHECK_THROWS_WITH(model->encodeText("the show was wonderful"),
                      Catch::Contains("word 'wonderful' is not in this model's vocabulary"));
    // The held-out examples are those whose text hashes out, and the monitors' probes come from them.
    const auto held = heldOutExamples(o, 100);
    REQUIRE(!held.empty());
    for (const auto& [text, label] : held) CHECK((label == "up" || label == "down"));
}

TEST_CASE("a sequence-to-sequence task file trains an encoder-decoder on characters", "[taskfile]") {
    std::vector<std::string> lines;
    for (int i = 0; i < 30; ++i) {
        std::string s;
        for (int k = 0; k < 2 + i % 4; ++k) s += static_cast<char>('a' + (i * 7 + k * 3) % 5);
        std::string t = s;
        for (char& c : t) c = static_cast<char>(c - 'a' + 'A');
        lines.push_back("{\"source\": \"" + s + "\", \"target\": \"" + t + "\"}");
    }
    const auto file = writeLines("upper.jsonl", lines);
    TrainOptions o = tinyFile(file, AttentionKind::Hybrid);
    o.relativePositions = true;
    o.relativeClip = 2;
    trainBuiltin(o);
    const auto model = Model::load(o.out, LoadOptions{DeviceChoice::Cpu, {}});
    CHECK(model->info().encoderDecoder);
    const auto ids = model->encodeText("abca");
    const auto trace = model->forward(ids);
    std::vector<long long> fed = {1};
    for (auto id : trace->outputIds()) fed.push_back(id);
    const RefSeq2seq ref = referenceSeq2seq(o.out, asLong(ids), fed);
    CHECK(worstDifference(*trace, "encoder", ref.encoder) < 2e-5);
    CHECK(worstDifference(*trace, "decoder", ref.decoder) < 2e-5);
    CHECK(worstDifference(*trace, "cross", ref.cross) < 2e-5);
    CHECK_THROWS_WITH(model->encodeText("abz"), Catch::Contains("character 'z' is not in this model's vocabulary"));
}

TEST_CASE("task files with a bad line are refused naming the file and the line", "[taskfile]") {
    const std::string ok = "{\"text\": \"a b\", \"label\": \"x\"}";
    const std::string ok2 = "{\"text\": \"c d\", \"label\": \"y\"}";
    const auto refused = [&](const std::vector<std::string>& lines, const std::string& what) {
        const auto file = writeLines("bad.jsonl", lines);
        TrainOptions o = tinyFile(file, AttentionKind::Dot);
        INFO(what);
        CHECK_THROWS_WITH(trainBuiltin(o), Catch::Contains(file.string() + what));
    };
    refused({ok, "{not json", ok2}, ":2: not a JSON object");
    refused({ok, "", ok2, "[1, 2]"}, ":4: not a JSON object");
    refused({ok, ok2, "{\"text\": 5, \"label\": \"x\"}"}, ":3: \"text\" must be a string");
    refused({ok, "{\"text\": \"\", \"label\": \"x\"}"}, ":2: \"text\" is empty");
    refused({ok, "{\"text\": \"e f\"}"}, ":2: no \"label\"");
    refused({ok, "{\"source\": \"ab\", \"target\": \"ba\"}"}, ":2: mixes sequence-to-sequence");
    refused({ok, "{\"other\": 1}"}, ":2: has neither");
    refused({ok, "{\"text\": \"g h\", \"label\": \"x\"}"}, ": classification needs at least 2 distinct labels");
    refused({ok}, ": needs at least 2 examples");
    TrainOptions o = tinyFile(freshDir("missing") / "none.jsonl", AttentionKind::Dot);
    CHECK_THROWS_WITH(trainBuiltin(o), Catch::Contains("cannot open the task file"));
}

}  // namespace test_task_file
