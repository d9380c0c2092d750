// WeightStore: the tensors of a checkpoint folder as LibTorch tensors on the compute device.
//
// The folder holds either model.safetensors or shards listed in model.safetensors.index.json
// ({"weight_map": {tensor: shard file}}; shard names are plain file names in the folder; a
// missing shard, a tensor in two shards, or a tensor in another shard than the index says is an
// error). model.safetensors wins when both exist, as in Hugging Face's loader.
//
// Compute dtype: float32 on the CPU; on CUDA the checkpoint's F16 or BF16 when its weights are
// stored that way (else float32). Weights already in the compute dtype on the CPU are used
// straight from the read-only mapping (no copy); others are converted once. Every get() checks
// the shape and names the tensor when it is wrong.
#pragma once

#include "attnscope/runtime/progress.h"
#include "attnscope/io/safetensors.h"

#include <ATen/ATen.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace attnscope {

// y = x Wᵀ + b with W [out, in] as nn.Linear stores it (b may be undefined).
struct Linear {
    at::Tensor weight, bias;
    at::Tensor operator()(const at::Tensor& x) const { return at::linear(x, weight, bias); }
};

class WeightStore {
public:
    WeightStore(const std::filesystem::path& folder, c10::Device device);

    // True when `name` exists (after the prefix is tried).
    bool has(const std::string& name) const;
    // The stored shape of `name`, nullopt when absent (for sizes the config does not give).
    std::optional<std::vector<std::int64_t>> shape(const std::string& name) const;
    // The tensor `prefix + name` (or `name`), validated against `shape`; compute dtype, on the device.
    at::Tensor get(const std::string& name, const std::vector<std::int64_t>& shape);
    // get() when present, else an undefined tensor.
    at::Tensor optional(const std::string& name, const std::vector<std::int64_t>& shape);
    // name.weight [out, in] and name.bias [out]: the bias required (bias = true) or absent.
    Linear linear(const std::string& name, std::int64_t out, std::int64_t in, bool bias = true);
    // The same with the bias used when the checkpoint has it (Qwen2's q/k/v, say).
    Linear linearOptionalBias(const std::string& name, std::int64_t out, std::int64_t in);

    // A model-level prefix such as "transformer." that every family tensor may carry.
    void setPrefix(std::string prefix) { prefix_ = std::move(prefix); }
    const std::string& prefix() const { return prefix_; }
    bool anyNameStartsWith(const std::string& prefix) const;

    c10::ScalarType computeType() const { return compute_; }
    c10::Device device() const { return device_; }
    // Bytes all tensors of the checkpoint take in the compute dtype (what loading needs).
    std::uint64_t computeBytes() const;
    // Throws attnscope::Error "FOLDER: loading needs X GiB ..., Y GiB available" when the weights
    // do not fit; budgetBytes 0 = what the device reports available (see memory.h).
    void requireMemory(std::uint64_t budgetBytes) const;

    std::int64_t parametersUsed() const { return parameters_; }
    std::string storageDtype() const;  // "F32", "F16", "BF16" or "mixed" over tensors used
    // What the weights were read from: model.safetensors or the index, for messages.
    const std::filesystem::path& source() const { return source_; }

private:
    struct Entry {
        const SafetensorsFile* file;
        const TensorInfo* info;
    };
    const Entry* lookup(const std::string& name) const;
    void openSharded(const std::filesystem::path& folder, const std::filesystem::path& index);

    std::filesystem::path folder_, source_;
    std::vector<std::shared_ptr<const SafetensorsFile>> files_;
    std::map<std::string, Entry> entries_;
    c10::Device device_;
    c10::ScalarType compute_ = c10::ScalarType::Float;
    std::string prefix_;
    std::int64_t parameters_ = 0;
    std::set<DType> dtypesUsed_;
    std::set<std::string> used_;
};

c10::ScalarType scalarType(DType dtype);

}  // namespace attnscope
