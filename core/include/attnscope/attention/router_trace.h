// The routers of a mixture-of-experts decoder as a Trace records them (Trace::Impl::router),
// read with traceRouter(). Apart from trace.h so that what never reads routers does not depend on it.
#pragma once

#include <cstddef>
#include <vector>

namespace attnscope {

class Trace;

// The routers of a mixture-of-experts decoder (Mixtral, Qwen2-MoE, OLMoE), one per layer with
// experts: what each token's router gave every expert, and which experts it chose.
struct RouterTrace {
    int layers = 0, tokens = 0, experts = 0, topK = 0;  // experts == 0: the model has no routers
    // [layers, tokens, experts]: the softmax over all experts in float32, before the top-k and any
    // renormalisation; NaN rows for the layers without a router (Qwen2-MoE's dense layers).
    std::vector<float> probabilities;
    // [layers, tokens, topK]: the chosen experts, most probable first; -1 on layers without a router.
    std::vector<int> chosen;

    bool empty() const { return experts == 0; }
    bool routed(int layer) const { return chosen[static_cast<std::size_t>(layer) * tokens * topK] >= 0; }
    float probability(int layer, int token, int expert) const {
        return probabilities[(static_cast<std::size_t>(layer) * tokens + token) * experts + expert];
    }
    int choice(int layer, int token, int rank) const {
        return chosen[(static_cast<std::size_t>(layer) * tokens + token) * topK + rank];
    }
};

// The trace's routers (Mixtral, Qwen2-MoE, OLMoE); empty for every other model.
const RouterTrace& traceRouter(const Trace& trace);

}  // namespace attnscope
