// DeBERTa v2 and v3 (model_type "deberta-v2", deberta.cpp): what the layer stack's hooks add, the
// disentangled attention's relative terms (deberta_attention.cpp), apart so that the tests and
// the family file share one definition of the positions.
#pragma once

#include "io/weights.h"

#include <ATen/ATen.h>

namespace attnscope {

// The relative position of query i to key j as the attention indexes its tables: i − j, and with
// buckets > 0 Hugging Face's make_log_bucket_position (exact within ±buckets/2, logarithmic
// beyond, up to maxPosition): [n, n] long on `device`.
at::Tensor debertaRelativePositions(std::int64_t n, int buckets, int maxPosition, c10::Device device);

// One layer's relative attention: its position projections (pos_key_proj / pos_query_proj, or
// the layer's own key_proj / query_proj when share_att_key), undefined where pos_att_type leaves
// that term out.
struct DisentangledLayer {
    Linear posKey, posQuery;
};

// What a pass shares across layers: the (normed) relative embeddings [2·span, E], the
// relative positions [n, n] and the sizes the terms need.
struct DisentangledPass {
    at::Tensor rel, positions;
    std::int64_t span = 0, heads = 0, headDim = 0;
    double scale = 1.0;  // 1/√(d · scale_factor)
};

// c2p [H, n, n]: q_i · p^k_{c(δ(i,j) + span)}, p2c [H, n, n]: k_j · p^q_{c(−δ(j,i) + span)}, c
// clamping to [0, 2·span); both scaled. q, k [H, n, d] are the layer's. Undefined when the layer
// has no such projection.
struct DisentangledTerms {
    at::Tensor c2p, p2c;
};
DisentangledTerms disentangledTerms(const DisentangledPass& pass, const DisentangledLayer& layer, const at::Tensor& q,
                                    const at::Tensor& k);

}  // namespace attnscope
