#include "attention_ops.h"

#include "attnscope/runtime/error.h"
#include "additive_cpu.h"
#include "blocked_attention.h"
#include "learned_features.h"

#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <limits>

#ifdef ATTNSCOPE_WITH_CUDA_KERNELS
#include "../../cuda/attention_kernels.h"
#endif

namespace attnscope {

at::Tensor additiveMask(const MaskSpec& mask, std::int64_t n, std::int64_t m, const at::TensorOptions& options) {
    if (!mask.causal && !mask.keyAllowed.defined() && mask.window <= 0 && !mask.blocked.defined()) return {};
    const double ninf = -std::numeric_limits<double>::infinity();
    at::Tensor out = at::zeros({n, m}, options);
    if (mask.causal)  // key j is in the future of query i when j > i + (m - n)
        out.masked_fill_(at::ones({n, m}, options.dtype(at::kBool)).triu_(m - n + 1), ninf);
    if (mask.window > 0)  // key j is outside the window of query i when j <= i + (m - n) - window
        out.masked_fill_(at::ones({n, m}, options.dtype(at::kBool)).tril_(m - n - mask.window), ninf);
    if (mask.keyAllowed.defined())
        out.masked_fill_(mask.keyAllowed.logical_not().to(options.device()).unsqueeze(0), ninf);
    if (mask.blocked.defined()) out.masked_fill_(mask.blocked.to(options.device()), ninf);
    return out;
}

std::string ScoreSpec::extras() const {
    std::string out;
    if (softcap > 0) out = "a tanh soft-cap";
    if (!alibiSlopes.empty()) out += std::string(out.empty() ? "" : " and ") + "ALiBi";
    if (bias.defined()) out += std::string(out.empty() ? "" : " and ") + "a position bias";
    return out;
}

namespace {

// scores [..., n, m] = q·k (any leading head dims, `slopes` [heads] broadcast over them) become
// logits / temperature in place, as ScoreSpec defines them. Columns are key positions
// keyStart, keyStart + 1, ...
void finishLogits(at::Tensor& scores, const ScoreSpec& score, const at::Tensor& slopes, double temperature,
                  std::int64_t keyStart = 0) {
    if (score.softcap > 0 && scores.requires_grad()) {  // autograd keeps tanh's output: no writing over it
        scores = (scores * (score.scale / score.softcap)).tanh() * (score.softcap / temperature);
    } else if (score.softcap > 0) {
        scores.mul_(score.scale / score.softcap).tanh_().mul_(score.softcap / temperature);
    } else {
        scores.mul_(score.scale / temperature);
    }
    if (slopes.defined()) {
        const std::int64_t m = scores.size(-1);
        at::Tensor pos = at::arange(keyStart, keyStart + m, scores.options());
        at::Tensor bias = slopes.to(scores.options()).view({-1, 1, 1}) * (pos.view({1, 1, m}) / temperature);
        if (scores.dim() == 2) bias = bias.squeeze(0);  // one head's [n, m] scores (headProbs' blocked path)
        scores.add_(bias);
    }
    if (score.bias.defined()) scores.add_(score.bias.to(scores.options()), 1.0 / temperature);
}

// The spec's slopes as a [H] float64 CPU tensor, or undefined when it has none.
at::Tensor slopeTensor(const ScoreSpec& score) {
    if (score.alibiSlopes.empty()) return {};
    return at::tensor(score.alibiSlopes, at::TensorOptions().dtype(at::kDouble));
}

}  // namespace

at::Tensor attentionProbs(const at::Tensor& q, const at::Tensor& k, const at::Tensor& additive, const ScoreSpec& score,
                          double temperature, std::int64_t keyStart) {
    const auto H = q.size(0), n = q.size(1), m = k.size(1), Hkv = k.size(0);
    if (!score.alibiSlopes.empty() && static_cast<std::int64_t>(score.alibiSlopes.size()) != H)
        throw Error("attention: " + std::to_string(score.alibiSlopes.size()) + " ALiBi slopes for " +
                    std::to_string(H) + " heads");
    at::Tensor scores;
    if (score.plain() && H == Hkv && additive.defined()) {
        // One BLAS call: mask + alpha · q kᵀ.
        scores = at::baddbmm(additive.expand({H, n, m}), q, k.transpose(1, 2), /*beta=*/1.0, score.scale / temperature);
    } else {
        // Grouped-query attention: view the query heads as [Hkv, H/Hkv * n, d] against each group.
        scores = at::bmm(q.reshape({Hkv, (H / Hkv) * n, q.size(2)}), k.transpose(1, 2)).view({H, n, m});
        finishLogits(scores, score, slopeTensor(score), temperature, keyStart);
        if (additive.defined()) scores.add_(additive);
    }
    if (scores.scalar_type() == at::kHalf || scores.scalar_type() == at::kBFloat16)
        return at::softmax(scores, -1, at::kFloat);
    return at::softmax(scores, -1);
}

at::Tensor headProbs(const at::Tensor& q, const at::Tensor& k, const MaskSpec& mask, const ScoreSpec& score, int head,
                     double temperature) {
#ifdef ATTNSCOPE_WITH_CUDA_KERNELS
    if (q.is_cuda() && q.scalar_type() == at::kFloat && score.plain() && !mask.keyAllowed.defined() &&
        !mask.blocked.defined() && mask.window <= 0) {
        // q kᵀ by cuBLAS (float32, no TF32) into the output, then the row softmax in place: one
        // [n, m] buffer, as the fused kernel had, at the matrix units' and HBM's speed.
        at::Tensor out = at::mm(q, k.t());
        const std::string failed = cuda::softmaxRowsInPlace(out.data_ptr<float>(), static_cast<int>(q.size(0)),
                                                            static_cast<int>(k.size(0)),
                                                            static_cast<float>(score.scale / temperature), mask.causal);
        if (!failed.empty()) throw Error(failed);
        return out;
    }
#endif
    if (q.device().is_cpu()) return blockedHeadProbs(q, k, mask, score, head, temperature);
    ScoreSpec one = score;  // this head's slope and bias only
    if (!score.alibiSlopes.empty()) one.alibiSlopes = {score.alibiSlopes.at(static_cast<std::size_t>(head))};
    if (score.bias.defined()) one.bias = score.bias[head].unsqueeze(0);
    const at::Tensor additive = additiveMask(mask, q.size(0), k.size(0), q.options());
    return attentionProbs(q.unsqueeze(0), k.unsqueeze(0), additive, one, temperature).squeeze(0);
}

at::Tensor headLogits(const at::Tensor& q, const at::Tensor& k, const MaskSpec& mask, const ScoreSpec& score, int head,
                      double temperature) {
    ScoreSpec one = score;  // this head's slope and bias only
    if (!score.alibiSlopes.empty()) one.alibiSlopes = {score.alibiSlopes.at(static_cast<std::size_t>(head))};
    if (score.bias.defined()) one.bias = score.bias[head];
    at::Tensor logits = at::mm(q, k.t());
    finishLogits(logits, one, slopeTensor(one), temperature);
    const at::Tensor additive = additiveMask(mask, q.size(0), k.size(0), logits.options());
    if (additive.defined()) logits.add_(additive);
    return logits;
}

at::Tensor featureMap(const at::Tensor& x, FeatureMap map) {
    switch (map) {
        case FeatureMap::Elu: return at::elu(x) + 1.0;
        case FeatureMap::Relu: return at::relu(x);
        case FeatureMap::Favor:
        case FeatureMap::Cos: break;
    }
    throw Error("featureMap: FAVOR+ and cos need more than the vectors (random features, positions)");
}

at::Tensor linearProbs(const at::Tensor& q, const at::Tensor& k, const MaskSpec& mask, FeatureMap map) {
    return linearMapFromFeatures(featureMap(q, map), featureMap(k, map), mask);
}

at::Tensor linearMapFromFeatures(const at::Tensor& phiQ, const at::Tensor& phiK, const MaskSpec& mask) {
    const std::int64_t n = phiQ.size(0), m = phiK.size(0), offset = m - n, block = 256;
    if (!mask.causal || mask.keyAllowed.defined() || mask.blocked.defined() || mask.window > 0 || offset < 0)
        return normaliseAllowed(at::mm(phiQ, phiK.t()), mask);
    // Causal: each block of query rows multiplies only against the keys it may see.
    at::Tensor out = at::zeros({n, m}, phiQ.options());
    for (std::int64_t s = 0; s < n; s += block) {
        const std::int64_t len = std::min(block, n - s), keys = s + len + offset;
        at::Tensor rows = out.narrow(0, s, len).narrow(1, 0, keys);
        at::mm_out(rows, phiQ.narrow(0, s, len), phiK.narrow(0, 0, keys).t());
        rows.narrow(1, s + offset, len).tril_();
    }
    at::Tensor sums = out.sum(-1, /*keepdim=*/true);
    sums.masked_fill_(sums <= 0, 1.0);
    return out.div_(sums);
}

at::Tensor normaliseAllowed(at::Tensor scores, const MaskSpec& mask) {
    if (mask.causal) scores.tril_(scores.size(1) - scores.size(0));                        // keys j <= i + (m - n)
    if (mask.window > 0) scores.triu_(scores.size(1) - scores.size(0) - mask.window + 1);  // j > i + (m - n) - window
    if (mask.keyAllowed.defined()) scores.mul_(mask.keyAllowed.to(scores.options()).unsqueeze(0));
    if (mask.blocked.defined()) scores.masked_fill_(mask.blocked.to(scores.device()), 0.0);
    // A row whose allowed scores are all zero (relu can do that) has no defined distribution;
    // it is shown as all zeros rather than NaN.
    at::Tensor sums = scores.sum(-1, /*keepdim=*/true);
    sums.masked_fill_(sums <= 0, 1.0);
    return scores.div_(sums);
}

at::Tensor additiveProbs(const at::Tensor& qa, const at::Tensor& ka, const at::Tensor& v, const MaskSpec& mask,
                         double temperature) {
    const auto n = qa.size(0), m = ka.size(0), w = qa.size(1);
#ifdef ATTNSCOPE_WITH_CUDA_KERNELS
    if (qa.is_cuda() && qa.scalar_type() == at::kFloat && w <= cuda::kMaxHeadDim && mask.window <= 0 &&
        !mask.blocked.defined()) {  // fused kernel, see core/cuda
        at::Tensor q = qa.contiguous(), k = ka.contiguous(), vc = v.to(qa.options()).contiguous();
        at::Tensor allowed;
        if (mask.keyAllowed.defined()) allowed = mask.keyAllowed.to(qa.device(), at::kByte).contiguous();
        at::Tensor out = at::empty({n, m}, qa.options());
        const std::string failed =
                cuda::additiveSoftmaxRows(q.data_ptr<float>(), k.data_ptr<float>(), vc.data_ptr<float>(),
                                          allowed.defined() ? allowed.data_ptr<std::uint8_t>() : nullptr,
                                          out.data_ptr<float>(), static_cast<int>(n), static_cast<int>(m),
                                          static_cast<int>(w), static_cast<float>(1.0 / temperature), mask.causal);
        if (!failed.empty()) throw Error(failed);
        return out;
    }
#endif
    at::Tensor logits;
    if (qa.device().is_cpu() && qa.scalar_type() == at::kFloat)
        logits = additiveLogitsCpu(qa, ka, v.to(qa.options()), mask.causal);
    if (!logits.defined()) {
        logits = at::empty({n, m}, qa.options());
        // Blocks of queries sized so that one [block, m, w] temporary stays around 4M elements.
        const std::int64_t block =
                std::max<std::int64_t>(1, (std::int64_t{1} << 22) / std::max<std::int64_t>(1, m * w));
        for (std::int64_t start = 0; start < n; start += block) {
            const auto len = std::min(block, n - start);
            at::Tensor t = at::tanh(qa.narrow(0, start, len).unsqueeze(1) + ka.unsqueeze(0));  // [len, m, w]
            logits.narrow(0, start, len).copy_(at::matmul(t, v));
        }
    }
    if (temperature != 1.0) logits.div_(temperature);
    const at::Tensor additive = additiveMask(mask, n, m, qa.options());
    if (additive.defined()) logits.add_(additive);
    return at::softmax(logits, -1);
}

void checkKnockoutLayers(const std::vector<Knockout>& knockouts, int layers) {
    for (const Knockout& k : knockouts)
        if (k.firstLayer < 0 || k.lastLayer >= layers || k.firstLayer > k.lastLayer)
            throw Error("knockout layers " + std::to_string(k.firstLayer) + "-" + std::to_string(k.lastLayer) +
                        " are not a range within 0.." + std::to_string(layers - 1));
}

at::Tensor knockoutCells(const std::vector<Knockout>& knockouts, int layer, std::int64_t n, const MaskSpec& limits,
                         c10::Device device) {
    at::Tensor cells;
    for (const Knockout& k : knockouts) {
        if (layer < k.firstLayer || layer > k.lastLayer) continue;
        if (!cells.defined()) cells = at::zeros({n, n}, at::TensorOptions().dtype(at::kBool));
        auto cell = cells.accessor<bool, 2>();  // filled on the CPU, then moved once
        for (const std::vector<std::int64_t>* list : {&k.queries, &k.keys})
            for (std::int64_t p : *list)
                if (p < 0 || p >= n)
                    throw Error("knockout position " + std::to_string(p) + " is outside the input (0.." +
                                std::to_string(n - 1) + ")");
        for (std::int64_t q : k.queries)
            for (std::int64_t j : k.keys) cell[q][j] = true;
    }
    if (!cells.defined()) return cells;
    // Every row must keep a key: the causal limit and window, then the knocked-out cells.
    at::Tensor allowed = at::ones({n, n}, at::TensorOptions().dtype(at::kBool));
    if (limits.causal) allowed = allowed.tril();
    if (limits.window > 0) allowed = allowed.triu(1 - limits.window);
    const at::Tensor empty = ((allowed & cells.logical_not()).sum(1) == 0).nonzero();
    if (empty.numel() > 0)
        throw Error("the knockout leaves query position " + std::to_string(empty[0][0].item<std::int64_t>()) +
                    " with no key in layer " + std::to_string(layer));
    return cells.to(device);
}

LayerRun layerRun(const RunOptions& options, const std::string& block, int layer) {
    LayerRun run;
    run.captureValues = options.captureValues;
    const auto& layers = options.temperatureLayers;
    if (layers.empty() || std::find(layers.begin(), layers.end(), layer) != layers.end())
        run.temperature = options.temperature;
    for (const HeadRef& h : options.maskHeads)
        if ((h.block.empty() || h.block == block) && h.layer == layer) run.maskedHeads.push_back(h.head);
    for (const LinearHead& h : options.linearHeads) {
        if ((!h.head.block.empty() && h.head.block != block) || h.head.layer != layer) continue;
        auto& heads = run.linearHeads;
        heads.erase(std::remove_if(heads.begin(), heads.end(),
                                   [&](const LinearHead* p) { return p->head.head == h.head.head; }),
                    heads.end());
        run.linearHeads.push_back(&h);
    }
    return run;
}

at::Tensor weightedValues(const at::Tensor& probs, const at::Tensor& v) {
    const auto H = probs.size(0), n = probs.size(1), Hkv = v.size(0);
    const at::Tensor p = probs.to(v.scalar_type());
    if (H == Hkv) return at::bmm(p, v);
    // Each key/value group serves H / Hkv query heads.
    return at::bmm(p.reshape({Hkv, (H / Hkv) * n, p.size(2)}), v).view({H, n, v.size(2)});
}

void zeroMaskedHeads(at::Tensor& context, const LayerRun& run) {
    for (int h : run.maskedHeads)
        if (h >= 0 && h < context.size(0)) context[h].zero_();
}

at::Tensor attendDot(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const MaskSpec& mask,
                     const ScoreSpec& score, const LayerRun& run) {
    // The forward attends in blocks (blocked_attention.h); training (gradients through the
    // attention) takes the whole-score path below.
    const bool needsGrad = at::GradMode::is_enabled() && (q.requires_grad() || k.requires_grad() || v.requires_grad());
    // A few query rows (a cached generation step) take the whole-score path: its [H, n, m] scores
    // are small, and one product per kv group reads each key once, where the blocks would read
    // (or pack) a group's keys once per head.
    const bool fewRows = q.size(1) < 16 && q.device().is_cpu();
    if (!needsGrad && !run.alphas && !fewRows) {
        at::Tensor context = q.device().is_cpu() ? blockedAttend(q, k, v, mask, score, run)
                                                 : deviceBlockedAttend(q, k, v, mask, score, run);
        if (!run.linearHeads.empty()) {
            replaceLinearHeads(context, q, k, v, mask, run.linearHeads);
            zeroMaskedHeads(context, run);
        }
        return context;
    }
    const at::Tensor additive = additiveMask(mask, q.size(1), k.size(1), q.options());
    const at::Tensor probs = attentionProbs(q, k, additive, score, run.temperature);
    if (run.alphas) {
        if (probs.requires_grad()) probs.retain_grad();
        run.alphas->push_back(probs);
    }
    at::Tensor context = weightedValues(probs, v);
    replaceLinearHeads(context, q, k, v, mask, run.linearHeads);
    zeroMaskedHeads(context, run);
    return context;
}

}  // namespace attnscope
