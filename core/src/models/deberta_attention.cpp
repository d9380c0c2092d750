// DeBERTa's relative positions and disentangled terms, as Hugging Face's modeling_deberta_v2.py
// defines them (build_relative_position, make_log_bucket_position, disentangled_attention_bias).
#include "deberta.h"

#include "family_common.h"

#include <cmath>

namespace attnscope {

at::Tensor debertaRelativePositions(std::int64_t n, int buckets, int maxPosition, c10::Device device) {
    const at::Tensor ids = at::arange(n, at::TensorOptions().dtype(at::kLong));
    at::Tensor rel = ids.unsqueeze(1) - ids.unsqueeze(0);
    if (buckets > 0 && maxPosition > 0) {
        // In float32 as the reference computes it: the bucket edges are where ceil() turns.
        const std::int64_t mid = buckets / 2;
        const at::Tensor sign = at::sign(rel);
        const at::Tensor inner = rel.lt(mid).logical_and(rel.gt(-mid));
        const at::Tensor absPos = at::where(inner, at::scalar_tensor(mid - 1, rel.options()), rel.abs());
        const at::Tensor ratio = at::scalar_tensor(static_cast<double>(maxPosition - 1) / static_cast<double>(mid),
                                                   at::TensorOptions().dtype(at::kFloat));
        const at::Tensor logPos = at::ceil(at::log(absPos.to(at::kFloat) / static_cast<float>(mid)) / at::log(ratio) *
                                           static_cast<float>(mid - 1)) +
                                  static_cast<float>(mid);
        rel = at::where(absPos.le(mid), rel.to(at::kFloat), logPos * sign.to(at::kFloat)).to(at::kLong);
    }
    return rel.to(device);
}

namespace {

// The projection of the relative embeddings by `proj`, as heads [H, 2·span, d].
at::Tensor positionHeads(const DisentangledPass& pass, const Linear& proj) {
    const Linear p = at::GradMode::is_enabled() ? autogradAlias(proj) : proj;
    return splitHeads(p(pass.rel), pass.heads, pass.headDim);
}

}  // namespace

DisentangledTerms disentangledTerms(const DisentangledPass& pass, const DisentangledLayer& layer, const at::Tensor& q,
                                    const at::Tensor& k) {
    DisentangledTerms t;
    const std::int64_t n = q.size(1), H = q.size(0);
    const std::int64_t last = 2 * pass.span - 1;
    if (layer.posKey.weight.defined()) {  // content to position: row i of q against p^k at δ(i, j)
        const at::Tensor index = at::clamp(pass.positions + pass.span, 0, last).expand({H, n, n});
        const at::Tensor all = at::matmul(q, positionHeads(pass, layer.posKey).transpose(1, 2));  // [H, n, 2·span]
        t.c2p = at::gather(all, 2, index) * pass.scale;
    }
    if (layer.posQuery.weight.defined()) {  // position to content: row j of k against p^q at −δ(j, i)
        const at::Tensor index = at::clamp(pass.span - pass.positions, 0, last).expand({H, n, n});
        const at::Tensor all = at::matmul(k, positionHeads(pass, layer.posQuery).transpose(1, 2));  // [H, n, 2·span]
        t.p2c = at::gather(all, 2, index).transpose(1, 2) * pass.scale;
    }
    return t;
}

}  // namespace attnscope
