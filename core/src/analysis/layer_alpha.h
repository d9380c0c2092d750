// One layer's attention weights α as the value and ALTI sources read them, a block of query rows
// at a time (analysis/value_norm.cpp, analysis/alti.cpp).
//
// Dot layers (every pretrained family) are scored block by block exactly as Trace::map scores
// them (blockProbs, with AVX-512 key panels where those run): no [H, n, m] tensor. Every other
// kind (the built-in additive and linear layers, the sparse and hybrid variants) reads rows of
// each head's whole map from Trace::map's own computation, made once per layer: those layers run
// on the built-in models' short inputs only.
#pragma once

#include "attention/blocked_attention.h"
#include "attention/trace_impl.h"

#include <vector>

namespace attnscope {

class LayerAlpha {
public:
    LayerAlpha(const Trace& trace, int block, int layer);

    // Rows [start, start + len) of head h's map over keys [span.lo, span.hi): [len, span.size()]
    // float32 (on the capture's device for dot layers), zero for a head the model masked.
    at::Tensor rows(int head, std::int64_t start, std::int64_t len, KeySpan span) const;

private:
    const LayerCapture* cap_ = nullptr;
    const BlockInfo* info_ = nullptr;
    std::vector<at::Tensor> keys_;  // dot: per kv group, as Trace::map scores them
    std::vector<PackedKeys> packed_;
    std::vector<at::Tensor> maps_;  // other kinds: [n, m] per head
};

}  // namespace attnscope
