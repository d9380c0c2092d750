// ALTI from its definition (issue 31) in double precision with plain loops, shared by the ALTI
// tests of the pretrained families (test_alti.cpp) and of the built-in models
// (test_builtin_sources.cpp).
#pragma once

#include "value_refs.h"

#include <algorithm>
#include <cmath>

namespace attnscope::testing {

// One layer's inputs: the head outputs, the residual x_i entering the block, b_O (empty: none)
// and, for post-norm blocks, the LayerNorm after the residual add.
struct AltiRef {
    LayerRef heads;
    std::vector<Vec> x;
    Vec bias;
    bool post = false;      // LN(x + attn): γ, β, eps
    bool sandwich = false;  // x + RMSNorm(attn): gamma is the effective scale (Gemma: 1 + γ)
    Vec gamma, beta;
    double eps = 0;
};

inline double l1(const Vec& v) {
    double s = 0;
    for (double e : v) s += std::abs(e);
    return s;
}

// C[i * n + j] from the definition: T_i(x_j), y_i = Σ_j T_i(x_j), c_ij, rows normalised.
inline Vec refAlti(const AltiRef& r, int n) {
    const std::size_t E = r.x[0].size(), H = r.heads.f.size();
    Vec out(static_cast<std::size_t>(n) * n, 0.0);
    for (int i = 0; i < n; ++i) {
        std::vector<Vec> t(n, Vec(E, 0.0));
        for (int j = 0; j < n; ++j)
            for (std::size_t h = 0; h < H; ++h)
                for (std::size_t e = 0; e < E; ++e) t[j][e] += r.heads.alpha[h][i * n + j] * r.heads.f[h][j][e];
        for (std::size_t e = 0; e < E; ++e) t[i][e] += r.bias.empty() ? 0.0 : r.bias[e];
        if (r.sandwich) {  // the norm at token i's own scale, from the attention output Σ_j t_ij
            double ms = 0;
            for (std::size_t e = 0; e < E; ++e) {
                double a = 0;
                for (const Vec& tj : t) a += tj[e];
                ms += a * a / E;
            }
            for (Vec& tj : t)
                for (std::size_t e = 0; e < E; ++e) tj[e] *= r.gamma[e] / std::sqrt(ms + r.eps);
        }
        for (std::size_t e = 0; e < E; ++e) t[i][e] += r.x[i][e];
        if (r.post) {  // LN(Σ_j t_ij) linearised at i: σ from the sum's biased variance
            Vec s(E, 0.0);
            for (const Vec& tj : t)
                for (std::size_t e = 0; e < E; ++e) s[e] += tj[e];
            double mean = 0, var = 0;
            for (double v : s) mean += v / E;
            for (double v : s) var += (v - mean) * (v - mean) / E;
            const double sigma = std::sqrt(var + r.eps);
            for (int j = 0; j < n; ++j) {
                double m = 0;
                for (double v : t[j]) m += v / E;
                for (std::size_t e = 0; e < E; ++e)
                    t[j][e] = r.gamma[e] * (t[j][e] - m) / sigma + (j == i ? r.beta[e] : 0.0);
            }
        }
        Vec y(E, 0.0);
        for (const Vec& tj : t)
            for (std::size_t e = 0; e < E; ++e) y[e] += tj[e];
        Vec c(n);
        double total = 0;
        for (int j = 0; j < n; ++j) {
            Vec rest(E);
            for (std::size_t e = 0; e < E; ++e) rest[e] = y[e] - t[j][e];
            c[j] = std::max(0.0, l1(y) - l1(rest));
            total += c[j];
        }
        for (int j = 0; j < n; ++j) out[i * n + j] = c[j] / total;
    }
    return out;
}

}  // namespace attnscope::testing
