// The decoder's norms as data, and its readout (attention/readout.h): the final norm and the
// unembedding that turn a final residual into logits, linearisable at a row for DLA.
#pragma once

#include "attention/readout.h"
#include "decoder_spec.h"
#include "io/weights.h"

#include <memory>

namespace attnscope {

// A norm's tensors; `on` false where the layout has no norm (then it is the identity).
struct NormWeights {
    at::Tensor weight, bias;  // undefined for a LayerNorm without affine weights
    bool on = false;
};

// The family's norm of x (the identity where the layout has none).
at::Tensor applyNorm(const at::Tensor& x, const NormWeights& n, DecoderSpec::Norm kind, double eps);

// The norm at `row` [hidden] as a linear map of that row's components (readout.h).
LinearNorm linearised(const NormWeights& n, DecoderSpec::Norm kind, double eps, const at::Tensor& row);

// The final norm, any output projection [P, hidden] (undefined: none) and the unembedding.
std::shared_ptr<const Readout> makeDecoderReadout(NormWeights norm, DecoderSpec::Norm kind, double eps,
                                                  at::Tensor projectOut, Linear head);

// Direct logit attribution (RunOptions::attributionPosition) on the decoders' forward:
// residualRow is row `position` of x [n, width] in double on the CPU; checkDecomposable throws
// for a position outside the n tokens or a layout whose final residual is not the sum of what
// the blocks add (post-norm); addAttentionParts appends a layer's attention parts at
// parts.position: each head's output through its columns of W_O and the output bias, after the
// block's post-attention norm where there is one (linearised at the block's output there, so the
// parts still sum to what was added), from the context [n, H·d] and the attention's output attn.
at::Tensor residualRow(const at::Tensor& x, std::int64_t position);
void checkDecomposable(const DecoderSpec& spec, std::int64_t position, std::int64_t n);
void addAttentionParts(const DecoderSpec& spec, const Linear& o, const NormWeights& attnOut, const at::Tensor& context,
                       const at::Tensor& attn, ResidualParts& parts);

}  // namespace attnscope
