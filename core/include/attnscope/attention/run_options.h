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
};

}  // namespace attnscope
