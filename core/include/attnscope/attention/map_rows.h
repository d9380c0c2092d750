// A head's map handed out block of query rows by block, for measures over whole maps (per-head
// metrics, rollout) that must not hold a head's n×n map. Torch stays out of this header.
#pragma once

#include "attnscope/attention/trace.h"

#include <functional>
#include <string>
#include <utility>

namespace attnscope {

// A block of consecutive query rows of one head's map. The rows may see only keys
// [colBegin, colEnd) (the mask's causal limit and window); their other entries are exactly 0 and
// not stored.
struct MapRowBlock {
    int rowBegin = 0, rows = 0;     // query rows [rowBegin, rowBegin + rows)
    int cols = 0;                   // the map's key count
    int colBegin = 0, colEnd = 0;   // colBegin == colEnd: rows that see no key (all zero)
    const float* values = nullptr;  // [rows, colEnd - colBegin] row-major; valid during the call
    const float* second = nullptr;  // the same cells of the second map asked for, else null
    // With forEachRowBlock's withLogs: log of each value of `values`, from the softmax's own terms
    // ((s - max) - log Σ; -inf where the value is 0), for the maps that are a softmax computed
    // per block (Dot); null otherwise.
    const float* logValues = nullptr;
};

// The shape of every map of one layer of a block: {queries, keys}. Throws attnscope::Error on an
// index out of range.
std::pair<int, int> mapShape(const Trace& trace, int block, int layer);

// What the logits of one layer of a block add to the scaled q·k that linear attention has no
// place for ("a tanh soft-cap", "ALiBi", "a position bias": Gemma-2, BLOOM, Falcon with ALiBi,
// T5), so that its Linear map is refused; "" when the layer has none. Throws attnscope::Error on
// an index out of range.
std::string linearMapRefusal(const Trace& trace, int block, int layer);

// Visits trace.map(block, layer, head, options) block of query rows by block, on up to `workers`
// threads (0 = every core): visit(worker, rows) with worker in [0, workers), each row block once,
// in no fixed order across workers. With `second`, each block also carries the same rows of that
// map (e.g. the Linear variant, for a KL between the two). Dot and Linear (elu/relu) maps are
// computed per block on the CPU (a GPU trace's head's Q and K are copied over first), so a
// head's full map is never held (peak: one [64, keys] block per worker and map); FAVOR+ and
// additive maps are computed whole and then visited in blocks.
// Only rows [rowBegin, rowEnd) are visited (an end of 0: every row); blocks never straddle a
// multiple of the block size. Throws like Trace::map() and on a row range outside the map; an
// exception thrown by visit stops the visit and is rethrown. withLogs: the blocks carry logValues
// where the map has them.
void forEachRowBlock(const Trace& trace, int block, int layer, int head, const MapOptions& options, int workers,
                     const std::function<void(int worker, const MapRowBlock& rows)>& visit,
                     const MapOptions* second = nullptr, int rowBegin = 0, int rowEnd = 0, bool withLogs = false);

}  // namespace attnscope
