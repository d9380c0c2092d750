// The shipped built-in models against an independent double-precision forward (reference_builtin):
// every attention map the Trace gives (MapVariant::Native) and the outputs, for each attention
// kind, with and without RunOptions; the Trace contract the GUI and CLI rely on; text splitting.
#include "attnscope/models/builtin.h"
#include "attnscope/runtime/error.h"
#include "attnscope/models/model.h"
#include "attnscope/attention/trace.h"
#include "gpt2_fixture.h"
#include "builtin_checks.h"
#include "reference_builtin.h"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>

namespace test_builtin_models {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

// Every head of every layer of the block equals the reference within float32 accuracy.
void requireBlockMatches(const Trace& trace, const std::string& name, const RefBlock& ref, double temperature = 1.0) {
    const int b = trace.blockIndex(name);
    const BlockInfo& info = trace.blocks()[b];
    REQUIRE(info.layers == static_cast<int>(ref.maps.size()));
    double worst = 0;
    for (int l = 0; l < info.layers; ++l)
        for (int h = 0; h < info.heads; ++h) {
            MapOptions options;
            options.temperature = temperature;
            const HeadMap map = trace.map(b, l, h, options);
            REQUIRE(map.rows == ref.rows);
            REQUIRE(map.cols == ref.cols);
            for (std::size_t i = 0; i < map.values.size(); ++i)
                worst = std::max(worst, std::abs(map.values[i] - ref.maps[l][h][i]));
        }
    INFO(name << ": largest difference " << worst);
    REQUIRE(worst < 2e-5);
}

const std::vector<std::string> kKinds = {"dot", "additive", "linear"};

}  // namespace

TEST_CASE("built-in classifiers: maps and probabilities equal an independent computation", "[builtin]") {
    for (const auto& kind : kKinds) {
        SECTION(kind) {
            const auto model = builtin("sentiment-" + kind);
            const auto ids = model->encodeText("The plot was not very good, but the acting was great!");
            const auto trace = model->forward(ids);
            const RefClassifier ref = referenceClassifier(folderOf("sentiment-" + kind), asLong(ids));
            requireBlockMatches(*trace, "self", ref.self);
            REQUIRE(trace->classProbabilities().size() == 2);
            CHECK(trace->classProbabilities()[0] == Approx(ref.probabilities[0]).margin(1e-5));
            CHECK(trace->classProbabilities()[1] == Approx(ref.probabilities[1]).margin(1e-5));
        }
    }
}

TEST_CASE("built-in encoder-decoders: maps and greedy decode equal an independent computation", "[builtin]") {
    for (const auto& kind : kKinds) {
        SECTION(kind) {
            const auto model = builtin("reverse-" + kind);
            const auto ids = model->encodeText("q7k2m9a0zz");
            const auto trace = model->forward(ids);
            std::vector<long long> fed = {1};  // <s>
            for (auto id : trace->outputIds()) fed.push_back(id);
            const RefSeq2seq ref = referenceSeq2seq(folderOf("reverse-" + kind), asLong(ids), fed);
            requireBlockMatches(*trace, "encoder", ref.encoder);
            requireBlockMatches(*trace, "decoder", ref.decoder);
            requireBlockMatches(*trace, "cross", ref.cross);
            // Row r predicts output r; the last row predicts the end mark </s> (id 2).
            for (std::size_t r = 0; r < ref.logits.size(); ++r) {
                const auto& row = ref.logits[r];
                const long long best = std::max_element(row.begin(), row.end()) - row.begin();
                CHECK(best == (r < trace->outputIds().size() ? trace->outputIds()[r] : 2));
            }
        }
    }
}

TEST_CASE("built-in models honour propagated temperature and masked heads in every block", "[builtin]") {
    RunOptions run;
    run.temperature = 2.5;
    run.temperatureLayers = {1};
    run.maskHeads = {{"cross", 0, 1}, {"encoder", 1, 0}, {"self", 0, 1}, {"decoder", 1, 1}};
    BuiltinRefOptions opt;
    opt.temperature = 2.5;
    opt.temperatureLayers = {1};
    opt.masked = {{"cross", 0, 1}, {"encoder", 1, 0}, {"self", 0, 1}, {"decoder", 1, 1}};
    for (const auto& kind : kKinds) {
        SECTION("sentiment-" + kind) {
            const auto model = builtin("sentiment-" + kind);
            const auto ids = model->encodeText("a really dull film and the ending is never good");
            const auto trace = model->forward(ids, run);
            const RefClassifier ref = referenceClassifier(folderOf("sentiment-" + kind), asLong(ids), opt);
            requireBlockMatches(*trace, "self", ref.self);
            CHECK(trace->classProbabilities()[1] == Approx(ref.probabilities[1]).margin(1e-5));
            // The options change the outcome: it differs from a plain run.
            CHECK(std::abs(model->forward(ids)->classProbabilities()[1] - trace->classProbabilities()[1]) > 1e-6);
        }
        SECTION("reverse-" + kind) {
            const auto model = builtin("reverse-" + kind);
            const auto ids = model->encodeText("hello42");
            const auto trace = model->forward(ids, run);
            std::vector<long long> fed = {1};
            for (auto id : trace->outputIds()) fed.push_back(id);
            const RefSeq2seq ref = referenceSeq2seq(folderOf("reverse-" + kind), asLong(ids), fed, opt);
            requireBlockMatches(*trace, "encoder", ref.encoder);
            requireBlockMatches(*trace, "decoder", ref.decoder);
            requireBlockMatches(*trace, "cross", ref.cross);
        }
    }
}

TEST_CASE("display temperature on a built-in map equals the reference's softmax at that temperature", "[builtin]") {
    for (const auto& kind : {"dot", "additive"}) {
        SECTION(kind) {
            const auto model = builtin(std::string("sentiment-") + kind);
            const auto ids = model->encodeText("this movie is truly awful");
            const auto trace = model->forward(ids);
            BuiltinRefOptions opt;
            opt.temperature = 0.4;
            opt.temperatureLayers = {0};  // layer 0's own maps are what a display temperature shows
            RefClassifier ref = referenceClassifier(folderOf(std::string("sentiment-") + kind), asLong(ids), opt);
            ref.self.maps.resize(1);
            const int b = trace->blockIndex("self");
            for (int h = 0; h < 2; ++h) {
                MapOptions options;
                options.temperature = 0.4;
                const HeadMap map = trace->map(b, 0, h, options);
                for (std::size_t i = 0; i < map.values.size(); ++i)
                    REQUIRE(map.values[i] == Approx(ref.self.maps[0][h][i]).margin(2e-5));
            }
        }
    }
}

TEST_CASE("comparison variants on built-in layers use the captured per-head q and k", "[builtin]") {
    // A linear layer's Dot variant is softmax(q·k/√d); a dot layer's Linear variant is the
    // normalised φ(q)·φ(k) with φ = elu+1; both from the layer's own (unscaled) q and k.
    auto phi = [](double x) { return x > 0 ? x + 1 : std::exp(x); };
    for (const std::string name : {"sentiment-linear", "sentiment-dot"}) {
        SECTION(name) {
            const auto model = builtin(name);
            const auto ids = model->encodeText("the music is so boring but the cast was superb");
            const auto trace = model->forward(ids);
            const RefClassifier ref = referenceClassifier(folderOf(name), asLong(ids));
            const bool linearLayer = name == "sentiment-linear";
            MapOptions options;
            options.variant = linearLayer ? MapVariant::Dot : MapVariant::Linear;
            const int n = static_cast<int>(ids.size()), d = 16;
            for (int l = 0; l < 2; ++l)
                for (int h = 0; h < 2; ++h) {
                    const HeadMap map = trace->map(0, l, h, options);
                    for (int i = 0; i < n; ++i) {
                        std::vector<double> row(n);
                        double sum = 0;
                        for (int j = 0; j < n; ++j) {
                            double s = 0;
                            for (int a = 0; a < d; ++a) {
                                const double q = ref.self.q[l][i][h * d + a], k = ref.self.k[l][j][h * d + a];
                                s += linearLayer ? q * k / std::sqrt(static_cast<double>(d)) : phi(q) * phi(k);
                            }
                            sum += row[j] = linearLayer ? std::exp(s) : s;
                        }
                        for (int j = 0; j < n; ++j) REQUIRE(map.at(i, j) == Approx(row[j] / sum).margin(2e-5));
                    }
                }
        }
    }
}

TEST_CASE("built-in traces follow the block contract", "[builtin]") {
    SECTION("encoder-decoder") {
        const auto model = builtin("reverse-dot");
        CHECK(model->info().family == "attnscope-seq2seq");
        CHECK(model->info().task == "reverse");
        CHECK(model->info().attention == "dot");
        const auto trace = model->forward(model->encodeText("abc123"));
        REQUIRE(trace->blocks().size() == 3);
        const std::vector<std::string> source = {"a", "b", "c", "1", "2", "3"};
        const std::vector<std::string> target = {"<s>", "3", "2", "1", "c", "b", "a"};
        CHECK(trace->tokens() == source);
        CHECK(trace->outputTokens() == std::vector<std::string>(target.begin() + 1, target.end()));
        const auto& enc = trace->blocks()[trace->blockIndex("encoder")];
        const auto& dec = trace->blocks()[trace->blockIndex("decoder")];
        const auto& cross = trace->blocks()[trace->blockIndex("cross")];
        CHECK((enc.queryTokens == source && enc.keyTokens == source && !enc.causal));
        CHECK((dec.queryTokens == target && dec.keyTokens == target && dec.causal));
        CHECK((cross.queryTokens == target && cross.keyTokens == source && !cross.causal));
        for (const auto& b : trace->blocks()) CHECK(b.kind == AttentionKind::Dot);
        const HeadMap m = trace->map(trace->blockIndex("cross"), 1, 0);
        CHECK((m.rows == 7 && m.cols == 6));
        // causal decoder: nothing above the diagonal
        const HeadMap d = trace->map(trace->blockIndex("decoder"), 0, 1);
        for (int i = 0; i < d.rows; ++i)
            for (int j = i + 1; j < d.cols; ++j) CHECK(d.at(i, j) == 0.0f);
    }
    SECTION("classifier") {
        const auto model = builtin("sentiment-linear");
        const auto trace = model->forward(model->encodeText("The film was not bad."));
        CHECK(trace->tokens() == std::vector<std::string>{"<cls>", "the", "film", "was", "not", "bad"});
        REQUIRE(trace->blocks().size() == 1);
        CHECK(trace->blocks()[0].name == "self");
        CHECK(trace->blocks()[0].kind == AttentionKind::Linear);
        CHECK(trace->classLabels() == std::vector<std::string>{"negative", "positive"});
        CHECK(trace->classProbabilities()[1] > 0.5f);
    }
}

TEST_CASE("built-in text splitting: per character and per word, with clear errors", "[builtin]") {
    const auto reverse = builtin("reverse-additive");
    const auto sentiment = builtin("sentiment-dot");
    CHECK(reverse->tokenLabels(reverse->encodeText("z09a")) == std::vector<std::string>{"z", "0", "9", "a"});
    CHECK(sentiment->tokenLabels(sentiment->encodeText("  A  GREAT movie!  ")) ==
          std::vector<std::string>{"<cls>", "a", "great", "movie"});
    CHECK_THROWS_WITH(reverse->encodeText("abC"),
                      Catch::Contains("symbol 'C' at position 2") && Catch::Contains("reverse-additive"));
    CHECK_THROWS_WITH(reverse->encodeText("ab\xc3\xa9"), Catch::Contains("symbol '\xc3\xa9'"));
    CHECK_THROWS_WITH(reverse->encodeText(std::string(17, 'a')),
                      Catch::Contains("17 symbols") && Catch::Contains("at most 16"));
    CHECK_THROWS_WITH(reverse->encodeText(""), Catch::Contains("empty"));
    CHECK_THROWS_WITH(sentiment->encodeText("the movie wasn't good"), Catch::Contains("word 'wasn't'"));
    CHECK_THROWS_WITH(sentiment->encodeText("?!"), Catch::Contains("no words"));
    CHECK_THROWS_WITH(sentiment->encodeText(std::string(16 * 4, ' ') +
                                            [] {
                                                std::string s;
                                                for (int i = 0; i < 16; ++i) s += "good ";
                                                return s;
                                            }()),
                      Catch::Contains("16 words") && Catch::Contains("at most 15"));
    CHECK_THROWS_AS(sentiment->forward({1, 2, 999}), Error);
}

TEST_CASE("broken built-in model folders are errors that name the file and the problem", "[builtin]") {
    auto copy = [](const std::string& name) {
        const auto dir = freshDir("broken-" + name);
        for (const char* f : {"config.json", "model.safetensors", "vocab.json"})
            std::filesystem::copy_file(folderOf(name) / f, dir / f);
        return dir;
    };
    auto edit = [](const std::filesystem::path& file, const std::function<void(nlohmann::json&)>& change) {
        std::ifstream in(file);
        nlohmann::json j = nlohmann::json::parse(in);
        change(j);
        writeText(file, j.dump());
    };
    auto loadError = [](const std::filesystem::path& dir) {
        try {
            Model::load(dir);
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("(loaded)");
    };
    SECTION("task and model_type disagree") {
        const auto dir = copy("reverse-dot");
        edit(dir / "config.json", [](nlohmann::json& j) { j["task"] = "sentiment"; });
        CHECK_THAT(loadError(dir),
                   Catch::Contains("config.json") && Catch::Contains("'task'") && Catch::Contains("attnscope-seq2seq"));
    }
    SECTION("unknown attention kind") {
        const auto dir = copy("sentiment-dot");
        edit(dir / "config.json", [](nlohmann::json& j) { j["attention"] = "flash"; });
        CHECK_THAT(loadError(dir), Catch::Contains("config.json") && Catch::Contains("unknown attention kind 'flash'"));
    }
    SECTION("weights that do not fit the config") {
        const auto dir = copy("sentiment-linear");
        edit(dir / "config.json", [](nlohmann::json& j) { j["d_ffn"] = 48; });
        CHECK_THAT(loadError(dir), Catch::Contains("model.safetensors") &&
                                           Catch::Contains("encoder.0.ffn.fc1.weight") && Catch::Contains("[64, 32]") &&
                                           Catch::Contains("[48, 32]"));
    }
    SECTION("a vocabulary with a gap") {
        const auto dir = copy("reverse-linear");
        edit(dir / "vocab.json", [](nlohmann::json& j) { j.erase("q"); });
        CHECK_THAT(loadError(dir), Catch::Contains("vocab.json") && Catch::Contains("no symbol has id"));
    }
    SECTION("specials in the wrong place") {
        const auto dir = copy("sentiment-additive");
        edit(dir / "vocab.json", [](nlohmann::json& j) {
            j["<cls>"] = 2;
            j["the"] = 1;
        });
        CHECK_THAT(loadError(dir), Catch::Contains("vocab.json") && Catch::Contains("id 1 must be '<cls>'"));
    }
}

}  // namespace test_builtin_models
