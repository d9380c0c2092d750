// Helpers shared by the family tests: load a checkpoint folder on the CPU (or the error it gives)
// and compare every head's map with a reference.
#pragma once

#include "attnscope/runtime/error.h"
#include "attnscope/models/model.h"
#include "attnscope/attention/trace.h"
#include "family_fixtures.h"

#include <catch2/catch.hpp>

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

inline std::vector<std::int64_t> ids64(const std::vector<long long>& ids) { return {ids.begin(), ids.end()}; }

}  // namespace attnscope::testing
