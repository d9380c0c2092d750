// ModernBERT against the independent reference in tests/support (reference_encoders.cpp): local
// layers with a window smaller than the input, both rotary bases, the classifier and MLM heads.
#include "attnscope/runtime/error.h"
#include "family_checks.h"
#include "fixtures_encoders.h"

#include <cmath>

namespace test_modernbert {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

const std::vector<long long> kIds = {2, 17, 0, 49, 22, 5, 5, 11, 30};

// Loads the checkpoint, runs kIds (with `attend`) and compares the maps and the final states.
std::shared_ptr<const Trace> checkModernBert(const ModernBertSpec& spec, const Checkpoint& c, const std::string& name,
                                             const std::vector<int>& attend = {}) {
    auto model = writeAndLoad(c, name);
    TextInput in{ids64(kIds), {}, {}};
    for (int a : attend) in.attend.push_back(static_cast<std::uint8_t>(a));
    auto trace = model->forwardText(in);
    const ModernBertReference ref = referenceModernBert(c, spec, kIds, attend);
    const double diff = maxMapDiff(*trace, ref.base);
    INFO(name << ": max |map - reference| " << diff);
    CHECK(diff < 1e-5);  // float32 through four pre-norm layers, as the other rotary families
    return trace;
}

}  // namespace

TEST_CASE("ModernBERT: local layers see |i - j| <= local_attention / 2, both rope bases", "[modernbert]") {
    ModernBertSpec spec;
    const Checkpoint c = makeModernBert(spec, 3);
    auto trace = checkModernBert(spec, c, "modernbert-plain");
    const ModernBertReference ref = referenceModernBert(c, spec, kIds);
    const int E = spec.hidden;
    REQUIRE(trace->finalHiddenWidth() == E);
    double worst = 0;
    for (std::size_t t = 0; t < kIds.size(); ++t)
        for (int e = 0; e < E; ++e)
            worst = std::max(worst, std::abs(trace->finalHidden()[t * E + e] - ref.base.hidden[t][e]));
    CHECK(worst < 2e-5);
    CHECK_FALSE(trace->blocks()[0].causal);
    for (int l = 0; l < 4; ++l) {
        const HeadMap m = trace->map(0, l, 1);
        const bool local = l == 1 || l == 2;
        CHECK((m.at(6, 3) == 0.0f) == local);  // |6 - 3| = 3 > 2: outside the window
        CHECK(m.at(6, 4) > 0.0f);              // |6 - 4| = 2: inside
    }

    // The rope bases matter: swapping them gives other maps (the reference would not agree).
    ModernBertSpec swapped = spec;
    std::swap(swapped.globalTheta, swapped.localTheta);
    CHECK(maxMapDiff(*trace, referenceModernBert(c, swapped, kIds).base) > 1e-3);
}

TEST_CASE("ModernBERT: rope_parameters and layer_types, biases, mean pooling over padding", "[modernbert]") {
    ModernBertSpec spec;
    spec.ropeParameters = true;
    spec.normBias = spec.attentionBias = spec.mlpBias = spec.classifierBias = true;
    spec.head = "classifier";
    spec.pooling = "mean";
    spec.activation = "gelu_pytorch_tanh";
    const Checkpoint c = makeModernBert(spec, 5);
    const std::vector<int> attend = {1, 1, 1, 1, 1, 1, 1, 0, 0};
    auto trace = checkModernBert(spec, c, "modernbert-classifier", attend);
    const std::vector<double> want = softmax(referenceModernBert(c, spec, kIds, attend).base.logits);
    REQUIRE(trace->classLabels() == std::vector<std::string>{"class0", "class1", "class2"});
    double worst = 0;
    for (std::size_t i = 0; i < want.size(); ++i)
        worst = std::max(worst, std::abs(trace->classProbabilities()[i] - want[i]));
    CHECK(worst < 1e-5);
    CHECK(trace->finalHidden().empty());

    spec.pooling = "cls";  // the same weights on [CLS]
    Checkpoint cls = c;
    cls.config["classifier_pooling"] = "cls";
    auto first = writeAndLoad(cls, "modernbert-cls")->forward(ids64(kIds));
    const std::vector<double> wantFirst = softmax(referenceModernBert(cls, spec, kIds).base.logits);
    CHECK(maxLogitDiff(first->classProbabilities(), wantFirst) < 1e-5);
}

TEST_CASE("ModernBERT: the masked-LM head's top predictions, tied and stored decoders", "[modernbert]") {
    for (const bool tied : {true, false}) {
        ModernBertSpec spec;
        spec.head = "mlm";
        spec.tied = tied;
        spec.decoderBias = !tied;
        const Checkpoint c = makeModernBert(spec, tied ? 7 : 8);
        auto trace = checkModernBert(spec, c, tied ? "modernbert-mlm-tied" : "modernbert-mlm");
        const ModernBertReference ref = referenceModernBert(c, spec, kIds);
        const TokenPredictions& p = trace->tokenPredictions();
        REQUIRE(p.k == 5);
        REQUIRE(p.ids.size() == kIds.size() * 5);
        CHECK(trace->finalHidden().size() == kIds.size() * spec.hidden);
        for (std::size_t t = 0; t < kIds.size(); ++t) {
            const std::vector<double> probs = softmax(ref.mlm[t]);
            std::vector<int> order(probs.size());
            for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
            std::sort(order.begin(), order.end(), [&](int a, int b) { return probs[a] > probs[b]; });
            for (int r = 0; r < 5; ++r) {
                INFO("position " << t << " rank " << r);
                CHECK(p.ids[t * 5 + r] == order[r]);
                CHECK(std::abs(p.probabilities[t * 5 + r] - probs[order[r]]) < 1e-5);
            }
        }
    }
}

TEST_CASE("ModernBERT: bad configs and tensors are errors naming the file and field", "[modernbert]") {
    ModernBertSpec spec;
    const Checkpoint good = makeModernBert(spec, 9);
    auto error = [&](const std::string& key, const nlohmann::json& value) {
        Checkpoint c = good;
        c.config[key] = value;
        return writeAndLoadError(c, "modernbert-bad");
    };
    CHECK_THAT(error("classifier_pooling", "max"),
               Catch::Contains("config.json: 'classifier_pooling' 'max' is not supported (cls, mean)"));
    CHECK_THAT(error("global_attn_every_n_layers", 0),
               Catch::Contains("'global_attn_every_n_layers' must be between 1"));
    CHECK_THAT(error("num_attention_heads", 5),
               Catch::Contains("'num_attention_heads' (5) must divide the hidden size"));
    CHECK_THAT(error("layer_types", nlohmann::json::array({"full_attention"})),
               Catch::Contains("'layer_types' must list one type per layer (4)"));
    CHECK_THAT(error("layer_types", nlohmann::json::array({"full_attention", "chunked_attention", "x", "y"})),
               Catch::Contains("'layer_types' \"chunked_attention\" is not supported"));
    CHECK_THAT(error("rope_parameters", {{"sliding_attention", {{"rope_type", "linear"}, {"factor", 2}}}}),
               Catch::Contains("'rope_parameters.sliding_attention.rope_type' \"linear\" is not supported (default)"));
    CHECK_THAT(error("rope_parameters", {{"full_attention", {{"rope_theta", -1}}}}),
               Catch::Contains("'rope_parameters.full_attention.rope_theta' must be a positive number"));
    CHECK_THAT(error("local_rope_theta", "ten"), Catch::Contains("'local_rope_theta' must be a number"));
    CHECK_THAT(error("norm_bias", true),
               Catch::Contains("embeddings.norm.bias"));  // the config wants biases the file lacks

    Checkpoint missing = good;
    missing.tensors.erase("layers.2.attn_norm.weight");
    CHECK_THAT(writeAndLoadError(missing, "modernbert-missing"), Catch::Contains("layers.2.attn_norm.weight"));
    Checkpoint wrong = good;
    std::mt19937 rng(1);
    wrong.tensors["layers.1.attn.Wqkv.weight"] = randomTensor({48, 24}, rng, 0.1f);
    CHECK_THAT(writeAndLoadError(wrong, "modernbert-shape"), Catch::Contains("layers.1.attn.Wqkv.weight"));

    auto model = writeAndLoad(good, "modernbert-input");
    CHECK_THROWS_WITH(model->forwardText(TextInput{{1, 2}, {0, 1}, {}}),
                      Catch::Contains("modernbert models have no token types"));
    CHECK_THROWS_WITH(model->forwardText(TextInput{{1, 2}, {}, {0, 0}}), Catch::Contains("every token is padding"));
    CHECK_THROWS_WITH(model->forward(std::vector<std::int64_t>(65, 1)), Catch::Contains("65 tokens"));
}

}  // namespace test_modernbert
