// What a forward pass asks of the attention layers: propagated temperature and masked heads.
#pragma once

#include "attnscope/runtime/progress.h"

#include <cstdint>
#include <string>
#include <vector>

namespace attnscope {

// A head of one attention block, e.g. for masking. block "" means every block that has it.
struct HeadRef {
    std::string block;
    int layer = 0;
    int head = 0;
};

// The dtype the Trace keeps Q and K in. Compute: as the model ran (float32 on the CPU, the
// checkpoint's half precision on a GPU); Float16 / BFloat16 halve a CPU capture. Maps are always
// computed in float32 from them.
enum class CaptureDtype { Compute, Float16, BFloat16 };

// Attention knockout (Geva et al. 2023): the logits from these query positions to these key
// positions are -inf before the softmax in layers firstLayer..lastLayer (decoder-only language
// models; a row left with no key is refused).
struct Knockout {
    std::vector<std::int64_t> queries, keys;
    int firstLayer = 0, lastLayer = 0;
};

// A learned feature map of one side (queries or keys) of a head (Hedgehog, Zhang et al. 2024;
// lab/hedgehog.h fits them): with u = W x + b (W [features, dim] row-major, b [features]),
//   φ(x) = [softmax(u), softmax(−u)]  (2·features values, each softmax over the features),
// applied to the head's q or k exactly as the Trace keeps them (unscaled, after rotation).
struct LearnedFeatureMap {
    int features = 0, dim = 0;
    std::vector<float> weight, bias;
};

// A head whose softmax map the forward replaces by the linear map
//   A_ij = φ_q(q_i)·φ_k(k_j) / Σ_{j' allowed} φ_q(q_i)·φ_k(k_j')  over the keys the head's mask allows
// (causal where the model is), which then multiplies the head's values as the softmax did. The
// propagated temperature does not apply to it; a masked head stays zeroed. The Trace still keeps
// the head's q and k, so Trace::map shows their softmax map (lab/hedgehog.h: hedgehogMap).
struct LinearHead {
    HeadRef head;  // block "" = every block that has the layer and head
    LearnedFeatureMap query, key;
};

struct RunOptions {
    Progress progress;  // (layers done, total)

    // Propagated temperature: the model runs with softmax(logits / temperature) inside the
    // chosen layers (empty = all layers) of every block, so later layers and the outputs change.
    double temperature = 1.0;
    std::vector<int> temperatureLayers;
    // Heads whose output is zeroed before the output projection.
    std::vector<HeadRef> maskHeads;
    CaptureDtype captureDtype = CaptureDtype::Compute;

    // Decoder-only language models (analysis/logit_lens.h). recordResiduals keeps the residual
    // stream entering each block and the final one ([tokens, hidden] each, on the model's
    // device) for the logit lens; attributionPosition >= 0 keeps, at that position, every
    // component the final residual sums (embeddings, each head's output through W_O, each
    // attention bias, each MLP output) for direct logit attribution. Other families ignore both;
    // the analyses then say the Trace has no such record.
    bool recordResiduals = false;
    std::int64_t attributionPosition = -1;
    std::vector<Knockout> knockouts;
    // Also record what the value-weighted map sources need (analysis/value_norm.h): per layer
    // the value vectors and the output projection. Off by default, so a plain forward keeps
    // nothing more; the decoder-only families and the layer-stack models (BERT family, ViT,
    // T5, BART family) record them.
    bool captureValues = false;
    // Heads whose softmax is replaced by a learned linear map (see LinearHead). A head listed
    // twice uses the last entry; q's width must be the maps' dim (else attnscope::Error).
    std::vector<LinearHead> linearHeads;
    // Disentangled-attention encoders (DeBERTa v2/v3): also record each layer's score terms
    // (c2c, c2p, p2c; attention/score_terms.h). Other families ignore it.
    bool scoreTerms = false;
};

}  // namespace attnscope
