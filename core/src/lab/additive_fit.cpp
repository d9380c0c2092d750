// Fitting additive attention to a pretrained head's dot-product map (see lab.h). Gradients are
// written out by hand, block by block over queries, so no [n, m, width] tensor exists and no
// autograd is needed:
//   logits_ij = Σ_w v_w t_ijw,  t_ijw = tanh(a_iw + b_jw),  a = Q W_qᵀ,  b = K W_kᵀ
//   L = (1/R) Σ_i KL(P_i ‖ softmax(logits_i))  =>  ∂L/∂logits_ij = (S_ij - P_ij) / R = G_ij
//   ∂L/∂v_w = Σ_ij G_ij t_ijw,  ∂L/∂a_iw = Σ_j G_ij v_w (1 - t_ijw²),  ∂L/∂b_jw = Σ_i (same)
#include "attnscope/runtime/error.h"
#include "attnscope/lab/lab.h"
#include "attnscope/analysis/metrics.h"
#include "adam.h"
#include "attention/rng.h"
#include "attention/trace_impl.h"
#include "runtime/torch_errors.h"

#include <c10/core/InferenceMode.h>

#include <cmath>

namespace attnscope {

namespace {

constexpr std::int64_t kBlockElements = std::int64_t{1} << 21;

at::Tensor gaussian(SplitMix& rng, std::vector<std::int64_t> shape, double stddev) {
    std::int64_t count = 1;
    for (auto s : shape) count *= s;
    std::vector<float> values(static_cast<std::size_t>(count));
    for (float& v : values) v = static_cast<float>(rng.normal() * stddev);
    return at::from_blob(values.data(), shape, at::kFloat).clone();
}

HeadMap fitToHeadMap(const at::Tensor& probs) {
    at::Tensor p = probs.to(at::kCPU, at::kFloat).contiguous();
    HeadMap out{static_cast<int>(p.size(0)), static_cast<int>(p.size(1)), {}};
    out.values.assign(p.data_ptr<float>(), p.data_ptr<float>() + p.numel());
    return out;
}

}  // namespace

AdditiveFit fitAdditive(const Trace& trace, int block, int layer, int head, const AdditiveFitOptions& options) {
    if (options.width < 1 || options.steps < 1 || options.maxQueries < 1)
        throw Error("additive fit: width, steps and maxQueries must be >= 1");
    if (!(options.learningRate > 0) || !std::isfinite(options.learningRate))
        throw Error("additive fit: the learning rate must be a finite number > 0");
    MapOptions target;
    target.variant = MapVariant::Dot;
    target.temperature = options.temperature;
    const Trace::Impl& impl = trace.impl();
    at::Tensor P = impl.mapTensor(block, layer, head, target).to(at::kFloat);  // checks indices and T
    const BlockInfo& info = impl.infos[block];
    const LayerCapture& cap = impl.blocks[block].layers[layer];
    if (impl.mapsOnly)
        throw Error(
                impl.source +
                ": the maps were read from this file, which holds no queries and keys to fit additive attention on");
    if (cap.kind != AttentionKind::Dot)
        throw Error(std::string("additive fit needs a dot-product layer; layer ") + std::to_string(layer) + " of '" +
                    info.name + "' is " + kindName(cap.kind));

    return translateTorchErrors("fitting additive attention", [&] {
        c10::InferenceMode guard;
        const int group = info.kvGroup(head);
        at::Tensor q = cap.q[head].to(at::kFloat), k = cap.k[group].to(at::kFloat);
        const std::int64_t n = q.size(0), m = k.size(0), d = q.size(1), w = options.width;
        // Inputs normalised to unit RMS for conditioning; the scales are folded back at the end.
        const double sq = std::max(q.pow(2).mean().item<double>(), 1e-12),
                     sk = std::max(k.pow(2).mean().item<double>(), 1e-12);
        const double qScale = 1 / std::sqrt(sq), kScale = 1 / std::sqrt(sk);
        at::Tensor qn = q * qScale, kn = k * kScale;

        SplitMix rng(options.seed);
        const auto dev = q.options();
        at::Tensor Wq = gaussian(rng, {w, d}, 1 / std::sqrt(double(d))).to(dev);
        at::Tensor Wk = gaussian(rng, {w, d}, 1 / std::sqrt(double(d))).to(dev);
        at::Tensor v = gaussian(rng, {w}, 1 / std::sqrt(double(w))).to(dev);

        // The queries the loss uses.
        at::Tensor rows;
        if (n <= options.maxQueries) {
            rows = at::arange(n, dev.dtype(at::kLong));
        } else {
            std::vector<std::int64_t> pick;
            for (int r = 0; r < options.maxQueries; ++r) pick.push_back(r * (n - 1) / (options.maxQueries - 1));
            rows = at::tensor(pick, at::kLong).to(dev.device());
        }
        const std::int64_t R = rows.size(0);
        at::Tensor Pr = P.index_select(0, rows);
        at::Tensor Qr = qn.index_select(0, rows);
        at::Tensor mask = additiveMask(cap.mask, n, m, dev);
        at::Tensor maskR = mask.defined() ? mask.index_select(0, rows) : mask;
        const double plogp = at::xlogy(Pr, Pr).sum().item<double>() / R;
        const std::int64_t blockRows = std::max<std::int64_t>(1, kBlockElements / std::max<std::int64_t>(1, m * w));

        AdditiveFit fit;
        Adam adamQ, adamK, adamV;
        auto fullMap = [&] { return additiveProbs(at::mm(qn, Wq.t()), at::mm(kn, Wk.t()), v, cap.mask, 1.0); };
        const HeadMap targetMap = fitToHeadMap(P);
        fit.initialKl = meanRowKl(targetMap, fitToHeadMap(fullMap()));
        for (int step = 1; step <= options.steps; ++step) {
            at::Tensor A = at::mm(Qr, Wq.t()), B = at::mm(kn, Wk.t());  // [R, w], [m, w]
            at::Tensor logits = at::empty({R, m}, dev);
            for (std::int64_t s = 0; s < R; s += blockRows) {
                const auto len = std::min(blockRows, R - s);
                logits.narrow(0, s, len).copy_(
                        at::matmul(at::tanh(A.narrow(0, s, len).unsqueeze(1) + B.unsqueeze(0)), v));
            }
            if (maskR.defined()) logits.add_(maskR);
            at::Tensor logS = at::log_softmax(logits, -1);
            // Σ P log S over allowed keys only (masked entries have P = 0 and log S = -inf).
            const double cross = at::where(Pr > 0, Pr * logS, at::zeros_like(Pr)).sum().item<double>() / R;
            fit.klHistory.push_back(plogp - cross);
            at::Tensor G = (logS.exp() - Pr) / static_cast<double>(R);
            at::Tensor dA = at::empty({R, w}, dev), dB = at::zeros({m, w}, dev), dv = at::zeros({w}, dev);
            for (std::int64_t s = 0; s < R; s += blockRows) {
                const auto len = std::min(blockRows, R - s);
                at::Tensor t = at::tanh(A.narrow(0, s, len).unsqueeze(1) + B.unsqueeze(0));  // [len, m, w]
                at::Tensor g = G.narrow(0, s, len).unsqueeze(-1);                            // [len, m, 1]
                dv.add_((t * g).sum(at::IntArrayRef{0, 1}));
                at::Tensor u = (1 - t.pow(2)).mul_(g).mul_(v);
                dA.narrow(0, s, len).copy_(u.sum(1));
                dB.add_(u.sum(0));
            }
            at::Tensor dWq = at::mm(dA.t(), Qr), dWk = at::mm(dB.t(), kn);
            adamQ.step(Wq, dWq, options.learningRate, step);
            adamK.step(Wk, dWk, options.learningRate, step);
            adamV.step(v, dv, options.learningRate, step);
            if (options.progress && !options.progress(step, options.steps)) throw Cancelled();
        }
        fit.map = fitToHeadMap(fullMap());
        fit.finalKl = meanRowKl(targetMap, fit.map);
        fit.width = static_cast<int>(w);
        fit.headDim = static_cast<int>(d);
        auto flat = [](const at::Tensor& t) {
            at::Tensor c = t.to(at::kCPU, at::kFloat).contiguous();
            return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
        };
        fit.wq = flat(Wq * qScale);
        fit.wk = flat(Wk * kScale);
        fit.v = flat(v);
        return fit;
    });
}

}  // namespace attnscope
