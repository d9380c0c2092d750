// Learned linear-attention feature maps (Hedgehog, Zhang et al. 2024): the one definition of
// φ(x) = [softmax(W x + b), softmax(−(W x + b))] and of the linear map it makes, shared by the
// forward that replaces a head (RunOptions::linearHeads, through attendDot), the lab's maps and
// the fit (lab/hedgehog.h), which differentiates these same functions with autograd.
#pragma once

#include "attention_ops.h"

#include <ATen/ATen.h>

#include <vector>

namespace attnscope {

// x [..., n, d], weight [..., f, d], bias [..., f] (leading dimensions broadcast as in matmul)
// -> [..., n, 2f]: [softmax(u), softmax(−u)] over the last dimension, u = x Wᵀ + b.
at::Tensor learnedFeatures(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias);

// A LearnedFeatureMap's W [f, d] and b [f] as float32 tensors on `device`. Throws
// attnscope::Error naming `what` when the sizes do not match features and dim.
struct FeatureTensors {
    at::Tensor weight, bias;
};
FeatureTensors featureTensors(const LearnedFeatureMap& map, c10::Device device, const std::string& what);

// The linear map of features φq [..., n, F], φk [..., m, F] (> 0) under `mask`:
// A_ij = φq_i·φk_j over the allowed keys, divided by the row's sum. Differentiable (no in-place
// operations); rows with no allowed key are 0.
at::Tensor learnedLinearMap(const at::Tensor& phiQ, const at::Tensor& phiK, const MaskSpec& mask);
// The same with the allowed cells given as a float tensor of 0 and 1 broadcast to [..., n, m].
at::Tensor learnedLinearMapOver(const at::Tensor& phiQ, const at::Tensor& phiK, const at::Tensor& allowed);

// The keys `mask` allows, as a float [n, m] tensor of 0 and 1 on `options`' device.
at::Tensor allowedCells(const MaskSpec& mask, std::int64_t n, std::int64_t m, const at::TensorOptions& options);

// One replaced head's map: q [n, d] and k [m, d] of the head as the forward uses them.
at::Tensor linearHeadMap(const at::Tensor& q, const at::Tensor& k, const MaskSpec& mask, const LinearHead& head);

// attendDot's replacement: overwrites context[h] [n, dv] of every head of `heads` with its linear
// map times the head's values. q [H, n, d], k, v [Hkv, m, *].
void replaceLinearHeads(at::Tensor& context, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                        const MaskSpec& mask, const std::vector<const LinearHead*>& heads);

}  // namespace attnscope
