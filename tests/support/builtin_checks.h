// What the tests of the shipped built-in models share: opening one on the CPU, its folder (for the
// independent reference, reference_builtin.h) and ids as the reference takes them.
#pragma once

#include "attnscope/models/builtin.h"
#include "attnscope/models/model.h"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace attnscope::testing {

// builtin:NAME on the CPU.
inline std::shared_ptr<const Model> builtin(const std::string& name) {
    LoadOptions options;
    options.device = DeviceChoice::Cpu;
    return Model::load("builtin:" + name, options);
}

// The folder builtin:NAME resolves to.
inline std::filesystem::path folderOf(const std::string& name) { return resolveModelPath("builtin:" + name); }

inline std::vector<long long> asLong(const std::vector<std::int64_t>& ids) { return {ids.begin(), ids.end()}; }

}  // namespace attnscope::testing
