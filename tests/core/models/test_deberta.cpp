// DeBERTa v2/v3 against the independent reference in tests/support (reference_deberta.cpp): the
// v2 layout (convolution after layer 0, unbucketed and clamped positions, embed_proj, absolute
// positions, token types, padding), the v3 one (log buckets, shared keys, normed relative
// embeddings, classifier), each term alone, no relative attention; the score terms the Trace
// records; bad configs.
#include "attnscope/analysis/map_source.h"
#include "attnscope/attention/score_terms.h"
#include "attnscope/runtime/error.h"
#include "family_checks.h"
#include "fixtures_deberta.h"

#include <cmath>

namespace test_deberta {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

const std::vector<long long> kIds = {2, 17, 0, 49, 22, 5, 5, 11, 30};

bool real(const std::vector<int>& attend, std::size_t i) { return attend.empty() || attend[i] != 0; }

struct Run {
    std::shared_ptr<const Trace> trace;
    DebertaReference ref;
};

// Loads the checkpoint, runs kIds (with types and padding) and compares the maps, the final
// states and the class probabilities on the real rows (HF's padding rows are zeros by XSoftmax).
Run checkDeberta(const DebertaSpec& spec, const Checkpoint& c, const std::string& name,
                 const std::vector<long long>& types = {}, const std::vector<int>& attend = {}) {
    auto model = writeAndLoad(c, name);
    TextInput in{ids64(kIds), ids64(types), {}};
    for (int a : attend) in.attend.push_back(static_cast<std::uint8_t>(a));
    RunOptions options;
    options.scoreTerms = true;
    Run run{model->forwardText(in, options), referenceDeberta(c, spec, kIds, types, attend)};
    const std::size_t n = kIds.size();
    double maps = 0, hidden = 0;
    for (int l = 0; l < spec.layers; ++l)
        for (int h = 0; h < spec.heads; ++h) {
            const HeadMap m = run.trace->map(0, l, h);
            for (std::size_t i = 0; i < n; ++i)
                for (std::size_t j = 0; real(attend, i) && j < n; ++j)
                    maps = std::max(maps, std::abs(m.values[i * n + j] - run.ref.base.probs[l][h][i * n + j]));
        }
    const auto E = static_cast<std::size_t>(spec.hidden);
    if (spec.labels == 0) {
        REQUIRE(run.trace->finalHidden().size() == n * E);
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t e = 0; real(attend, i) && e < E; ++e)
                hidden = std::max(hidden, std::abs(run.trace->finalHidden()[i * E + e] - run.ref.base.hidden[i][e]));
    } else {
        CHECK(maxLogitDiff(run.trace->classProbabilities(), softmax(run.ref.base.logits)) < 1e-5);
    }
    INFO(name << ": max |map - reference| " << maps << ", max |hidden - reference| " << hidden);
    CHECK(maps < 1e-5);
    CHECK(hidden < 2e-5);
    return run;
}

// Largest |recorded term - reference| and |softmax(c2c + c2p + p2c) - map| over the real rows.
std::pair<double, double> termDiffs(const Run& run, const std::vector<int>& attend = {}) {
    const ScoreTerms& t = traceScoreTerms(*run.trace);
    const int n = t.queries;
    double terms = 0, sums = 0;
    for (int l = 0; l < t.layers; ++l)
        for (int h = 0; h < t.heads; ++h) {
            for (int w = 0; w < ScoreTerms::kTerms; ++w)
                for (int a = 0; a < n * n; ++a)  // padding rows' states differ from HF's from layer 1 on
                    if (real(attend, static_cast<std::size_t>(a / n)) && real(attend, static_cast<std::size_t>(a % n)))
                        terms = std::max(terms, std::abs(t.term(l, h, w)[a] - run.ref.terms[l][h][w][a]));
            const HeadMap m = run.trace->map(0, l, h);
            for (int i = 0; i < n; ++i) {
                if (!real(attend, static_cast<std::size_t>(i))) continue;
                std::vector<double> row;
                for (int j = 0; j < n; ++j) {
                    double s = 0;
                    for (int w = 0; w < ScoreTerms::kTerms; ++w) s += t.term(l, h, w)[i * n + j];
                    row.push_back(real(attend, static_cast<std::size_t>(j)) ? s : -1e300);
                }
                const std::vector<double> p = softmax(row);
                for (int j = 0; j < n; ++j) sums = std::max(sums, std::abs(p[j] - m.values[i * n + j]));
            }
        }
    return {terms, sums};
}

}  // namespace

TEST_CASE("DeBERTa v2: convolution after layer 0, clamped positions, embed_proj, positions, types, padding",
          "[deberta]") {
    DebertaSpec spec;
    spec.convKernel = 3;
    spec.convAct = "gelu";
    spec.maxRelative = 4;  // span 4: the 9 tokens' distances beyond ±4 clamp to the table's ends
    spec.posAttString = true;
    spec.positionBiased = true;
    spec.typeVocab = 2;
    spec.embedding = 16;
    spec.layers = 3;
    const Checkpoint c = makeDeberta(spec, 3);
    const std::vector<long long> types = {0, 0, 0, 0, 1, 1, 1, 1, 1};
    const std::vector<int> attend = {1, 1, 1, 1, 1, 1, 1, 0, 0};
    const Run run = checkDeberta(spec, c, "deberta-v2-conv", types, attend);
    const auto [terms, sums] = termDiffs(run, attend);
    CHECK(terms < 1e-5);
    CHECK(sums < 1e-5);

    // The convolution and the clamp matter: without them the reference disagrees.
    DebertaSpec plain = spec;
    plain.convKernel = 0;
    CHECK(referenceDeberta(c, plain, kIds, types, attend).base.hidden[3][0] != run.ref.base.hidden[3][0]);
    checkDeberta(spec, c, "deberta-v2-conv-full");  // no padding
    spec.convGroups = 2;                            // grouped convolution
    checkDeberta(spec, makeDeberta(spec, 4), "deberta-v2-conv-groups", types, attend);
}

TEST_CASE("DeBERTa v3: log buckets, shared keys, normed relative embeddings, the classifier", "[deberta]") {
    DebertaSpec spec;
    spec.buckets = 6;  // mid 3: distances beyond ±3 go to log buckets (of up to max_relative_positions 24)
    spec.maxRelative = 24;
    spec.shareKey = true;
    spec.normRel = true;
    spec.labels = 3;
    const Checkpoint c = makeDeberta(spec, 5);
    const Run run = checkDeberta(spec, c, "deberta-v3-cls");
    REQUIRE(run.trace->classLabels() == std::vector<std::string>{"class0", "class1", "class2"});
    CHECK(run.trace->finalHidden().empty());
    const auto [terms, sums] = termDiffs(run);
    CHECK(terms < 1e-5);
    CHECK(sums < 1e-5);
    // The buckets are used: a distance of 8 falls in a log bucket, not its own.
    CHECK(debertaBucket(8, 6, 24) != 8);
    CHECK(debertaBucket(-8, 6, 24) == -debertaBucket(8, 6, 24));
    CHECK(debertaBucket(3, 6, 24) == 3);

    spec.labels = 0;  // the bare encoder with the same layout, unshared keys, the bucket table of a real config
    spec.shareKey = false;
    spec.buckets = 256;
    spec.maxRelative = 512;
    spec.positions = 512;
    checkDeberta(spec, makeDeberta(spec, 6), "deberta-v3-256");
}

TEST_CASE("DeBERTa: each term alone, shared and not, and no relative attention", "[deberta]") {
    for (const bool share : {false, true})
        for (const char* only : {"c2p", "p2c"}) {
            DebertaSpec spec;
            spec.posAtt = {only};
            spec.shareKey = share;
            spec.buckets = 4;
            spec.maxRelative = 16;
            const Run run = checkDeberta(spec, makeDeberta(spec, share ? 7 : 8),
                                         std::string("deberta-") + only + (share ? "-shared" : ""));
            const ScoreTerms& t = traceScoreTerms(*run.trace);
            const int missing = std::string(only) == "c2p" ? 2 : 1, present = 3 - missing;
            double zero = 0, nonzero = 0;
            for (int a = 0; a < t.queries * t.keys; ++a) {
                zero = std::max(zero, static_cast<double>(std::abs(t.term(1, 2, missing)[a])));
                nonzero = std::max(nonzero, static_cast<double>(std::abs(t.term(1, 2, present)[a])));
            }
            CHECK(zero == 0.0);
            CHECK(nonzero > 1e-3);
            CHECK(termDiffs(run).first < 1e-5);
        }
    DebertaSpec none;  // pos_att_type still sets the scale factor; no relative tables
    none.relative = false;
    const Run run = checkDeberta(none, makeDeberta(none, 9), "deberta-no-relative");
    CHECK(termDiffs(run).first < 1e-5);
    // A plain forward records no terms.
    CHECK(traceScoreTerms(*writeAndLoad(makeDeberta(none, 9), "deberta-plain")->forward(ids64(kIds))).empty());
}

TEST_CASE("DeBERTa: bad configs and tensors are errors naming the file and field", "[deberta]") {
    DebertaSpec spec;
    spec.convKernel = 3;
    const Checkpoint good = makeDeberta(spec, 10);
    auto error = [&](const std::string& key, const nlohmann::json& value) {
        Checkpoint c = good;
        c.config[key] = value;
        return writeAndLoadError(c, "deberta-bad");
    };
    CHECK_THAT(error("pos_att_type", "p2c|c2x"),
               Catch::Contains("config.json: 'pos_att_type' 'c2x' is not supported (c2p, p2c)"));
    CHECK_THAT(error("pos_att_type", 3), Catch::Contains("'pos_att_type' must be a string"));
    CHECK_THAT(error("norm_rel_ebd", "batch_norm"), Catch::Contains("'norm_rel_ebd' 'batch_norm' is not supported"));
    CHECK_THAT(error("conv_kernel_size", 2), Catch::Contains("'conv_kernel_size' must be odd"));
    CHECK_THAT(error("conv_act", "swish"), Catch::Contains("'conv_act' 'swish' is not supported"));
    CHECK_THAT(error("position_buckets", "many"), Catch::Contains("'position_buckets' must be an integer"));
    CHECK_THAT(error("position_buckets", 200), Catch::Contains("'position_buckets' (200) must be below"));
    CHECK_THAT(error("num_attention_heads", 5), Catch::Contains("'num_attention_heads' (5) must divide"));
    CHECK_THAT(error("pooler_hidden_size", 12), Catch::Contains("'pooler_hidden_size' must equal hidden_size"));
    CHECK_THAT(error("hidden_act", "mish"), Catch::Contains("'hidden_act' 'mish' is not supported"));
    CHECK_THAT(error("share_att_key", "yes"), Catch::Contains("'share_att_key'"));
    CHECK_THAT(error("max_relative_positions", 8), Catch::Contains("encoder.rel_embeddings.weight"));

    Checkpoint missing = good;
    missing.tensors.erase("encoder.layer.1.attention.self.pos_query_proj.weight");
    CHECK_THAT(writeAndLoadError(missing, "deberta-missing"),
               Catch::Contains("encoder.layer.1.attention.self.pos_query_proj.weight"));
    Checkpoint conv = good;
    conv.tensors.erase("encoder.conv.LayerNorm.bias");
    CHECK_THAT(writeAndLoadError(conv, "deberta-missing-conv"), Catch::Contains("encoder.conv.LayerNorm.bias"));

    auto model = writeAndLoad(good, "deberta-input");
    CHECK_THROWS_WITH(model->forwardText(TextInput{{1, 2}, {0, 1}, {}}), Catch::Contains("no token types"));
    CHECK_THROWS_WITH(model->forwardText(TextInput{{1, 2}, {}, {0, 0}}), Catch::Contains("every token is padding"));
    CHECK_THROWS_WITH(model->forward(std::vector<std::int64_t>(65, 1)), Catch::Contains("65 tokens"));
}

TEST_CASE("DeBERTa: the score terms as map sources, against the reference", "[deberta][sources]") {
    DebertaSpec spec;
    spec.buckets = 4;
    spec.maxRelative = 16;
    const Checkpoint c = makeDeberta(spec, 11);
    auto model = writeAndLoad(c, "deberta-sources");
    CHECK(model->info().scoreTerms);
    RunOptions options;
    options.scoreTerms = true;
    const auto trace = model->forward(ids64(kIds), options);
    const DebertaReference ref = referenceDeberta(c, spec, kIds);
    const MapSource sources[] = {MapSource::ScoreC2C, MapSource::ScoreC2P, MapSource::ScoreP2C};
    double worst = 0;
    for (int w = 0; w < ScoreTerms::kTerms; ++w) {
        REQUIRE(parseMapSource(std::string("score-") + scoreTermName(w)) == sources[w]);
        CHECK(perHeadSource(sources[w]));
        CHECK(signedSource(sources[w]));
        CHECK(sourceNeedsTerms(sources[w]));
        CHECK_FALSE(sourceNeedsValues(sources[w]));
        for (int l = 0; l < spec.layers; ++l)
            for (int h = 0; h < spec.heads; ++h) {
                const HeadMap m = sourceMap(*trace, sources[w], 0, l, h);
                REQUIRE(m.values.size() == kIds.size() * kIds.size());
                for (std::size_t a = 0; a < m.values.size(); ++a)
                    worst = std::max(worst, std::abs(m.values[a] - ref.terms[l][h][w][a]));
            }
    }
    INFO("max |source map - reference term| " << worst);
    CHECK(worst < 1e-5);
    CHECK_THROWS_WITH(sourceMap(*trace, MapSource::ScoreC2P, 0, spec.layers, 0), Catch::Contains("out of range"));
    // A forward without RunOptions::scoreTerms, and a model without the terms, say what is missing.
    CHECK_THROWS_WITH(sourceMap(*model->forward(ids64(kIds)), MapSource::ScoreC2C, 0, 0, 0),
                      Catch::Contains("recorded no score terms"));
    auto bert = writeAndLoad(makeBert(BertSpec{}, 3), "bert-no-terms");
    CHECK_FALSE(bert->info().scoreTerms);
    CHECK(traceScoreTerms(*bert->forward(ids64({2, 5, 7}), options)).empty());
}

}  // namespace test_deberta
