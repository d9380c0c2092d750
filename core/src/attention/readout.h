// What a decoder's forward can keep beyond Q and K for the logit lens and direct logit
// attribution (RunOptions::recordResiduals / attributionPosition; analysis/logit_lens.h): the
// residual streams, the components of the final residual at one position, and the readout that
// turns a final residual into logits.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace attnscope {

// A norm at one row, as a linear map of that row's components c (its statistics held fixed):
// norm(x) = scale ⊙ (x − [centred] mean(x)) + bias, so a component c contributes
// scale ⊙ (c − [centred] mean(c)). float64 [hidden] tensors on the CPU.
struct LinearNorm {
    at::Tensor scale, bias;
    bool centred = false;                                 // LayerNorm subtracts the row's mean; RMSNorm does not
    at::Tensor apply(const at::Tensor& component) const;  // component [.., hidden] float64 -> its share
};

// The final norm and unembedding of a decoder, before any final soft-cap.
class Readout {
public:
    virtual ~Readout() = default;
    // rows [r, hidden] (the trace's device, any dtype) -> logits [r, vocab] float32, same device.
    virtual at::Tensor logits(const at::Tensor& rows) const = 0;
    // The same for the given token ids only: [r, tokens.size()] (one pass over two rows of the
    // unembedding instead of all of them, for patching's logit differences).
    virtual at::Tensor logitsOf(const at::Tensor& rows, const std::vector<std::int64_t>& tokens) const = 0;
    // The final norm linearised at `row` [hidden] (a final residual row).
    virtual LinearNorm linearNormAt(const at::Tensor& row) const = 0;
    // Token t's unembedding direction in the final norm's output basis (through any output
    // projection): [hidden] float64 on the CPU; and its logit bias (0 without one).
    virtual at::Tensor direction(std::int64_t token) const = 0;
    virtual double logitBias(std::int64_t token) const = 0;
    virtual std::int64_t vocabSize() const = 0;
};

// The final residual at one position as the sum of its parts, float64 [hidden] on the CPU each
// (heads [layers] of [heads, hidden]). Blocks with a norm after attention or the MLP (Gemma-2/3,
// OLMo-2) contribute their normed output, the norm linearised at that block's output there.
struct ResidualParts {
    std::int64_t position = -1;
    at::Tensor embed;
    std::vector<at::Tensor> heads, attnBias, mlp;  // attnBias: zeros where the layer has none
    at::Tensor finalRow;                           // the final residual there
    at::Tensor finalRowAsRun;                      // the same [1, hidden], in the model's dtype and device
};

}  // namespace attnscope
