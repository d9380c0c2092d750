// forEachRowBlock's reader of one head's map rows, for core code that reads the same rows of many
// heads together (analysis/block_products.cpp) and so cannot visit one head after another.
#pragma once

#include "blocked_attention.h"
#include "trace_impl.h"

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <tuple>

namespace attnscope {

// Rows [start, start + len) of one map over the keys `span`: [len, span.size()] float32, CPU.
// `start` must be a multiple of blockedConfig().rows and len that block's length (or less at the
// map's end), as forEachRowBlock asks: the products' rounding depends on a row's place in its block.
// `logs`, when not null, is set to the rows' logarithms where the reader has them from a softmax's
// own terms (dot maps, blockProbs), and left undefined otherwise. `into`, when not null, is
// [len, span.size()] floats the reader may write the rows to (the dot maps' do; the tensor
// returned is then over them): the caller copies when the tensor's data is elsewhere.
using RowsOf = std::function<at::Tensor(std::int64_t start, std::int64_t len, KeySpan span, at::Tensor* logs,
                                        float* into)>;

// What the readers of the query heads that share a key/value head can share: its keys packed for
// the dot rows and its keys' features for the linear rows, made once per key/value head (with
// grouped-query attention, 12 query heads on 4 key/value heads in the long-input Llama shape,
// a third of the memory, each megabyte at 4,096 tokens a fresh page to fault in). Thread-safe.
class SharedKeys {
public:
    PackedKeys packed(const LayerCapture& cap, int block, int layer, int group);
    at::Tensor features(const LayerCapture& cap, int block, int layer, int group, FeatureMap map);
    PackedKeys packedFeatures(const LayerCapture& cap, int block, int layer, int group, FeatureMap map);

private:
    std::mutex mutex_;
    std::map<std::tuple<int, int, int>, PackedKeys> packed_;
    std::map<std::tuple<int, int, int, int>, at::Tensor> features_;
    std::map<std::tuple<int, int, int, int>, PackedKeys> packedFeatures_;
};

// The reader of map(block, layer, head, options): keys packed once (dot maps), or the whole map
// computed once (FAVOR+, additive, sparse variants). Indices are not checked (forEachRowBlock
// checks them); throws like Trace::map on a temperature or variant it refuses. `shared`, when
// given, holds the prepared keys of all the readers made with it.
RowsOf rowsOf(const Trace::Impl& impl, int block, int layer, int head, const MapOptions& options,
              SharedKeys* shared = nullptr);

}  // namespace attnscope
