// forEachRowBlock's reader of one head's map rows, for core code that reads the same rows of many
// heads together (analysis/block_products.cpp) and so cannot visit one head after another.
#pragma once

#include "blocked_attention.h"
#include "trace_impl.h"

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>

namespace attnscope {

// Rows [start, start + len) of one map over the keys `span`: [len, span.size()] float32, CPU.
// `start` must be a multiple of blockedConfig().rows and len that block's length (or less at the
// map's end), as forEachRowBlock asks: the products' rounding depends on a row's place in its block.
// `logs`, when not null, is set to the rows' logarithms where the reader has them from a softmax's
// own terms (dot maps, blockProbs), and left undefined otherwise.
using RowsOf = std::function<at::Tensor(std::int64_t start, std::int64_t len, KeySpan span, at::Tensor* logs)>;

// The reader of map(block, layer, head, options): keys packed once (dot maps), or the whole map
// computed once (FAVOR+, additive, sparse variants). Indices are not checked (forEachRowBlock
// checks them); throws like Trace::map on a temperature or variant it refuses.
RowsOf rowsOf(const Trace::Impl& impl, int block, int layer, int head, const MapOptions& options);

}  // namespace attnscope
