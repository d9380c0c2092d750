#include "favor.h"

#include "attnscope/runtime/error.h"
#include "rng.h"

#include <cmath>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

namespace attnscope {

namespace {

at::Tensor makeFeatures(std::int64_t d, std::int64_t m, std::uint64_t seed) {
    SplitMix rng(seed);
    std::vector<float> out(static_cast<std::size_t>(m * d));
    std::vector<double> block(static_cast<std::size_t>(d * d));
    for (std::int64_t start = 0; start < m; start += d) {
        for (double& x : block) x = rng.normal();
        // Modified Gram-Schmidt on the rows of the d×d Gaussian block.
        for (std::int64_t r = 0; r < d; ++r) {
            double* row = &block[static_cast<std::size_t>(r * d)];
            for (std::int64_t p = 0; p < r; ++p) {
                const double* prev = &block[static_cast<std::size_t>(p * d)];
                double dot = 0;
                for (std::int64_t c = 0; c < d; ++c) dot += row[c] * prev[c];
                for (std::int64_t c = 0; c < d; ++c) row[c] -= dot * prev[c];
            }
            double norm = 0;
            for (std::int64_t c = 0; c < d; ++c) norm += row[c] * row[c];
            norm = std::sqrt(norm);
            for (std::int64_t c = 0; c < d; ++c) row[c] /= norm;
        }
        for (std::int64_t r = 0; r < d && start + r < m; ++r) {
            double chi = 0;  // the norm of an independent N(0, I_d) sample
            for (std::int64_t c = 0; c < d; ++c) {
                const double g = rng.normal();
                chi += g * g;
            }
            chi = std::sqrt(chi);
            for (std::int64_t c = 0; c < d; ++c)
                out[static_cast<std::size_t>((start + r) * d + c)] =
                        static_cast<float>(block[static_cast<std::size_t>(r * d + c)] * chi);
        }
    }
    return at::from_blob(out.data(), {m, d}, at::kFloat).clone();
}

}  // namespace

at::Tensor favorFeatures(std::int64_t d, std::int64_t m, std::uint64_t seed) {
    static std::mutex mutex;
    static std::map<std::tuple<std::int64_t, std::int64_t, std::uint64_t>, at::Tensor> cache;
    const auto key = std::make_tuple(d, m, seed);
    {
        std::lock_guard<std::mutex> lock(mutex);
        if (auto it = cache.find(key); it != cache.end()) return it->second;
    }
    at::Tensor omega = makeFeatures(d, m, seed);
    std::lock_guard<std::mutex> lock(mutex);
    if (cache.size() > 64) cache.clear();  // a handful of (d, m, seed) in practice
    cache.emplace(key, omega);
    return omega;
}

at::Tensor favorFeatureMap(const at::Tensor& x, const at::Tensor& omega, bool rowwiseMax) {
    at::Tensor proj = at::matmul(x, omega.t());  // [.., n, m]
    proj.sub_(x.pow(2).sum(-1, /*keepdim=*/true).mul_(0.5));
    if (rowwiseMax)
        proj.sub_(std::get<0>(proj.max(-1, /*keepdim=*/true)));
    else
        proj.sub_(proj.max());
    return proj.exp_();
}

at::Tensor favorProbs(const at::Tensor& q, const at::Tensor& k, const MaskSpec& mask, double scale, int features,
                      std::uint64_t seed) {
    if (features < 1) throw Error("FAVOR+ needs at least 1 random feature, got " + std::to_string(features));
    const at::Tensor omega = favorFeatures(q.size(-1), features, seed).to(q.options());
    const double s = std::sqrt(scale);
    at::Tensor phiQ = favorFeatureMap(q * s, omega, /*rowwiseMax=*/true);
    at::Tensor phiK = favorFeatureMap(k * s, omega, /*rowwiseMax=*/false);
    return linearMapFromFeatures(phiQ, phiK, mask);
}

}  // namespace attnscope
