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

}  // namespace attnscope
