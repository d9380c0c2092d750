// blockProducts' pass with a hook on each head's rows, so that the per-head metrics of the same
// maps come out of the same pass (headMetricsAndProducts) instead of computing every map twice.
#pragma once

#include "attnscope/analysis/trace_metrics.h"
#include "attention/blocked_attention.h"

#include <cstdint>
#include <functional>

namespace attnscope {

// Head index a = layer·heads + head; rows [r0, r0 + len) over the keys `span` ([len, span.size()]
// floats, valid during the call), one of forEachRowBlock's blocks, in increasing r0 per head.
// Called on the worker that owns head a (the same one for every block of a), never for rows
// that see no key.
// logs: the values' logarithms from the softmax's terms (RowsOf's logs), or null.
using HeadRowsVisit = std::function<void(int a, std::int64_t r0, std::int64_t len, KeySpan span, const float* values,
                                         const float* logs)>;

BlockProducts blockProductsVisiting(const Trace& trace, int block, const MapOptions& options, bool gram,
                                    const ProductsAsked& asked, const HeadRowsVisit& visit);

}  // namespace attnscope
