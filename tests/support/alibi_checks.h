// What the OPT, BLOOM and Falcon tests share: run a written checkpoint and measure it against
// its double-precision reference (fixtures_alibi.h), with the reference's run options.
#pragma once

#include "family_checks.h"
#include "fixtures_alibi.h"

namespace attnscope::testing {

inline RunOptions runOptions(const AlibiFamilyRun& r) {
    RunOptions o;
    o.temperature = r.temperature;
    o.temperatureLayers = r.temperatureLayers;
    for (const auto& [layer, head] : r.maskHeads) o.maskHeads.push_back(HeadRef{"self", layer, head});
    return o;
}

struct Agreement {
    double maps = 0, logits = 0;  // largest |model - reference| over every map entry / next-token logit
};

inline Agreement agreement(const Model& model, const Reference& ref, const std::vector<long long>& ids,
                           const AlibiFamilyRun& run = {}) {
    auto trace = model.forward(ids64(ids), runOptions(run));
    return {maxMapDiff(*trace, ref), maxLogitDiff(trace->nextTokenLogits(), ref.logits)};
}

// Every map entry a Trace holds within 1e-5 of the reference (the bound) and the
// next-token logits within 1e-4; `what` names the case in the failure message.
inline void requireAgreement(const Agreement& a, const std::string& what) {
    INFO(what << ": max |map - reference| " << a.maps << ", max |logit - reference| " << a.logits);
    CHECK(a.maps < 1e-5);
    CHECK(a.logits < 1e-4);
}

// A rounded copy: what a checkpoint written in `dtype` holds.
inline Checkpoint rounded(Checkpoint c, const std::string& dtype) {
    roundTensors(c, dtype);
    return c;
}

}  // namespace attnscope::testing
