// Two models on the same token ids: how far each head's map moved and how the output changed.
// The question quantisation raises (a GGUF file against the safetensors copy of the same model:
// how much does Q4 change a head's attention?), and any two checkpoints of one architecture.
//
// For every block both traces share (same name, layers and heads) and every head (l, h):
//   kl[l, h]     = meanRowKl(A's map, B's map): the mean over query rows of KL(A_i ‖ B_i), nats
//                  (analysis/metrics.h's one KL; rows that are all zero are skipped);
//   maxAbs[l, h] = the largest |A_ij − B_ij| over the map's cells.
// The output change is compareOutputs(A, B) (lab/interventions.h): for decoder LMs the
// next-token KL(A ‖ B) after the last position and whether both put the same token first.
// Maps are taken with `map` (the model's own maps at T = 1 by default).
#pragma once

#include "attnscope/attention/trace.h"
#include "attnscope/lab/interventions.h"

#include <string>
#include <vector>

namespace attnscope {

struct BlockComparison {
    std::string block;  // "self", "encoder", "decoder", "cross"
    int layers = 0, heads = 0;
    std::vector<double> kl;      // [layers, heads], nats
    std::vector<double> maxAbs;  // [layers, heads]
    double meanKl = 0, maxKl = 0;
    int worstLayer = 0, worstHead = 0;  // where maxKl is
};

struct ModelComparison {
    std::vector<BlockComparison> blocks;  // in the traces' order
    OutputChange output;                  // A is the original, B the changed
    int tokens = 0;                       // ids compared
};

// Throws attnscope::Error when the traces ran on different ids or their blocks differ in name,
// layers, heads or map shape (naming the first difference).
ModelComparison compareTraces(const Trace& a, const Trace& b, const MapOptions& map = {});

// Runs both models on ids (the same RunOptions; progress reports the two forwards) and compares
// the traces. Throws attnscope::Error as Model::forward and compareTraces do.
ModelComparison compareModels(const Model& a, const Model& b, const std::vector<std::int64_t>& ids,
                              const RunOptions& options = {}, const MapOptions& map = {});

}  // namespace attnscope
