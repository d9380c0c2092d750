// Helpers shared by the family tests: load a checkpoint folder on the CPU (or the error it gives)
// and compare every head's map with a reference.
#pragma once

#include "attnscope/runtime/error.h"
#include "attnscope/models/model.h"
#include "attnscope/attention/trace.h"
#include "family_fixtures.h"

#include <catch2/catch.hpp>

#include <array>
#include <random>

namespace attnscope::testing {

inline std::shared_ptr<const Model> loadCpu(const std::filesystem::path& dir) {
    LoadOptions options;
    options.device = DeviceChoice::Cpu;
    return Model::load(dir, options);
}

inline std::shared_ptr<const Model> writeAndLoad(const Checkpoint& c, const std::string& name,
                                                 const WriteOptions& o = {}) {
    const auto dir = freshDir(name);
    writeCheckpoint(dir, c, o);
    return loadCpu(dir);
}

// The attnscope::Error message loading `dir` on the CPU gives, or "(no error)".
inline std::string loadErrorAt(const std::filesystem::path& dir) {
    try {
        loadCpu(dir);
    } catch (const Error& e) {
        return e.what();
    }
    return "(no error)";
}

// loadErrorAt for a checkpoint written into a fresh folder.
inline std::string writeAndLoadError(const Checkpoint& c, const std::string& name) {
    const auto dir = freshDir(name);
    writeCheckpoint(dir, c);
    return loadErrorAt(dir);
}

// Largest |map - reference| over every layer, head, query and key.
inline double maxMapDiff(const Trace& trace, const Reference& ref) {
    double worst = 0;
    const BlockInfo& b = trace.blocks().at(0);
    REQUIRE(static_cast<int>(ref.probs.size()) == b.layers);
    for (int l = 0; l < b.layers; ++l)
        for (int h = 0; h < b.heads; ++h) {
            const HeadMap m = trace.map(0, l, h);
            REQUIRE(m.values.size() == ref.probs[l][h].size());
            for (std::size_t i = 0; i < m.values.size(); ++i)
                worst = std::max(worst, std::abs(m.values[i] - ref.probs[l][h][i]));
        }
    return worst;
}

inline double maxLogitDiff(const std::vector<float>& got, const std::vector<double>& want) {
    REQUIRE(got.size() == want.size());
    double worst = 0;
    for (std::size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(got[i] - want[i]));
    return worst;
}

// softmax(logits) in double precision; -inf (or -1e300) entries get 0.
inline std::vector<double> softmax(const std::vector<double>& logits) {
    double mx = -1e300, sum = 0;
    for (double v : logits) mx = std::max(mx, v);
    std::vector<double> p;
    for (double v : logits) sum += p.emplace_back(std::exp(v - mx));
    for (double& v : p) v /= sum;
    return p;
}

// A size × size picture of random bytes (std::mt19937(seed), each byte rng() % 256).
inline RgbImage noise(int size, unsigned seed) {
    std::mt19937 rng(seed);
    RgbImage image{size, size, std::vector<std::uint8_t>(static_cast<std::size_t>(size) * size * 3)};
    for (auto& p : image.pixels) p = static_cast<std::uint8_t>(rng() % 256);
    return image;
}

// (x / 255 − mean[c]) / std[c], channels first: what an image processor gives for a picture it
// keeps at its size (the references' input).
inline std::vector<double> normalised(const RgbImage& image, const double* mean, const double* std) {
    const std::size_t plane = static_cast<std::size_t>(image.width) * image.height;
    std::vector<double> out(3 * plane);
    for (std::size_t i = 0; i < plane; ++i)
        for (int c = 0; c < 3; ++c) out[c * plane + i] = (image.pixels[i * 3 + c] / 255.0 - mean[c]) / std[c];
    return out;
}
inline std::vector<double> normalised(const RgbImage& image, const std::array<double, 3>& mean,
                                      const std::array<double, 3>& std) {
    return normalised(image, mean.data(), std.data());
}

inline std::vector<std::int64_t> ids64(const std::vector<long long>& ids) { return {ids.begin(), ids.end()}; }

}  // namespace attnscope::testing
