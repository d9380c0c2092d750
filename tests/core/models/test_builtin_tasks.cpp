// The shipped built-in models do their tasks on fresh held-out inputs, and their attention shows
// what it should. Accuracies measured when the models were trained are in docs/builtin-models.md.
#include "attnscope/models/builtin.h"
#include "attnscope/models/model.h"
#include "attnscope/attention/trace.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <sstream>

namespace test_builtin_tasks {

using namespace attnscope;

namespace {

std::shared_ptr<const Model> builtin(const std::string& name) {
    LoadOptions options;
    options.device = DeviceChoice::Cpu;
    return Model::load("builtin:" + name, options);
}

std::vector<std::string> words(const std::string& text) {
    std::istringstream in(text);
    std::vector<std::string> out;
    for (std::string w; in >> w;) out.push_back(w);
    return out;
}

// The test's own reading of the grammar's labels: a clause's adjective decides, a negation flips
// it, and after "but" only the last clause counts.
const std::set<std::string> kPositive = {"good",      "great",  "excellent", "wonderful",
                                         "brilliant", "superb", "enjoyable", "fun"};
const std::set<std::string> kNegative = {"bad", "terrible", "awful", "boring", "dull", "poor", "weak", "horrible"};
const std::set<std::string> kNegation = {"not", "never"};
const std::set<std::string> kFunction = {"the", "a", "this", "was", "is", "and"};

bool independentLabel(const std::string& text) {
    std::vector<std::vector<std::string>> clauses(1);
    bool but = false;
    for (const auto& w : words(text)) {
        if (w == "but" || w == "and") {
            but |= w == "but";
            clauses.emplace_back();
        } else {
            clauses.back().push_back(w);
        }
    }
    auto polarity = [](const std::vector<std::string>& clause) {
        bool positive = false, negated = false;
        for (const auto& w : clause) {
            if (kPositive.count(w)) positive = true;
            negated |= kNegation.count(w) > 0;
        }
        return positive != negated;
    };
    return polarity(but ? clauses.back() : clauses.front());
}

const std::vector<std::string> kKinds = {"dot", "additive", "linear"};

}  // namespace

TEST_CASE("built-in reverse models reverse held-out strings and a cross-attention head reads the symbol it writes",
          "[builtin][task]") {
    for (const auto& kind : kKinds) {
        SECTION(kind) {
            const auto model = builtin("reverse-" + kind);
            TaskData data(4242, Split::HeldOut);  // not the trainer's scoring seed either
            const int examples = 120;
            int exact = 0;
            // hits[layer][head]: output positions whose strongest source position holds that same symbol
            std::vector<std::vector<int>> hits(2, std::vector<int>(2, 0));
            int positions = 0;
            for (int e = 0; e < examples; ++e) {
                const std::string s = data.reverseSource();
                REQUIRE(isHeldOut(s));
                const auto trace = model->forward(model->encodeText(s));
                std::string got;
                for (const auto& t : trace->outputTokens()) got += t;
                exact += got == std::string(s.rbegin(), s.rend());
                const int cross = trace->blockIndex("cross");
                const auto& out = trace->outputTokens();
                for (int l = 0; l < 2; ++l)
                    for (int h = 0; h < 2; ++h) {
                        const HeadMap map = trace->map(cross, l, h);
                        for (std::size_t r = 0; r < out.size(); ++r) {  // row r predicts output r
                            int best = 0;
                            for (int j = 1; j < map.cols; ++j)
                                if (map.at(static_cast<int>(r), j) > map.at(static_cast<int>(r), best)) best = j;
                            hits[l][h] += trace->tokens()[best] == out[r];
                        }
                    }
                positions += static_cast<int>(out.size());
            }
            const double accuracy = static_cast<double>(exact) / examples;
            int bestHits = 0;
            for (const auto& layer : hits)
                for (int h : layer) bestHits = std::max(bestHits, h);
            const double aligned = static_cast<double>(bestHits) / positions;
            INFO(kind << ": exact match " << accuracy << ", best cross head aligned " << aligned);
            CHECK(accuracy >= 0.95);  // measured 100% on these 120 for each kind
            CHECK(aligned >= 0.90);   // measured: dot 100%, additive 100%, linear 95.2%
        }
    }
}

TEST_CASE("built-in sentiment models classify held-out sentences and attend to sentiment and negation words",
          "[builtin][task]") {
    for (const auto& kind : kKinds) {
        SECTION(kind) {
            const auto model = builtin("sentiment-" + kind);
            TaskData data(4242, Split::HeldOut);
            const int examples = 300;
            int correct = 0;
            // Per layer: attention of <cls> (row 0), averaged over heads, per word of each class.
            std::vector<double> content(2, 0), function(2, 0);
            int contentWords = 0, functionWords = 0;
            for (int e = 0; e < examples; ++e) {
                const SentimentExample ex = data.sentiment();
                REQUIRE(isHeldOut(ex.text));
                REQUIRE(independentLabel(ex.text) == ex.positive);
                const auto trace = model->forward(model->encodeText(ex.text));
                correct += (trace->classProbabilities()[1] > 0.5f) == ex.positive;
                const auto& tokens = trace->tokens();
                for (int l = 0; l < 2; ++l)
                    for (int h = 0; h < 2; ++h) {
                        const HeadMap map = trace->map(0, l, h);
                        for (int j = 1; j < map.cols; ++j) {
                            const std::string& w = tokens[j];
                            if (kPositive.count(w) || kNegative.count(w) || kNegation.count(w))
                                content[l] += map.at(0, j) / 2;
                            if (kFunction.count(w)) function[l] += map.at(0, j) / 2;
                        }
                    }
                for (std::size_t j = 1; j < tokens.size(); ++j) {
                    const std::string& w = tokens[j];
                    contentWords += kPositive.count(w) || kNegative.count(w) || kNegation.count(w);
                    functionWords += kFunction.count(w) > 0;
                }
            }
            const double accuracy = static_cast<double>(correct) / examples;
            std::ostringstream stats;
            for (int l = 0; l < 2; ++l)
                stats << " layer " << l << ": " << content[l] / contentWords << " per sentiment/negation word vs "
                      << function[l] / functionWords << " per function word;";
            INFO(kind << ": accuracy " << accuracy << stats.str());
            CHECK(accuracy >= 0.95);
            // In some layer <cls> gives a sentiment or negation word at least 1.5 times the
            // attention it gives a function word (measured: dot 4.8x, additive 2.9x, linear 1.9x).
            double ratio = 0;
            for (int l = 0; l < 2; ++l)
                ratio = std::max(ratio, (content[l] / contentWords) / (function[l] / functionWords));
            CHECK(ratio >= 1.5);

            // Hand-written sentences: negation and "but" as documented in builtin/tasks.cpp.
            const std::vector<std::pair<std::string, bool>> cases = {
                    {"the movie was good", true},
                    {"the movie was not good", false},
                    {"the movie was not bad", true},
                    {"the film is never boring", true},
                    {"the acting was great but the plot was awful", false},
                    {"the plot was awful but the acting was great", true},
                    {"not a very good film", false},
                    {"this story is really excellent and the music was wonderful", true},
            };
            for (const auto& [text, positive] : cases) {
                INFO(text);
                CHECK(independentLabel(text) == positive);
                CHECK((model->forward(model->encodeText(text))->classProbabilities()[1] > 0.5f) == positive);
            }
        }
    }
}

}  // namespace test_builtin_tasks
