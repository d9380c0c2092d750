// Double-precision attention written from the definitions, for the internal tests:
//   p_ij = softmax_j( (cap(scale · q_i·k_j) + slope · j) / T ) over allowed keys, exactly 0 elsewhere,
// allowed: j <= i + (m - n) when causal, j > i + (m - n) - window when windowed, keyAllowed[j].
#pragma once

#include "attention/attention_ops.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace attnscope::testref {

// [n, m] row-major map of one head: q [n, d], k [m, d].
inline std::vector<double> referenceMap(const at::Tensor& q, const at::Tensor& k, const MaskSpec& mask, double scale,
                                        double softcap, double slope, double temperature) {
    const auto n = q.size(0), m = k.size(0), d = q.size(1);
    const at::Tensor qd = q.to(at::kDouble).contiguous(), kd = k.to(at::kDouble).contiguous();
    const double* qp = qd.data_ptr<double>();
    const double* kp = kd.data_ptr<double>();
    std::vector<bool> keyOk(static_cast<std::size_t>(m), true);
    if (mask.keyAllowed.defined())
        for (std::int64_t j = 0; j < m; ++j) keyOk[j] = mask.keyAllowed[j].item<bool>();
    std::vector<double> out(n * m, 0.0);
    for (std::int64_t i = 0; i < n; ++i) {
        std::vector<double> logit(m, -std::numeric_limits<double>::infinity());
        double top = -std::numeric_limits<double>::infinity();
        for (std::int64_t j = 0; j < m; ++j) {
            const std::int64_t last = i + (m - n);
            if (mask.causal && j > last) continue;
            if (mask.window > 0 && j <= last - mask.window) continue;
            if (!keyOk[j]) continue;
            double dot = 0;
            for (std::int64_t c = 0; c < d; ++c) dot += qp[i * d + c] * kp[j * d + c];
            double x = scale * dot;
            if (softcap > 0) x = softcap * std::tanh(x / softcap);
            logit[j] = (x + slope * j) / temperature;
            top = std::max(top, logit[j]);
        }
        double sum = 0;
        for (std::int64_t j = 0; j < m; ++j) sum += std::isfinite(logit[j]) ? std::exp(logit[j] - top) : 0.0;
        for (std::int64_t j = 0; j < m; ++j)
            out[i * m + j] = std::isfinite(logit[j]) ? std::exp(logit[j] - top) / sum : 0.0;
    }
    return out;
}

inline double maxDiff(const at::Tensor& map, const std::vector<double>& ref) {
    const at::Tensor m = map.to(at::kDouble).contiguous();
    double worst = 0;
    for (std::int64_t i = 0; i < m.numel(); ++i) worst = std::max(worst, std::abs(m.data_ptr<double>()[i] - ref[i]));
    return worst;
}

}  // namespace attnscope::testref
