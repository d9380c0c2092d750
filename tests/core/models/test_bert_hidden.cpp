// Encoders without a task head: the Trace's final hidden states against the double-precision
// BERT reference, and the "hidden" output change (cosine distance) of interventions on them.
#include "attnscope/lab/interventions.h"
#include "family_checks.h"

#include <cmath>

namespace test_bert_hidden {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

const std::vector<long long> kIds = {2, 17, 0, 49, 22, 5, 5, 11, 30};

// Largest |finalHidden - reference| over every token and feature.
double maxHiddenDiff(const Trace& trace, const std::vector<std::vector<double>>& want) {
    const int w = trace.finalHiddenWidth();
    REQUIRE(trace.finalHidden().size() == want.size() * static_cast<std::size_t>(w));
    double worst = 0;
    for (std::size_t t = 0; t < want.size(); ++t) {
        REQUIRE(want[t].size() == static_cast<std::size_t>(w));
        for (int e = 0; e < w; ++e) worst = std::max(worst, std::abs(trace.finalHidden()[t * w + e] - want[t][e]));
    }
    return worst;
}

// 1 - cos(a_t, b_t) per token, in double, from two reference forwards.
std::vector<double> cosineDistances(const std::vector<std::vector<double>>& a,
                                    const std::vector<std::vector<double>>& b) {
    std::vector<double> out;
    for (std::size_t t = 0; t < a.size(); ++t) {
        double dot = 0, na = 0, nb = 0;
        for (std::size_t e = 0; e < a[t].size(); ++e) {
            dot += a[t][e] * b[t][e];
            na += a[t][e] * a[t][e];
            nb += b[t][e] * b[t][e];
        }
        out.push_back(1.0 - dot / std::sqrt(na * nb));
    }
    return out;
}

RunOptions masking(std::vector<std::pair<int, int>> heads) {
    RunOptions o;
    for (const auto& [l, h] : heads) o.maskHeads.push_back({"", l, h});
    return o;
}

}  // namespace

TEST_CASE("BERT family: final hidden states equal an independent computation", "[bert][hidden]") {
    for (const std::string type : {"bert", "roberta", "distilbert"}) {
        BertSpec spec;
        spec.type = type;
        if (type == "roberta") spec.typeVocab = 1;
        const Checkpoint c = makeBert(spec, 11);
        auto model = writeAndLoad(c, "hidden-" + type);
        const std::vector<int> attend = {1, 1, 1, 1, 1, 1, 1, 0, 0};
        TextInput in{ids64(kIds), {}, {1, 1, 1, 1, 1, 1, 1, 0, 0}};
        auto trace = model->forwardText(in);
        CHECK(trace->nextTokenLogits().empty());
        CHECK(trace->classProbabilities().empty());
        REQUIRE(trace->finalHiddenWidth() == spec.hidden);
        const double diff = maxHiddenDiff(*trace, referenceBert(c, spec, kIds, {}, attend).hidden);
        INFO(type << ": max |final hidden - reference| " << diff);
        CHECK(diff < 1e-5);
        // With heads masked, too.
        auto masked = model->rerun(*trace, masking({{0, 1}, {1, 2}}));
        const double maskedDiff =
                maxHiddenDiff(*masked, referenceBert(c, spec, kIds, {}, attend, {{0, 1}, {1, 2}}).hidden);
        INFO(type << " masked: max |final hidden - reference| " << maskedDiff);
        CHECK(maskedDiff < 1e-5);
    }
}

TEST_CASE("Models with another output record no final hidden states", "[hidden]") {
    auto model = writeAndLoad(makeLlama(LlamaSpec{}, 2), "hidden-llama");
    auto trace = model->forward({3, 4, 5});
    CHECK(trace->finalHiddenWidth() == 0);
    CHECK(trace->finalHidden().empty());
}

TEST_CASE("BERT: masking a head reports the cosine distance of the final hidden states", "[bert][hidden]") {
    BertSpec spec;
    const Checkpoint c = makeBert(spec, 12);
    auto model = writeAndLoad(c, "hidden-mask");
    auto original = model->forward(ids64(kIds));
    const Rerun r = rerun(*model, *original, masking({{0, 1}}));
    const OutputChange& ch = r.change;
    REQUIRE(ch.kind == "hidden");
    const auto want =
            cosineDistances(referenceBert(c, spec, kIds).hidden, referenceBert(c, spec, kIds, {}, {}, {{0, 1}}).hidden);
    REQUIRE(ch.cosineDistances.size() == want.size());
    double mean = 0;
    std::size_t most = 0;
    for (std::size_t t = 0; t < want.size(); ++t) {
        INFO("token " << t);
        CHECK(ch.cosineDistances[t] == Approx(want[t]).margin(1e-5));
        mean += want[t] / want.size();
        if (want[t] > want[most]) most = t;
    }
    INFO("mean cosine distance " << ch.meanCosineDistance << " (reference " << mean << "), max "
                                 << ch.maxCosineDistance);
    CHECK(mean > 1e-3);  // the intervention changes something the test can see
    CHECK(ch.meanCosineDistance == Approx(mean).margin(1e-5));
    CHECK(ch.magnitude() == ch.meanCosineDistance);
    CHECK(ch.maxCosineDistance == Approx(want[most]).margin(1e-5));
    CHECK(ch.mostChangedToken == static_cast<int>(most));
    CHECK(ch.mostChangedLabel == original->displayTokens()[most]);
    CHECK_FALSE(ch.sameTop);
    CHECK(ch.kl == 0);

    // No change: the same run, or a re-run without interventions, is exactly 0.
    for (const OutputChange& same :
         {compareOutputs(*original, *original), rerun(*model, *original, RunOptions{}).change}) {
        CHECK(same.kind == "hidden");
        CHECK(same.meanCosineDistance == 0);
        CHECK(same.maxCosineDistance == 0);
        CHECK(same.magnitude() == 0);
        CHECK(same.sameTop);
    }

    // Hidden states of another width cannot be compared.
    BertSpec wide;
    wide.hidden = 30;
    auto other = writeAndLoad(makeBert(wide, 12), "hidden-wide")->forward(ids64(kIds));
    CHECK_THROWS_WITH(compareOutputs(*original, *other), Catch::Contains("hidden states of different models"));
}

TEST_CASE("BERT: pruning by output change ranks heads by the hidden-state change", "[bert][hidden]") {
    BertSpec spec;
    const Checkpoint c = makeBert(spec, 13);
    auto model = writeAndLoad(c, "hidden-prune");
    auto original = model->forward(ids64(kIds));
    const auto plain = referenceBert(c, spec, kIds).hidden;
    const auto ranking = rankHeads(*model, *original, Importance::OutputChange);
    REQUIRE(ranking.size() == static_cast<std::size_t>(spec.layers * spec.heads));
    for (std::size_t i = 0; i < ranking.size(); ++i) {
        const HeadRef& h = ranking[i].head;
        const auto d = cosineDistances(plain, referenceBert(c, spec, kIds, {}, {}, {{h.layer, h.head}}).hidden);
        double mean = 0;
        for (double v : d) mean += v / d.size();
        INFO("head " << h.layer << ":" << h.head);
        CHECK(ranking[i].score > 1e-4);
        CHECK(ranking[i].score == Approx(mean).margin(1e-5));
        if (i) CHECK(ranking[i - 1].score >= ranking[i].score);
    }
    const PruneResult p = pruneByImportance(*model, *original, Importance::OutputChange, 2);
    REQUIRE(p.masked.size() == 2);
    CHECK(p.masked[0].layer == ranking[0].head.layer);
    CHECK(p.masked[0].head == ranking[0].head.head);
    CHECK(p.masked[1].layer == ranking[1].head.layer);
    CHECK(p.masked[1].head == ranking[1].head.head);
    CHECK(p.change.kind == "hidden");
    CHECK(p.change.magnitude() > 0);
}

}  // namespace test_bert_hidden
