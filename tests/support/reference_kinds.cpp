#include "reference_kinds.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace attnscope::testing {

std::vector<double> softmaxKeptRef(const std::vector<double>& logits, const KeepMask& keep, int n, int m) {
    std::vector<double> out(static_cast<std::size_t>(n) * m, 0.0);
    for (int i = 0; i < n; ++i) {
        double mx = -std::numeric_limits<double>::infinity();
        for (int j = 0; j < m; ++j)
            if (keep[i * m + j] && std::isfinite(logits[i * m + j])) mx = std::max(mx, logits[i * m + j]);
        if (!std::isfinite(mx)) continue;
        double sum = 0;
        for (int j = 0; j < m; ++j)
            if (keep[i * m + j] && std::isfinite(logits[i * m + j]))
                sum += out[i * m + j] = std::exp(logits[i * m + j] - mx);
        for (int j = 0; j < m; ++j) out[i * m + j] /= sum;
    }
    return out;
}

KeepMask localKeepRef(int n, int m, int window, bool twoSided) {
    KeepMask keep(static_cast<std::size_t>(n) * m, 0);
    for (int i = 0; i < n; ++i) {
        const int p = i + m - n;
        for (int j = 0; j < m; ++j) keep[i * m + j] = twoSided ? std::abs(p - j) < window : (j <= p && j > p - window);
    }
    return keep;
}

KeepMask topkKeepRef(const std::vector<double>& logits, const KeepMask& allowed, int n, int m, int k) {
    KeepMask keep(static_cast<std::size_t>(n) * m, 0);
    for (int i = 0; i < n; ++i) {
        // Key j beats key j' when its logit is larger, or equal with a lower index.
        for (int j = 0; j < m; ++j) {
            if (!allowed[i * m + j]) continue;
            int better = 0;
            for (int o = 0; o < m; ++o)
                if (allowed[i * m + o] &&
                    (logits[i * m + o] > logits[i * m + j] || (logits[i * m + o] == logits[i * m + j] && o < j)))
                    ++better;
            keep[i * m + j] = better < k;
        }
    }
    return keep;
}

namespace {
namespace reference_kinds {  // this file's helpers, apart from the other support files' in a unity build

struct Mix {  // SplitMix64 as core's rng.h documents it, and Box-Muller
    std::uint64_t state;
    explicit Mix(std::uint64_t seed) : state(seed * 0x2545f4914f6cdd1dull + 0x1234567ull) {}
    std::uint64_t next() {
        std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    double uniform() { return (static_cast<double>(next() >> 11) + 0.5) / 9007199254740992.0; }
    double normal() {
        const double u = uniform(), v = uniform();
        return std::sqrt(-2.0 * std::log(u)) * std::cos(2 * 3.14159265358979323846 * v);
    }
};

}  // namespace reference_kinds
}  // namespace

std::vector<double> lshRotationsRef(int d, int buckets, int rounds, std::uint64_t seed) {
    using namespace reference_kinds;
    Mix rng(seed ^ 0x4C5348ull);
    std::vector<double> r(static_cast<std::size_t>(rounds) * d * (buckets / 2));
    for (double& v : r) v = static_cast<float>(rng.normal());  // core keeps them as float32
    return r;
}

std::vector<int> lshBucketsRef(const std::vector<double>& x, int n, int d, int buckets, int round,
                               const std::vector<double>& rotations) {
    const int half = buckets / 2;
    std::vector<int> out(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
        std::vector<double> h(static_cast<std::size_t>(buckets));
        for (int c = 0; c < half; ++c) {
            double s = 0;
            for (int a = 0; a < d; ++a)
                s += x[i * d + a] * rotations[(static_cast<std::size_t>(round) * d + a) * half + c];
            h[c] = s;
            h[c + half] = -s;
        }
        out[i] = static_cast<int>(std::max_element(h.begin(), h.end()) - h.begin());
    }
    return out;
}

KeepMask lshKeepRef(const std::vector<double>& x, int n, int d, int buckets, int rounds, int chunk, std::uint64_t seed,
                    bool causal) {
    const std::vector<double> rot = lshRotationsRef(d, buckets, rounds, seed);
    const int c = chunk > 0 ? chunk : std::max(1, (n + buckets - 1) / buckets);
    const int chunks = std::max(1, (n + c - 1) / c);
    KeepMask keep(static_cast<std::size_t>(n) * n, 0);
    for (int r = 0; r < rounds; ++r) {
        const std::vector<int> b = lshBucketsRef(x, n, d, buckets, r, rot);
        std::vector<int> order(static_cast<std::size_t>(n));
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](int a, int z) { return b[a] < b[z]; });
        std::vector<int> chunkOf(static_cast<std::size_t>(n));
        for (int s = 0; s < n; ++s) chunkOf[order[s]] = s / c;
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) {
                const int before = (chunkOf[i] - 1 + chunks) % chunks;
                if (chunkOf[j] == chunkOf[i] || chunkOf[j] == before) keep[i * n + j] = 1;
            }
    }
    for (int i = 0; i < n; ++i) {
        bool other = false;
        for (int j = 0; j < n; ++j) {
            if (causal && j > i) keep[i * n + j] = 0;
            if (j != i && keep[i * n + j]) other = true;
        }
        keep[i * n + i] = !other;
    }
    return keep;
}

std::vector<double> cosMapRef(const std::vector<double>& q, const std::vector<double>& k, int n, int m, int d,
                              const KeepMask& allowed) {
    const double M = std::max(n, m), pi = 3.14159265358979323846;
    std::vector<double> out(static_cast<std::size_t>(n) * m, 0.0);
    for (int i = 0; i < n; ++i) {
        double sum = 0;
        for (int j = 0; j < m; ++j) {
            if (!allowed[i * m + j]) continue;
            double s = 0;
            for (int a = 0; a < d; ++a) s += std::max(0.0, q[i * d + a]) * std::max(0.0, k[j * d + a]);
            sum += out[i * m + j] = s * std::cos(pi / 2 * (i - j) / M);
        }
        if (sum > 0)
            for (int j = 0; j < m; ++j) out[i * m + j] /= sum;
    }
    return out;
}

std::vector<double> hedgehogFeaturesRef(const std::vector<double>& x, const std::vector<double>& w,
                                        const std::vector<double>& b, int d, int f) {
    std::vector<double> u(static_cast<std::size_t>(f));
    for (int r = 0; r < f; ++r) {
        u[r] = b[r];
        for (int c = 0; c < d; ++c) u[r] += w[static_cast<std::size_t>(r) * d + c] * x[c];
    }
    std::vector<double> phi(static_cast<std::size_t>(2 * f));
    for (int sign = 0; sign < 2; ++sign) {
        double mx = -1e300, sum = 0;
        for (int r = 0; r < f; ++r) mx = std::max(mx, sign ? -u[r] : u[r]);
        for (int r = 0; r < f; ++r) sum += std::exp((sign ? -u[r] : u[r]) - mx);
        for (int r = 0; r < f; ++r) phi[sign * f + r] = std::exp((sign ? -u[r] : u[r]) - mx) / sum;
    }
    return phi;
}

std::vector<double> hedgehogMapRef(const std::vector<double>& q, const std::vector<double>& k, int n, int m, int d,
                                   const std::vector<double>& wq, const std::vector<double>& bq,
                                   const std::vector<double>& wk, const std::vector<double>& bk, int f,
                                   const KeepMask& allowed) {
    const auto row = [d](const std::vector<double>& x, int i) {
        return std::vector<double>(x.begin() + static_cast<std::ptrdiff_t>(i) * d,
                                   x.begin() + static_cast<std::ptrdiff_t>(i + 1) * d);
    };
    std::vector<std::vector<double>> phiK;
    for (int j = 0; j < m; ++j) phiK.push_back(hedgehogFeaturesRef(row(k, j), wk, bk, d, f));
    std::vector<double> a(static_cast<std::size_t>(n) * m, 0.0);
    for (int i = 0; i < n; ++i) {
        const std::vector<double> phiQ = hedgehogFeaturesRef(row(q, i), wq, bq, d, f);
        double sum = 0;
        for (int j = 0; j < m; ++j) {
            if (!allowed[static_cast<std::size_t>(i) * m + j]) continue;
            double dot = 0;
            for (int c = 0; c < 2 * f; ++c) dot += phiQ[c] * phiK[j][c];
            a[static_cast<std::size_t>(i) * m + j] = dot;
            sum += dot;
        }
        for (int j = 0; j < m && sum > 0; ++j) a[static_cast<std::size_t>(i) * m + j] /= sum;
    }
    return a;
}

}  // namespace attnscope::testing
