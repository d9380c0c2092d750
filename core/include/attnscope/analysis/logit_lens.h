// What the residual stream says about the next token, layer by layer, and which parts of the
// model wrote a logit difference: the logit lens and direct logit attribution (DLA) of
// decoder-only language models (issue 32's definitions).
//
// Both read a Trace whose forward kept what they need (RunOptions::recordResiduals for the lens,
// RunOptions::attributionPosition for DLA) and throw attnscope::Error, naming what is missing,
// on any other Trace. Logits are taken before any final soft-cap (Gemma-2).
#pragma once

#include "attnscope/attention/trace.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace attnscope {

// Logit lens: h_l is the residual stream entering block l (h_0: the embeddings and positions with
// the family's embedding scale; h_L: the final residual, before the final norm); for l = 0..L and
// each position i, p_{l,i} = softmax(unembed(FinalNorm(h_{l,i}))) with the model's own final norm
// and unembedding (bias included). Row L is the model's own output distribution.
struct LensOptions {
    int topK = 5;                       // 1..vocab
    std::optional<std::int64_t> token;  // also the log-probability of this id everywhere
};

struct LogitLens {
    int rows = 0;                      // L + 1
    int tokens = 0;                    // n
    int k = 0;                         // topK
    std::vector<std::int64_t> topIds;  // [rows, tokens, k], descending probability
    std::vector<float> topLogProbs;    // [rows, tokens, k]
    std::vector<float> tokenLogProbs;  // [rows, tokens] when LensOptions::token, else empty
};

LogitLens logitLens(const Trace& trace, const LensOptions& options = {});

// DLA at the Trace's attribution position P: the final residual there is the sum of its parts
// (embeddings + positions, each head's output z_{l,h,P} W_O^h, each attention output bias, each
// MLP output; after the block's post-norm in sandwich-norm families, linearised at its actual
// scale). The final norm is linearised at P with its actual scale: LayerNorm dla(c) =
// (γ ⊙ (c − mean(c)) / σ_P) · u, RMSNorm dla(c) = (γ ⊙ c / rms_P) · u (Gemma: 1 + γ), with
// u = W_U[:, T] − W_U[:, T2] (or W_U[:, T]). Completeness: Σ dla + finalBias = logitDiff, where
// finalBias = β · u + b_U[T] − b_U[T2].
struct LogitAttribution {
    std::int64_t position = 0;
    int layers = 0, heads = 0;
    std::vector<double> perHead;  // [layers, heads]
    double embed = 0;
    std::vector<double> attnBias;  // [layers]
    std::vector<double> mlp;       // [layers]
    double finalBias = 0;
    double logitDiff = 0;  // the model's logit(T) − logit(T2) at P (before any final soft-cap)
    double sum = 0;        // Σ of every part above, finalBias included: equals logitDiff
};

LogitAttribution directLogitAttribution(const Trace& trace, std::int64_t token,
                                        std::optional<std::int64_t> minus = std::nullopt);

}  // namespace attnscope
