// What activation patching (analysis/patching.h) needs of a decoder beyond forward(): a forward
// that keeps every activation it may patch, and the layers from l on run again from a residual
// with one activation replaced. Decoder models implement it; patching finds it with
// dynamic_cast, so Model's public interface stays as it is.
#pragma once

#include "attention/readout.h"

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace attnscope {

// The activations of one run, on the model's device: resid[l] the residual entering block l and
// resid[L] the final one ([n, hidden]); context[l] the heads' outputs before W_O ([n, heads ·
// head_dim], head h in columns h·d..); attnAdded[l] / mlpAdded[l] what block l's attention and MLP
// add to the residual ([n, hidden], after any post-norm).
struct LayerActivations {
    std::vector<at::Tensor> resid, context, attnAdded, mlpAdded;
};

// One activation of layer `layer` replaced by `value`: Heads, head `head`'s columns of the
// context (all positions, value [n, head_dim]); AttnOut / MlpOut, that block's added output at
// `position` (value [hidden]). (The residual entering a layer is patched by the caller, who
// passes it to runFrom.)
struct LayerPatch {
    enum class Site { None, Heads, AttnOut, MlpOut } site = Site::None;
    int layer = 0, head = 0;
    std::int64_t position = 0;
    at::Tensor value;
};

// t with `patch` applied when it replaces `site` of layer l (t itself otherwise): Heads, its head's
// columns of the context t [n, heads · headDim]; AttnOut / MlpOut, row `position` of t [n, hidden].
inline at::Tensor patched(const LayerPatch* patch, int l, LayerPatch::Site site, at::Tensor t,
                          std::int64_t headDim = 0) {
    if (!patch || patch->site != site || patch->layer != l) return t;
    t = t.clone();
    if (site == LayerPatch::Site::Heads)
        t.narrow(1, patch->head * headDim, headDim).copy_(patch->value);
    else
        t.select(0, patch->position).copy_(patch->value);
    return t;
}

class LayerRunner {
public:
    virtual ~LayerRunner() = default;
    // A whole forward of ids, keeping every activation (LayerActivations).
    virtual LayerActivations runRecording(const std::vector<std::int64_t>& ids) const = 0;
    // The final residual after layers `from` .. L-1 run on `entering` (the residual entering
    // `from`, [n, hidden]) with `patch` applied in its layer (which is >= from).
    virtual at::Tensor runFrom(const std::vector<std::int64_t>& ids, int from, const at::Tensor& entering,
                               const LayerPatch& patch) const = 0;
    // Attribution patching's corrupt side: a forward of ids with gradients, returning its
    // activations and, in `grads` (same layout), the gradient of LD = logit(tokens[0]) −
    // logit(tokens[1]) (or logit(tokens[0])) at `position`, before any final soft-cap, with
    // respect to each of them. The weights take part through aliases of their memory (the model's
    // are inference tensors, which autograd may not save).
    virtual LayerActivations runWithGradients(const std::vector<std::int64_t>& ids, std::int64_t position,
                                              const std::vector<std::int64_t>& tokens,
                                              LayerActivations& grads) const = 0;
    virtual const Readout& finalReadout() const = 0;
    // Why this model cannot be patched ("" when it can): streamed weights, say.
    virtual std::string patchingRefusal() const = 0;
};

}  // namespace attnscope
