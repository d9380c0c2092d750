// A tiny deterministic generator for the lab (random features, fit initialisation): the same
// numbers on every platform and LibTorch version, unlike std:: distributions or torch's RNG.
#pragma once

#include <cmath>
#include <cstdint>

namespace attnscope {

struct SplitMix {
    std::uint64_t state;
    explicit SplitMix(std::uint64_t seed) : state(seed * 0x2545f4914f6cdd1dull + 0x1234567ull) {}
    std::uint64_t next() {
        std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    double uniform() { return (static_cast<double>(next() >> 11) + 0.5) * (1.0 / 9007199254740992.0); }  // (0, 1)
    double normal() {  // Box-Muller, one value per call
        const double u = uniform(), v = uniform();
        return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v);
    }
};

}  // namespace attnscope
