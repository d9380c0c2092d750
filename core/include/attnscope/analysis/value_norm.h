// Value-weighted map sources (Kobayashi et al. 2020, "Attention is Not Only a Weight"), from what
// a Trace recorded with RunOptions::captureValues. Per layer l, head h, query i, key j:
//   f_h(x̃_j) = (x̃_j W_V^h + b_V^h) W_O^h   (x̃_j: what the heads read; GQA: h's kv group's W_V)
//   value-norm:        N[h, i, j] = α_hij · ‖f_h(x̃_j)‖₂           (raw, not normalised)
//   value-norm-layer:  N[i, j]    = ‖Σ_h α_hij f_h(x̃_j)‖₂
// α_hij is the head's map exactly as Trace::map gives it (the model's scale, caps, ALiBi, masks
// and propagated temperature); heads the model masked (RunOptions::maskHeads) contribute 0.
// Torch stays out of this header.
#pragma once

#include "attnscope/analysis/map_source.h"
#include "attnscope/attention/trace.h"

namespace attnscope {

// Whether every layer of block b recorded its values (RunOptions::captureValues on a family that
// records them: the decoder families, the layer-stack ones (BERT family, ViT, T5, BART family)
// and the built-in models; not maps read from a file).
bool hasValues(const Trace& trace, int block);

// value-norm of one head: [queries, keys] row-major, masked cells 0. Throws attnscope::Error on an
// index out of range or a block without recorded values.
HeadMap valueNormMap(const Trace& trace, int block, int layer, int head);
// value-norm-layer of one layer: [queries, keys]. Computed in blocks of query rows (the blocks
// Trace::map uses), so no [heads, queries, keys] tensor is built: per layer an extra
// [keys, heads, heads] Gram matrix of the head outputs, per block [heads, rows, keys].
HeadMap valueNormLayerMap(const Trace& trace, int block, int layer);

}  // namespace attnscope
