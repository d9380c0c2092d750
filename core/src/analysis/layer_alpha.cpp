#include "layer_alpha.h"

#include <algorithm>

namespace attnscope {

namespace {

// q or k as maps use them: float32 on the CPU whatever the capture dtype (as Trace::map).
at::Tensor alphaOperand(const at::Tensor& t) {
    return t.is_cpu() && t.scalar_type() != at::kFloat ? t.to(at::kFloat) : t;
}

}  // namespace

LayerAlpha::LayerAlpha(const Trace& trace, int block, int layer)
    : cap_(&trace.impl().blocks[block].layers[layer]), info_(&trace.blocks()[block]) {
    if (cap_->kind != AttentionKind::Dot) {
        for (int h = 0; h < info_->heads; ++h)
            maps_.push_back(trace.impl().mapTensor(block, layer, h, MapOptions{}).to(at::kFloat));
        return;
    }
    for (std::int64_t g = 0; g < cap_->k.size(0); ++g) {
        keys_.push_back(alphaOperand(cap_->k[g]));
        packed_.push_back(cap_->q.is_cpu() ? packKeys(keys_.back()) : PackedKeys{});
    }
}

at::Tensor LayerAlpha::rows(int head, std::int64_t start, std::int64_t len, KeySpan span) const {
    const LayerCapture& cap = *cap_;
    at::Tensor a;
    if (!maps_.empty()) {
        a = maps_[static_cast<std::size_t>(head)].narrow(0, start, len).narrow(1, span.lo, span.size());
    } else {
        const int g = info_->kvGroup(head);
        a = blockProbs(alphaOperand(cap.q[head]).narrow(0, start, len), keys_[static_cast<std::size_t>(g)], cap.mask,
                       cap.score, head, cap.temperature, cap.q.size(1), start, span,
                       packed_[static_cast<std::size_t>(g)]);
    }
    const bool off = std::find(cap.maskedHeads.begin(), cap.maskedHeads.end(), head) != cap.maskedHeads.end();
    return off ? at::zeros_like(a) : a;
}

}  // namespace attnscope
