// The neuron view's numbers (analysis/neuron.h) for the other families: rotary and grouped-query
// attention (Llama), padding (BERT), a soft-cap and windows (Gemma-2), ALiBi (BLOOM), T5's
// position bias in all three blocks. The logits they build are the ones behind each family's
// independent reference map (log-probability differences), their softmax the Trace's row.
#include "attnscope/analysis/neuron.h"
#include "family_checks.h"
#include "fixtures_alibi.h"
#include "fixtures_gemma.h"
#include "neuron_checks.h"
#include "seq2seq_checks.h"

namespace test_neuron_families {

using namespace attnscope;
using namespace attnscope::testing;

namespace {
const std::vector<long long>& kIds = kNeuronIds;
}  // namespace

TEST_CASE("neuron view on Llama (rotary, grouped-query) and BERT (padding mask)", "[neuron]") {
    LlamaSpec spec;
    const Checkpoint c = makeLlama(spec, 7);
    auto trace = writeAndLoad(c, "neuron-llama")->forward(ids64(kIds));
    const Reference ref = referenceLlama(c, spec, kIds);
    for (int l = 0; l < spec.layers; ++l)
        for (int h = 0; h < spec.heads; ++h) requireWorst(checkHead(*trace, 0, l, h, ref.probs[l][h]), "llama");
    CHECK(neuronRow(*trace, 0, 0, 3, 2).kvGroup == 1);

    BertSpec bspec;
    const Checkpoint b = makeBert(bspec, 5);
    const std::vector<long long> ids = {2, 14, 7, 33, 9, 1, 1};
    const std::vector<int> attend = {1, 1, 1, 1, 1, 0, 0};
    TextInput in;
    in.ids = ids64(ids);
    in.attend = {1, 1, 1, 1, 1, 0, 0};
    auto btrace = writeAndLoad(b, "neuron-bert")->forwardText(in);
    const Reference bref = referenceBert(b, bspec, ids, {}, attend);
    for (int l = 0; l < bspec.layers; ++l)
        for (int h = 0; h < bspec.heads; ++h) requireWorst(checkHead(*btrace, 0, l, h, bref.probs[l][h]), "bert");
    const NeuronRow row = neuronRow(*btrace, 0, 1, 0, 2);
    CHECK(!row.allowed[5]);
    CHECK(row.weights[6] == 0.0);
}

TEST_CASE("neuron view with a soft-cap and windows (Gemma-2), ALiBi (BLOOM), position bias (T5)", "[neuron]") {
    RmsFamilySpec g;
    g.type = "gemma2";
    g.attnSoftcap = 1.5;
    g.window = 3;
    const Checkpoint gc = makeRmsFamily(g, 31);
    auto gtrace = writeAndLoad(gc, "neuron-gemma2")->forward(ids64(kIds));
    const Reference gref = referenceRmsFamily(gc, g, kIds);
    for (int l = 0; l < g.layers; ++l)
        for (int h = 0; h < g.heads; ++h) requireWorst(checkHead(*gtrace, 0, l, h, gref.probs[l][h]), "gemma2");
    const NeuronRow capped = neuronRow(*gtrace, 0, 0, 1, 8);
    CHECK(capped.softcap == 1.5);
    CHECK_THAT(capped.extras, Catch::Contains("soft-cap"));
    CHECK(!capped.allowed[5]);  // window 3: keys 6, 7, 8 only
    CHECK(capped.allowed[6]);
    for (double v : capped.logits) CHECK(std::abs(v) <= 1.5);

    BloomSpec bs;
    const Checkpoint bc = makeBloom(bs, 3);
    auto btrace = writeAndLoad(bc, "neuron-bloom")->forward(ids64(kIds));
    const Reference bref = referenceBloom(bc, bs, kIds);
    for (int l = 0; l < bs.layers; ++l)
        for (int h = 0; h < bs.heads; ++h) requireWorst(checkHead(*btrace, 0, l, h, bref.probs[l][h]), "bloom");
    CHECK_THAT(neuronRow(*btrace, 0, 0, 0, 4).extras, Catch::Contains("ALiBi"));

    T5Spec ts;
    const Checkpoint tc = makeT5(ts, 31);
    const std::vector<long long> source = {3, 17, 5, 39, 22, 5, 11, 30}, target = {0, 12, 7, 33, 2};
    auto ttrace = forced(*writeAndLoad(tc, "neuron-t5"), source, target);
    const Seq2seqReference tref = referenceT5(tc, ts, source, target);
    const std::vector<std::pair<std::string, const std::vector<std::vector<std::vector<double>>>*>> blocks = {
            {"encoder", &tref.encoder}, {"decoder", &tref.decoder}, {"cross", &tref.cross}};
    for (const auto& [name, probs] : blocks) {
        const int b = ttrace->blockIndex(name);
        for (int l = 0; l < ttrace->blocks()[b].layers; ++l)
            for (int h = 0; h < ts.heads; ++h) requireWorst(checkHead(*ttrace, b, l, h, (*probs)[l][h]), "t5 " + name);
    }
    CHECK(neuronRow(*ttrace, ttrace->blockIndex("encoder"), 0, 0, 0).scale == 1.0);
    CHECK_THAT(neuronRow(*ttrace, ttrace->blockIndex("encoder"), 0, 0, 0).extras, Catch::Contains("position bias"));
}

}  // namespace test_neuron_families
