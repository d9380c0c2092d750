// Trace internals, for model families that build Traces and for core code that reads them.
#pragma once

#include "attention_ops.h"
#include "attnscope/trace.h"

#include <ATen/ATen.h>

#include <vector>

namespace attnscope {

struct LayerCapture {
    at::Tensor q;        // [heads, queries, head_dim], as used by the model (after any rotation)
    at::Tensor k;        // [kv_heads, keys, head_dim]
    double scale = 1.0;  // the factor on q·k before the softmax (1/√d for GPT-2)
};

struct BlockCapture {
    MaskSpec mask;
    std::vector<LayerCapture> layers;
};

struct Trace::Impl {
    std::vector<std::int64_t> ids;
    std::vector<std::string> tokens;
    std::vector<BlockInfo> infos;        // parallel to blocks
    std::vector<BlockCapture> blocks;
    std::vector<float> nextTokenLogits;
    c10::Device device = c10::Device(c10::kCPU);

    // [queries, keys] probabilities on the trace's device, float32.
    at::Tensor mapTensor(int block, int layer, int head, const MapOptions& options) const;
};

}  // namespace attnscope
