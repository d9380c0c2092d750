// WeightStore: the tensors of a checkpoint folder as LibTorch tensors on the compute device.
// F32 weights on the CPU are used straight from the read-only mapping (no copy); F16/BF16 are
// converted to float32. Every get() checks the shape and names the tensor when it is wrong.
#pragma once

#include "attnscope/progress.h"
#include "attnscope/safetensors.h"

#include <ATen/ATen.h>

#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace attnscope {

class WeightStore {
public:
    // Opens folder/model.safetensors.
    WeightStore(const std::filesystem::path& folder, c10::Device device);

    // True when `name` exists (after the prefix is tried).
    bool has(const std::string& name) const;
    // The tensor `prefix + name` (or `name`), validated against `shape`; float32 on the device.
    at::Tensor get(const std::string& name, const std::vector<std::int64_t>& shape);

    // A model-level prefix such as "transformer." that every family tensor may carry.
    void setPrefix(std::string prefix) { prefix_ = std::move(prefix); }
    bool anyNameStartsWith(const std::string& prefix) const;

    std::int64_t parametersUsed() const { return parameters_; }
    std::string storageDtype() const;  // "F32", "F16", "BF16" or "mixed" over tensors used
    const std::filesystem::path& file() const { return file_->path(); }

private:
    const TensorInfo* lookup(const std::string& name) const;

    std::shared_ptr<const SafetensorsFile> file_;
    c10::Device device_;
    std::string prefix_;
    std::int64_t parameters_ = 0;
    std::set<DType> dtypesUsed_;
    std::set<std::string> used_;
};

}  // namespace attnscope
