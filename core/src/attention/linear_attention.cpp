#include "linear_attention.h"

#include "attnscope/runtime/error.h"

#ifdef ATTNSCOPE_WITH_CUDA_KERNELS
#include "../../cuda/attention_kernels.h"
#endif

#include <algorithm>

namespace attnscope {

namespace {

// (num [H, c, dv], den [H, c]) -> num / den with 0 where den == 0.
at::Tensor divideRows(const at::Tensor& num, const at::Tensor& den) {
    const at::Tensor safe = at::where(den > 0, den, at::ones_like(den)).unsqueeze(-1);
    return at::where(den.unsqueeze(-1) > 0, num / safe, at::zeros_like(num));
}

}  // namespace

at::Tensor linearAttention(const at::Tensor& phiQ, const at::Tensor& phiKIn, const at::Tensor& v, const MaskSpec& mask,
                           std::int64_t chunk) {
    const auto H = phiQ.size(0), n = phiQ.size(1), m = phiKIn.size(1);
    if (phiKIn.size(0) != H || v.size(0) != H || v.size(1) != m || phiKIn.size(2) != phiQ.size(2))
        throw Error("linear attention: shapes do not match (phiQ [H, n, f], phiK [H, m, f], v [H, m, dv])");
    at::Tensor phiK = phiKIn;
    if (mask.keyAllowed.defined()) phiK = phiK * mask.keyAllowed.to(phiK.options()).view({1, m, 1});
    if (!mask.causal) {
        const at::Tensor S = at::bmm(phiK.transpose(1, 2), v);  // [H, f, dv]
        const at::Tensor z = phiK.sum(1, /*keepdim=*/true);     // [H, 1, f]
        return divideRows(at::bmm(phiQ, S), (phiQ * z).sum(-1));
    }
    const std::int64_t offset = m - n;
    if (offset < 0) throw Error("causal linear attention needs at least as many keys as queries");
#ifdef ATTNSCOPE_WITH_CUDA_KERNELS
    if (phiQ.is_cuda() && phiQ.scalar_type() == at::kFloat && offset == 0 && phiQ.size(2) <= cuda::kMaxLinearFeatures) {
        at::Tensor q = phiQ.contiguous(), k = phiK.contiguous(), vc = v.contiguous();
        at::Tensor out = at::empty({H, n, v.size(2)}, v.options());
        const std::string failed = cuda::causalLinearAttention(
                q.data_ptr<float>(), k.data_ptr<float>(), vc.data_ptr<float>(), out.data_ptr<float>(),
                static_cast<int>(H), static_cast<int>(n), static_cast<int>(q.size(2)), static_cast<int>(v.size(2)));
        if (!failed.empty()) throw Error(failed);
        return out;
    }
#endif
    chunk = std::max<std::int64_t>(1, chunk);
    // Keys before the first query's own position are visible to every query: the initial state.
    at::Tensor S = at::bmm(phiK.narrow(1, 0, offset).transpose(1, 2), v.narrow(1, 0, offset));  // [H, f, dv]
    at::Tensor z = phiK.narrow(1, 0, offset).sum(1);                                            // [H, f]
    at::Tensor out = at::empty({H, n, v.size(2)}, v.options());
    const at::Tensor tril = at::ones({chunk, chunk}, phiQ.options()).tril_();
    for (std::int64_t s = 0; s < n; s += chunk) {
        const auto c = std::min(chunk, n - s);
        const at::Tensor q = phiQ.narrow(1, s, c), k = phiK.narrow(1, offset + s, c), vc = v.narrow(1, offset + s, c);
        const at::Tensor a = at::bmm(q, k.transpose(1, 2)).mul_(tril.narrow(0, 0, c).narrow(1, 0, c));  // [H, c, c]
        const at::Tensor num = at::baddbmm(at::bmm(a, vc), q, S);                                       // [H, c, dv]
        const at::Tensor den = a.sum(-1) + at::bmm(q, z.unsqueeze(-1)).squeeze(-1);                     // [H, c]
        out.narrow(1, s, c).copy_(divideRows(num, den));
        S.baddbmm_(k.transpose(1, 2), vc);
        z.add_(k.sum(1));
    }
    return out;
}

}  // namespace attnscope
