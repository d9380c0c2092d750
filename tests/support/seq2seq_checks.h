// What the T5 and BART-family tests share: run a written encoder-decoder checkpoint forced or
// greedy and measure every block against its double-precision reference (fixtures_seq2seq.h).
#pragma once

#include "family_checks.h"
#include "fixtures_seq2seq.h"

#include "attnscope/io/input.h"

namespace attnscope::testing {

// A rounded copy: what a checkpoint written in `dtype` holds.
inline Checkpoint roundedTo(Checkpoint c, const std::string& dtype) {
    roundTensors(c, dtype);
    return c;
}

inline RunOptions seq2seqOptions(const Seq2seqRun& r) {
    RunOptions o;
    o.temperature = r.temperature;
    o.temperatureLayers = r.temperatureLayers;
    for (const auto& m : r.maskHeads) o.maskHeads.push_back(HeadRef{m.block, m.layer, m.head});
    return o;
}

// Forced decoding: the decoder runs on `target` exactly.
inline std::shared_ptr<const Trace> forced(const Model& model, const std::vector<long long>& source,
                                           const std::vector<long long>& target, const Seq2seqRun& run = {}) {
    TextInput in;
    in.ids = ids64(source);
    in.targetIds = ids64(target);
    return model.forwardText(in, seq2seqOptions(run));
}

inline std::shared_ptr<const Trace> greedy(const Model& model, const std::vector<long long>& source, int maxNew,
                                           const Seq2seqRun& run = {}) {
    TextInput in;
    in.ids = ids64(source);
    in.maxNewTokens = maxNew;
    return model.forwardText(in, seq2seqOptions(run));
}

// Largest |map - reference| over one block's layers, heads, queries and keys.
inline double blockDiff(const Trace& trace, const std::string& name,
                        const std::vector<std::vector<std::vector<double>>>& ref) {
    const int b = trace.blockIndex(name);
    const BlockInfo& info = trace.blocks()[b];
    REQUIRE(static_cast<int>(ref.size()) == info.layers);
    double worst = 0;
    for (int l = 0; l < info.layers; ++l) {
        REQUIRE(static_cast<int>(ref[l].size()) == info.heads);
        for (int h = 0; h < info.heads; ++h) {
            const HeadMap m = trace.map(b, l, h);
            REQUIRE(m.values.size() == ref[l][h].size());
            for (std::size_t i = 0; i < m.values.size(); ++i)
                worst = std::max(worst, std::abs(m.values[i] - ref[l][h][i]));
        }
    }
    return worst;
}

struct Seq2seqAgreement {
    double encoder = 0, decoder = 0, cross = 0;
};

// Every map of the three blocks within 1e-5 of the reference and the per-row argmax equal to the
// reference's; returns the errors for reports.
inline Seq2seqAgreement requireSeq2seq(const Trace& trace, const Seq2seqReference& ref, const std::string& what) {
    Seq2seqAgreement a{blockDiff(trace, "encoder", ref.encoder), blockDiff(trace, "decoder", ref.decoder),
                       blockDiff(trace, "cross", ref.cross)};
    INFO(what << ": max |map - reference| encoder " << a.encoder << ", decoder " << a.decoder << ", cross " << a.cross);
    CHECK(a.encoder < 1e-5);
    CHECK(a.decoder < 1e-5);
    CHECK(a.cross < 1e-5);
    const auto want = ref.argmax();
    CHECK(std::vector<long long>(trace.outputIds().begin(), trace.outputIds().end()) == want);
    return a;
}

// Reference log-probabilities of the forced target: row i's log-softmax at rows[i + 1].
inline std::vector<double> referenceTargetLogProbs(const Seq2seqReference& ref, const std::vector<long long>& rows) {
    std::vector<double> out;
    for (std::size_t i = 0; i + 1 < rows.size(); ++i) {
        const auto& l = ref.logits[i];
        const double top = *std::max_element(l.begin(), l.end());
        double sum = 0;
        for (double v : l) sum += std::exp(v - top);
        out.push_back(l[static_cast<std::size_t>(rows[i + 1])] - top - std::log(sum));
    }
    return out;
}

// Largest |Trace::targetLogProbs - reference| (the sizes must agree).
inline double targetLogProbError(const Trace& trace, const Seq2seqReference& ref, const std::vector<long long>& rows) {
    const auto want = referenceTargetLogProbs(ref, rows);
    REQUIRE(trace.targetLogProbs().size() == want.size());
    double worst = 0;
    for (std::size_t i = 0; i < want.size(); ++i)
        worst = std::max(worst, std::abs(trace.targetLogProbs()[i] - want[i]));
    return worst;
}

}  // namespace attnscope::testing
