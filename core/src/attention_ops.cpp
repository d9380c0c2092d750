#include "attention_ops.h"

#include <limits>

#ifdef ATTNSCOPE_WITH_CUDA_KERNELS
#include "../cuda/attention_kernels.h"
#endif

namespace attnscope {

at::Tensor additiveMask(const MaskSpec& mask, std::int64_t n, std::int64_t m, const at::TensorOptions& options) {
    if (!mask.causal && !mask.keyAllowed.defined()) return {};
    const double ninf = -std::numeric_limits<double>::infinity();
    at::Tensor out = at::zeros({n, m}, options);
    if (mask.causal)  // key j is in the future of query i when j > i + (m - n)
        out.masked_fill_(at::ones({n, m}, options.dtype(at::kBool)).triu_(m - n + 1), ninf);
    if (mask.keyAllowed.defined())
        out.masked_fill_(mask.keyAllowed.logical_not().to(options.device()).unsqueeze(0), ninf);
    return out;
}

at::Tensor attentionProbs(const at::Tensor& q, const at::Tensor& k, const at::Tensor& additive, double scale,
                          double temperature) {
    const auto H = q.size(0), n = q.size(1), m = k.size(1), Hkv = k.size(0);
    const double alpha = scale / temperature;
    at::Tensor scores;
    if (H == Hkv && additive.defined()) {
        // One BLAS call: mask + alpha · q kᵀ.
        scores = at::baddbmm(additive.expand({H, n, m}), q, k.transpose(1, 2), /*beta=*/1.0, alpha);
    } else {
        // Grouped-query attention: view the query heads as [Hkv, H/Hkv * n, d] against each group.
        scores = at::bmm(q.reshape({Hkv, (H / Hkv) * n, q.size(2)}), k.transpose(1, 2)).view({H, n, m});
        scores.mul_(alpha);
        if (additive.defined()) scores.add_(additive);
    }
    return at::softmax(scores, -1);
}

at::Tensor headProbs(const at::Tensor& q, const at::Tensor& k, const MaskSpec& mask, double scale,
                     double temperature) {
#ifdef ATTNSCOPE_WITH_CUDA_KERNELS
    if (q.is_cuda() && q.scalar_type() == at::kFloat && !mask.keyAllowed.defined()) {
        at::Tensor qc = q.contiguous(), kc = k.contiguous();
        at::Tensor out = at::empty({q.size(0), k.size(0)}, q.options());
        cuda::scaledSoftmaxRows(qc.data_ptr<float>(), kc.data_ptr<float>(), out.data_ptr<float>(),
                                static_cast<int>(q.size(0)), static_cast<int>(k.size(0)),
                                static_cast<int>(q.size(1)), static_cast<float>(scale / temperature), mask.causal);
        return out;
    }
#endif
    const at::Tensor additive = additiveMask(mask, q.size(0), k.size(0), q.options());
    return attentionProbs(q.unsqueeze(0), k.unsqueeze(0), additive, scale, temperature).squeeze(0);
}

}  // namespace attnscope
