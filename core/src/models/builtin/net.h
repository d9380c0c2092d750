// The built-in networks as functions of their weights, shared by the trainer and the models.
//
// A pass runs in one of two modes:
//  - training (Pass::run == nullptr): batched [B, n, E], keys may be padded (keyAllowed), every
//    attention kind computed from full [B, H, n, m] scores so that autograd sees all of it;
//  - inference (Pass::run set): a batch of one without padding; additive attention blockwise
//    through additiveProbs (no [n, m, w] tensor), linear attention in O(n·d²) with prefix sums
//    when causal; RunOptions (temperature inside the softmax, masked heads) honoured per block
//    and layer; each layer's Q/K recorded into the BlockCapture when one is given, with a
//    propagated temperature folded in (dot: scale / T, additive: v / T), so that Trace::map at
//    display temperature 1 is exactly the map the layer used.
// Both modes compute the same function; tests check the inference maps and outputs against an
// independent reference.
#pragma once

#include "config.h"
#include "attention/trace_impl.h"

#include <map>
#include <string>
#include <vector>

namespace attnscope::builtin {

using Weights = std::map<std::string, at::Tensor>;

// One attention module's weights as a training pass used them (distillation reads them).
struct SiteMap {
    std::string block;  // "encoder", "decoder", "cross" (seq2seq) or "self" (classifier)
    int layer = 0;
    at::Tensor probs;  // [B, H, n, m], rows sum to 1 over the allowed keys, in the autograd graph
};

struct Pass {
    const RunOptions* run = nullptr;
    // Training only: every attention module appends its weights here, in forward order.
    std::vector<SiteMap>* maps = nullptr;
    bool inference() const { return run != nullptr; }
};

// Encoder of both families: ids [B, S] (long); keyAllowed [B, S] bool or undefined (no padding).
// Returns [B, S, E] after the final LayerNorm. Block name for RunOptions: "encoder" (seq2seq) or
// "self" (classifier).
at::Tensor encode(const Weights& w, const Config& c, const at::Tensor& ids, const at::Tensor& keyAllowed,
                  const Pass& pass, BlockCapture* capture);

// Decoder: input [B, T] starting with <s>, memory [B, S, E] from encode(); returns logits [B, T, V].
// Blocks "decoder" (causal self-attention) and "cross". targetAllowed [B, T] (training): the real
// target positions, so that LSH hashes each target at its own length (causal rows never see padding).
at::Tensor decode(const Weights& w, const Config& c, const at::Tensor& input, const at::Tensor& memory,
                  const at::Tensor& sourceAllowed, const Pass& pass, BlockCapture* self, BlockCapture* cross,
                  const at::Tensor& targetAllowed = {});

// Classifier logits [B, classes] from the encoder's output at position 0 (<cls>).
at::Tensor classify(const Weights& w, const at::Tensor& encoded);

}  // namespace attnscope::builtin
