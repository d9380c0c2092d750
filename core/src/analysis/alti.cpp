// ALTI and its rollout (analysis/alti.h) from a Trace's recorded values and residuals.
#include "attnscope/analysis/alti.h"

#include "layer_alpha.h"
#include "attention/blocked_attention.h"
#include "attention/trace_impl.h"
#include "attnscope/analysis/value_norm.h"
#include "attnscope/runtime/error.h"
#include "runtime/torch_errors.h"
#include "runtime/vector_math.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>

namespace attnscope {

namespace alti_detail {

typedef float V16 __attribute__((vector_size(64)));
typedef std::int32_t I16 __attribute__((vector_size(64)));

constexpr int kRows = 8;  // query rows per kernel call: each load of f_h(x̃_j) feeds 8 rows

// For kRows rows r: out[r] = ‖y_r − T_r‖₁ with T_r = s_r ⊙ (Σ_h a[r·H + h] f_h − mean[r]) + extra_r
// (extra_r may be null), f holding H rows of E floats: one key's head outputs. T is formed 32
// components at a time in registers (16 independent sums: 8 rows × 2 vectors), never stored.
// External linkage for GCC's target_clones.
ATTNSCOPE_CLONES void l1Residues(const float* const* y, const float* f, const float* a, int H, std::int64_t E,
                                 const float* const* s, const float* mean, const float* const* extra, double* out) {
    V16 sum[kRows] = {};
    std::int64_t e = 0;
    for (; e + 32 <= E; e += 32) {
        V16 t[kRows][2] = {};
        for (int h = 0; h < H; ++h) {
            V16 f0, f1;
            std::memcpy(&f0, f + h * E + e, sizeof f0);
            std::memcpy(&f1, f + h * E + e + 16, sizeof f1);
            for (int r = 0; r < kRows; ++r) {
                const float w = a[r * H + h];
                t[r][0] += w * f0;
                t[r][1] += w * f1;
            }
        }
        for (int r = 0; r < kRows; ++r)
            for (int c = 0; c < 2; ++c) {
                V16 yv, sv;
                std::memcpy(&yv, y[r] + e + 16 * c, sizeof yv);
                std::memcpy(&sv, s[r] + e + 16 * c, sizeof sv);
                V16 diff = yv - sv * (t[r][c] - mean[r]);
                if (extra[r]) {
                    V16 xv;
                    std::memcpy(&xv, extra[r] + e + 16 * c, sizeof xv);
                    diff -= xv;
                }
                sum[r] += reinterpret_cast<V16>(reinterpret_cast<I16>(diff) & 0x7fffffff);
            }
    }
    for (int r = 0; r < kRows; ++r) {
        double total = 0;
        for (int k = 0; k < 16; ++k) total += sum[r][k];
        for (std::int64_t x = e; x < E; ++x) {
            float t = 0;
            for (int h = 0; h < H; ++h) t += a[r * H + h] * f[h * E + x];
            total += std::abs(y[r][x] - s[r][x] * (t - mean[r]) - (extra[r] ? extra[r][x] : 0.0f));
        }
        out[r] = total;
    }
}

// Everything below is file-local; named (not anonymous) so that a unity batch with other
// sources' anonymous helpers (value_norm.cpp's toHeadMap) does not clash.
using Norm = AttentionResidual::Norm;

at::Tensor cpuFloat(const at::Tensor& t) { return t.to(at::kCPU, at::kFloat).contiguous(); }

HeadMap toHeadMap(const at::Tensor& t) {
    const at::Tensor c = cpuFloat(t);
    HeadMap out;
    out.rows = static_cast<int>(c.size(0));
    out.cols = static_cast<int>(c.size(1));
    out.values.assign(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
    return out;
}

const LayerCapture& altiLayer(const Trace& trace, int block, int layer, const char* what) {
    const auto& infos = trace.blocks();
    if (block < 0 || block >= static_cast<int>(infos.size()))
        throw Error(std::string(what) + ": block " + std::to_string(block) + " is out of range");
    const BlockInfo& info = infos[block];
    if (layer < 0 || layer >= info.layers)
        throw Error(std::string(what) + ": layer " + std::to_string(layer) + " is out of range (0.." +
                    std::to_string(info.layers - 1) + ")");
    if (info.name == "decoder" || info.name == "cross")
        throw Error(std::string(what) + ": the encoder-decoder's '" + info.name +
                    "' block mixes the decoder's and the encoder's streams; ALTI is defined here for "
                    "self-attention over one stream (the 'encoder' block)");
    if (!hasAltiInputs(trace, block))
        throw Error(std::string(what) + ": the '" + info.name +
                    "' attention block recorded no value vectors and residuals (run with "
                    "RunOptions::captureValues)");
    const LayerCapture& cap = trace.impl().blocks[block].layers[layer];
    if (cap.q.size(1) != cap.k.size(1))
        throw Error(std::string(what) + ": the '" + info.name + "' block's maps are not square (" +
                    std::to_string(cap.q.size(1)) + " queries, " + std::to_string(cap.k.size(1)) + " keys)");
    return cap;
}

// One layer's inputs as the row blocks read them (CPU, float32 unless said).
struct LayerWork {
    const LayerCapture* cap = nullptr;
    const BlockInfo* info = nullptr;
    std::int64_t n = 0, H = 0, E = 0, d = 0;
    at::Tensor heads;  // [n, H, E]: f_h(x̃_j), zero for heads the model masked
    at::Tensor means;  // [n, H]: their means over E (centred norms only)
    at::Tensor values, wo;
    at::Tensor bias, weight, normBias;  // [E] float64: zeros / ones where the layer has none
    const LayerAlpha* alpha = nullptr;  // α as Trace::map computes it, by row blocks
    bool centred = false;
};

LayerWork layerWork(const LayerCapture& cap, const BlockInfo& info, const LayerAlpha& alpha) {
    LayerWork w;
    w.alpha = &alpha;
    w.cap = &cap;
    w.info = &info;
    w.n = cap.q.size(1);
    w.H = info.heads;
    w.d = cap.values.size(2);
    w.E = cap.outProjection.size(1);
    w.values = cpuFloat(cap.values);
    w.wo = cpuFloat(cap.outProjection);
    w.heads = at::zeros({w.n, w.H, w.E}, w.values.options());
    for (int h = 0; h < w.H; ++h)
        if (std::find(cap.maskedHeads.begin(), cap.maskedHeads.end(), h) == cap.maskedHeads.end())
            w.heads.select(1, h).copy_(at::mm(w.values[info.kvGroup(h)], w.wo.narrow(0, h * w.d, w.d)));
    const AttentionResidual& r = cap.residual;
    w.centred = r.norm != Norm::None && !r.rms;
    if (w.centred) w.means = w.heads.mean(-1).contiguous();
    const auto dbl = at::TensorOptions().dtype(at::kDouble);
    const auto orFill = [&](const at::Tensor& t, double v) {
        return t.defined() ? t.to(at::kDouble) : at::full({w.E}, v, dbl);
    };
    w.bias = orFill(r.bias, 0);
    w.weight = orFill(r.weight, 1);
    w.normBias = orFill(r.normBias, 0);
    return w;
}

// (mean, σ) per row of s [rows, E] as the norm computes them (biased variance; RMS: no mean).
std::pair<at::Tensor, at::Tensor> normStats(const at::Tensor& s, bool rms, double eps) {
    if (rms) return {at::zeros({s.size(0), 1}, s.options()), (s.pow(2).mean(-1, true) + eps).sqrt()};
    const at::Tensor mean = s.mean(-1, true);
    return {mean, ((s - mean).pow(2).mean(-1, true) + eps).sqrt()};
}

// Rows [start, start + len) of C into out [n, n] (row-major float32).
void altiRows(const LayerWork& w, std::int64_t start, std::int64_t len, float* out) {
    const LayerCapture& cap = *w.cap;
    const std::int64_t n = w.n, H = w.H, E = w.E, d = w.d;
    KeySpan span = keySpan(cap.mask, n, n, start, len);
    span.lo = std::min(span.lo, start);  // the block's own tokens carry the residual
    span.hi = std::max(span.hi, start + len);
    const std::int64_t S = span.size();
    std::vector<at::Tensor> alpha;
    for (int h = 0; h < H; ++h) alpha.push_back(w.alpha->rows(h, start, len, span));
    const at::Tensor a = cpuFloat(at::stack(alpha));  // [H, len, S]
    // The block's attention output Σ_h α_h V_g W_O^h + b_O, [len, E] float64.
    at::Tensor context = at::empty({len, H * d}, a.options());
    for (int h = 0; h < H; ++h)
        context.narrow(1, h * d, d).copy_(at::mm(a[h], w.values[w.info->kvGroup(h)].narrow(0, span.lo, S)));
    const at::Tensor attn = at::mm(context, w.wo).to(at::kDouble) + w.bias;
    const at::Tensor x = cap.residual.residual.narrow(0, start, len).to(at::kCPU, at::kDouble);
    const AttentionResidual& r = cap.residual;
    at::Tensor y, scale, extra;  // [len, E]: y_i, the linear norm's scale at i, T_i(x_i)'s own terms
    if (r.norm == Norm::None) {
        y = x + attn;
        scale = at::ones_like(y);
        extra = x + w.bias;
    } else if (r.norm == Norm::Post) {
        const auto [mean, sigma] = normStats(x + attn, r.rms, r.eps);
        scale = w.weight / sigma;
        y = scale * (x + attn - mean) + w.normBias;
        const at::Tensor own = x + w.bias;
        extra = scale * (w.centred ? own - own.mean(-1, true) : own) + w.normBias;
    } else {
        const auto [mean, sigma] = normStats(attn, r.rms, r.eps);
        scale = w.weight / sigma;
        y = x + scale * (attn - mean) + w.normBias;
        extra = x + scale * (w.centred ? w.bias - w.bias.mean() : w.bias) + w.normBias;
    }
    const at::Tensor normY = y.abs().sum(-1).contiguous();
    const at::Tensor yf = cpuFloat(y), sf = cpuFloat(scale), xf = cpuFloat(extra);
    const float *A = a.data_ptr<float>(), *F = w.heads.data_ptr<float>();
    const float* means = w.centred ? w.means.data_ptr<float>() : nullptr;
    const double* ny = normY.data_ptr<double>();
    std::vector<double> c(static_cast<std::size_t>(len * S), 0.0);
    // Keys outside, rows inside: f_h(x̃_j) stays in cache for the block's rows, which go through
    // the kernel kRows at a time (the rows that see key j; a short last group repeats its last row).
    std::vector<float> ah(static_cast<std::size_t>(kRows * H)), mean(kRows);
    std::vector<std::int64_t> active;
    const float* yr[kRows];
    const float* sc[kRows];
    const float* own[kRows];
    double dist[kRows];
    for (std::int64_t j = span.lo; j < span.hi; ++j) {
        const float* fj = F + j * H * E;
        active.clear();
        for (std::int64_t row = 0; row < len; ++row) {
            bool any = start + row == j;
            for (int h = 0; h < H && !any; ++h) any = A[(h * len + row) * S + (j - span.lo)] != 0.0f;
            if (any) active.push_back(row);  // else T_i(x_j) = 0: c_ij = 0
        }
        for (std::size_t g = 0; g < active.size(); g += kRows) {
            for (int r = 0; r < kRows; ++r) {
                const std::int64_t row = active[std::min(g + r, active.size() - 1)];
                mean[r] = 0;
                for (int h = 0; h < H; ++h) {
                    ah[r * H + h] = A[(h * len + row) * S + (j - span.lo)];
                    if (means) mean[r] += ah[r * H + h] * means[j * H + h];
                }
                yr[r] = yf.data_ptr<float>() + row * E;
                sc[r] = sf.data_ptr<float>() + row * E;
                own[r] = start + row == j ? xf.data_ptr<float>() + row * E : nullptr;
            }
            alti_detail::l1Residues(yr, fj, ah.data(), static_cast<int>(H), E, sc, mean.data(), own, dist);
            for (std::size_t r = 0; r < kRows && g + r < active.size(); ++r) {
                const std::int64_t row = active[g + r];
                c[row * S + (j - span.lo)] = std::max(0.0, ny[row] - dist[r]);
            }
        }
    }
    for (std::int64_t row = 0; row < len; ++row) {
        double total = 0;
        for (std::int64_t k = 0; k < S; ++k) total += c[row * S + k];
        float* dst = out + (start + row) * n + span.lo;
        for (std::int64_t k = 0; k < S; ++k) dst[k] = total > 0 ? static_cast<float>(c[row * S + k] / total) : 0.0f;
    }
}

// C of one layer, written straight into the map (no [n, n] tensor beside it); row blocks on
// every core, taken in turn.
HeadMap altiHeadMap(const Trace& trace, int block, int layer, const char* what) {
    const LayerCapture& cap = altiLayer(trace, block, layer, what);
    return translateTorchErrors(std::string("computing ") + what, [&] {
        const LayerAlpha alpha(trace, block, layer);
        const LayerWork w = layerWork(cap, trace.blocks()[block], alpha);
        HeadMap out;
        out.rows = out.cols = static_cast<int>(w.n);
        out.values.assign(static_cast<std::size_t>(w.n * w.n), 0.0f);
        const std::int64_t rows = blockedConfig().rows, count = (w.n + rows - 1) / rows;
        const int configured = blockedConfig().threads;
        const int threads = static_cast<int>(std::min<std::int64_t>(
                count, configured > 0 ? configured : std::max(1u, std::thread::hardware_concurrency())));
        std::atomic<std::int64_t> next{0};
        float* dst = out.values.data();
        onThreads(threads, [&](int) {
            for (std::int64_t b; (b = next.fetch_add(1)) < count;)
                altiRows(w, b * rows, std::min(rows, w.n - b * rows), dst);
        });
        return out;
    });
}

}  // namespace alti_detail

bool hasAltiInputs(const Trace& trace, int block) {
    if (!hasValues(trace, block)) return false;
    for (const LayerCapture& cap : trace.impl().blocks[block].layers)
        if (!cap.residual.residual.defined()) return false;
    return true;
}

HeadMap altiMap(const Trace& trace, int block, int layer) {
    return alti_detail::altiHeadMap(trace, block, layer, "alti");
}

HeadMap altiRolloutStep(const Trace& trace, int block, int layer, const HeadMap& previous) {
    HeadMap map = alti_detail::altiHeadMap(trace, block, layer, "alti-rollout");
    if (layer == 0) return map;
    const at::Tensor c = at::from_blob(map.values.data(), {map.rows, map.cols}, at::TensorOptions().dtype(at::kFloat));
    if (previous.rows != map.rows || previous.cols != map.cols ||
        previous.values.size() != static_cast<std::size_t>(previous.rows) * previous.cols)
        throw Error("alti-rollout: the previous layer's rollout is " + std::to_string(previous.rows) + "x" +
                    std::to_string(previous.cols) + ", layer " + std::to_string(layer) + " needs " +
                    std::to_string(map.rows) + "x" + std::to_string(map.cols));
    const at::Tensor r = at::from_blob(const_cast<float*>(previous.values.data()), {previous.rows, previous.cols},
                                       at::TensorOptions().dtype(at::kFloat));
    return alti_detail::toHeadMap(translateTorchErrors("computing alti-rollout", [&] { return at::mm(c, r); }));
}

void altiRollout(const Trace& trace, int block, const std::function<void(int, const HeadMap&)>& layer) {
    alti_detail::altiLayer(trace, block, 0, "alti-rollout");  // refuses before any work
    HeadMap rollout;
    for (int l = 0; l < trace.blocks()[block].layers; ++l) {
        rollout = altiRolloutStep(trace, block, l, rollout);
        layer(l, rollout);
    }
}

HeadMap altiRolloutMap(const Trace& trace, int block, int layer) {
    alti_detail::altiLayer(trace, block, layer, "alti-rollout");
    HeadMap rollout;
    for (int l = 0; l <= layer; ++l) rollout = altiRolloutStep(trace, block, l, rollout);
    return rollout;
}

}  // namespace attnscope
