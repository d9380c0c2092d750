#include "kinds.h"

#include "attnscope/runtime/error.h"
#include "rng.h"
#include "runtime/numbers.h"

#include <ATen/core/grad_mode.h>

#include <cmath>
#include <limits>
#include <string>

namespace attnscope {

void checkSparseOptions(MapVariant variant, const SparseOptions& o) {
    if (variant == MapVariant::Local && o.window < 1)
        throw Error("local attention needs a window >= 1, got " + std::to_string(o.window));
    if (variant == MapVariant::TopK && o.keep < 1)
        throw Error("top-k attention needs k >= 1, got " + std::to_string(o.keep));
    if (variant == MapVariant::Lsh) {
        if (o.buckets < 2 || o.buckets % 2 != 0)
            throw Error("LSH attention needs an even number of buckets >= 2, got " + std::to_string(o.buckets));
        if (o.rounds < 1) throw Error("LSH attention needs rounds >= 1, got " + std::to_string(o.rounds));
        if (o.chunk < 0) throw Error("LSH attention needs a chunk length >= 0, got " + std::to_string(o.chunk));
    }
}

at::Tensor localKeep(std::int64_t n, std::int64_t m, int window, bool twoSided, const at::TensorOptions& options) {
    const at::Tensor p = at::arange(n, options.dtype(at::kLong)).add_(m - n).view({n, 1});
    const at::Tensor j = at::arange(m, options.dtype(at::kLong)).view({1, m});
    const at::Tensor d = p - j;  // > 0: key in the past
    if (twoSided) return d.abs() < window;
    return at::logical_and(d >= 0, d < window);
}

at::Tensor topkKeep(const at::Tensor& logits, int keep) {
    const std::int64_t m = logits.size(-1), k = std::min<std::int64_t>(keep, m);
    const at::Tensor order = std::get<1>(at::sort(logits.detach(), /*stable=*/true, -1, /*descending=*/true));
    at::Tensor out = at::zeros(logits.sizes(), logits.options().dtype(at::kBool));
    out.scatter_(-1, order.narrow(-1, 0, k), true);
    return out.logical_and_(at::isfinite(logits.detach()));
}

at::Tensor lshRotations(std::int64_t d, int buckets, int rounds, std::uint64_t seed) {
    const std::int64_t half = buckets / 2;
    SplitMix rng(seed ^ 0x4C5348ull);  // "LSH": its own stream, apart from FAVOR+'s
    at::Tensor r = at::empty({rounds, d, half}, at::kFloat);
    float* p = r.data_ptr<float>();
    for (std::int64_t i = 0; i < r.numel(); ++i) p[i] = static_cast<float>(rng.normal());
    return r;
}

at::Tensor lshKeep(const at::Tensor& xIn, const SparseOptions& o, bool causal, const at::Tensor& lengthsIn) {
    checkSparseOptions(MapVariant::Lsh, o);
    at::NoGradGuard noGrad;  // the sets are discrete; gradients flow through the logits only
    const std::int64_t n = xIn.size(-2), d = xIn.size(-1), batch = xIn.numel() / std::max<std::int64_t>(1, n * d);
    const at::Tensor x = xIn.detach().to(at::kFloat).reshape({batch, n, d});
    const auto longs = x.options().dtype(at::kLong);
    const at::Tensor lengths =
            lengthsIn.defined() ? lengthsIn.to(longs).reshape({batch, 1}) : at::full({batch, 1}, n, longs);
    const at::Tensor positions = at::arange(n, longs).view({1, n});
    const at::Tensor pad = positions >= lengths;  // [batch, n]
    const at::Tensor chunk =
            o.chunk > 0 ? at::full({batch, 1}, o.chunk, longs)
                        : at::div(lengths + (o.buckets - 1), o.buckets, "floor").clamp_min_(1);  // ceil(len / B)
    const at::Tensor chunks = at::div(lengths + chunk - 1, chunk, "floor").clamp_min_(1).view({batch, 1, 1});
    const at::Tensor rotations = lshRotations(d, o.buckets, o.rounds, o.seed).to(x.device());
    at::Tensor keep = at::zeros({batch, n, n}, x.options().dtype(at::kBool));
    for (int r = 0; r < o.rounds; ++r) {
        const at::Tensor proj = at::matmul(x, rotations[r]);  // [batch, n, B/2]
        at::Tensor bucket = at::cat({proj, -proj}, -1).argmax(-1);
        bucket.masked_fill_(pad, o.buckets);  // padding sorts after every real position
        const at::Tensor order = std::get<1>(at::sort(bucket * n + positions, -1));
        at::Tensor slot = at::empty_like(order);
        slot.scatter_(1, order, positions.expand({batch, n}).contiguous());
        const at::Tensor c = at::div(slot, chunk, "floor");  // [batch, n] chunk of each position
        const at::Tensor ci = c.unsqueeze(2), cj = c.unsqueeze(1);
        const at::Tensor before = at::remainder(ci - 1 + chunks, chunks);
        keep.logical_or_(at::logical_or(cj == ci, cj == before));
    }
    keep.logical_and_(pad.logical_not().unsqueeze(1));
    if (causal) keep.logical_and_(at::ones({n, n}, keep.options()).tril_());
    const at::Tensor eye = at::eye(n, keep.options());
    const at::Tensor others = keep.logical_and(eye.logical_not());
    const at::Tensor alone = others.any(-1, /*keepdim=*/true).logical_not();
    at::Tensor out = others.logical_or(eye.logical_and(alone));
    std::vector<std::int64_t> shape(xIn.sizes().begin(), xIn.sizes().end());
    shape.back() = n;
    return out.view(shape).to(xIn.device());
}

at::Tensor softmaxKept(const at::Tensor& logits, const at::Tensor& keep) {
    const at::Tensor kept = at::logical_and(keep, at::isfinite(logits));
    const at::Tensor any = kept.any(-1, /*keepdim=*/true);
    // Rows without a kept key are softmaxed over zeros and then zeroed: no NaN, in values or gradients.
    at::Tensor masked = logits.masked_fill(kept.logical_not(), -std::numeric_limits<double>::infinity())
                                .masked_fill(any.logical_not(), 0.0);
    return at::softmax(masked, -1) * any.to(logits.scalar_type());
}

at::Tensor sparseKeep(MapVariant variant, const SparseOptions& o, const at::Tensor& logits, const at::Tensor& x,
                      bool causal) {
    checkSparseOptions(variant, o);
    const std::int64_t n = logits.size(-2), m = logits.size(-1);
    switch (variant) {
        case MapVariant::Local: return localKeep(n, m, o.window, o.twoSided, logits.options());
        case MapVariant::TopK: return topkKeep(logits, o.keep);
        case MapVariant::Lsh:
            if (n != m)
                throw Error("LSH attention hashes one sequence as queries and keys; this block has " +
                            std::to_string(n) + " queries and " + std::to_string(m) + " keys");
            return lshKeep(x, o, causal);
        default: break;
    }
    throw Error("sparseKeep: not a sparse variant");
}

at::Tensor cosFeatures(const at::Tensor& x, std::int64_t M) {
    const std::int64_t n = x.size(-2);
    const at::Tensor angle = at::arange(n, x.options()).mul_(kPi / (2.0 * static_cast<double>(M))).unsqueeze(-1);
    const at::Tensor r = at::relu(x);
    return at::cat({r * at::cos(angle), r * at::sin(angle)}, -1);
}

at::Tensor cosProbs(const at::Tensor& q, const at::Tensor& k, const MaskSpec& mask) {
    const std::int64_t M = std::max(q.size(0), k.size(0));
    return linearMapFromFeatures(cosFeatures(q, M), cosFeatures(k, M), mask);
}

at::Tensor relativeBias(const at::Tensor& table, std::int64_t n, std::int64_t m) {
    const std::int64_t H = table.size(0), K = (table.size(1) - 1) / 2;
    const auto longs = table.options().dtype(at::kLong);
    const at::Tensor p = at::arange(n, longs).add_(m - n).view({n, 1});
    const at::Tensor index = (at::arange(m, longs).view({1, m}) - p).clamp_(-K, K).add_(K);
    return table.index_select(1, index.reshape({-1})).view({H, n, m});
}

at::Tensor learnedGate(const at::Tensor& q, const at::Tensor& w, const at::Tensor& b) {
    const std::int64_t H = w.size(0), d = w.size(1);
    return at::sigmoid((q * w.view({H, 1, d})).sum(-1) + b.view({H, 1}));
}

}  // namespace attnscope
