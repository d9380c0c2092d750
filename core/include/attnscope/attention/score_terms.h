// The score terms of a disentangled-attention encoder (DeBERTa v2 and v3) as a Trace records them
// when RunOptions::scoreTerms asks (Trace::Impl::scoreTerms), read with traceScoreTerms(). Apart
// from trace.h so that what never reads them does not depend on it.
#pragma once

#include <cstddef>
#include <vector>

namespace attnscope {

class Trace;
struct HeadMap;

// Per layer and head, the three terms whose sum is the score before the softmax and the mask
// (each already scaled by 1/√(d·scale_factor)):
//   c2c  q_i·k_j                    content to content
//   c2p  q_i·p^k_{δ(i,j)}           content to position
//   p2c  k_j·p^q_{δ(i,j)}           position to content (Hugging Face's index: δ of i − j)
// A term the configuration leaves out (pos_att_type) is recorded as zeros.
struct ScoreTerms {
    static constexpr int kTerms = 3;                   // c2c, c2p, p2c, in that order
    int layers = 0, heads = 0, queries = 0, keys = 0;  // layers == 0: not recorded
    std::vector<float> values;                         // [layers, heads, kTerms, queries, keys]

    bool empty() const { return layers == 0; }
    const float* term(int layer, int head, int which) const {
        return values.data() + ((static_cast<std::size_t>(layer) * heads + head) * kTerms + which) * queries * keys;
    }
};

// The names of the terms in ScoreTerms' order: "c2c", "c2p", "p2c".
const char* scoreTermName(int which);

// The trace's score terms; empty unless the model is DeBERTa v2/v3 (ModelInfo::scoreTerms) and
// RunOptions::scoreTerms was set.
const ScoreTerms& traceScoreTerms(const Trace& trace);

// One head's term `which` (0 c2c, 1 c2p, 2 p2c) as a [queries, keys] map of the trace's first block
// (the only one of the encoders that record terms). Throws attnscope::Error naming what is missing:
// no terms recorded, another block, or a layer, head or term out of range.
HeadMap scoreTermMap(const Trace& trace, int which, int block, int layer, int head);

}  // namespace attnscope
