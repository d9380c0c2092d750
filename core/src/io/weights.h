// WeightStore: the tensors of a checkpoint folder as LibTorch tensors on the compute device.
//
// The folder holds either model.safetensors or shards listed in model.safetensors.index.json
// ({"weight_map": {tensor: shard file}}; shard names are plain file names in the folder; a
// missing shard, a tensor in two shards, or a tensor in another shard than the index says is an
// error). model.safetensors wins when both exist, as in Hugging Face's loader. Without either,
// PyTorch's pytorch_model.bin or shards listed in pytorch_model.bin.index.json are read the same
// way (TorchCheckpoint: mapped, restricted unpickler); tensors of storage types other than
// F32/F16/BF16/I64 (bool masks) are left out, and a weight_map entry naming one is not an error.
//
// Compute dtype: float32 on the CPU; on CUDA the checkpoint's F16 or BF16 when its weights are
// stored that way (else float32). Weights already in the compute dtype on the CPU are used
// straight from the read-only mapping (no copy); others are converted once. Every get() checks
// the shape and names the tensor when it is wrong.
//
// Streamed weights (CPU, F16/BF16 checkpoints that do not fit once converted): a family that
// calls plan() instead of requireMemory() may be given a WeightStream. Then get() hands out each
// matrix of a layer (a rank >= 2 tensor whose name has a numeric component, "model.layers.7.…")
// as a float32 tensor over a buffer shared with the same matrix of every other layer, and the
// forward fills those buffers with StreamPass::layer(l) just before layer l runs; the half-precision
// bytes stay in the read-only mapping. rows() hands out the big non-layer matrices (embedding,
// output head) in their stored dtype, used in row chunks (gatherRows, nextLogits). Norms, biases
// and small tensors are converted once, as before.
#pragma once

#include "attnscope/runtime/progress.h"
#include "attnscope/io/gguf.h"
#include "attnscope/io/safetensors.h"
#include "attnscope/io/weight_plan.h"

#include <ATen/ATen.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <mutex>
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

// The buffers and sources of a streamed model's layer matrices. Shared by the model and every
// tensor get() handed out over its buffers; one forward at a time uses it (StreamPass).
class WeightStream {
public:
    struct Slot {
        const std::byte* source;  // in the mapping, stored dtype
        DType dtype;
        std::int64_t numel;
        float* target;                     // in a buffer
        const GgufTensor* gguf = nullptr;  // a GGUF tensor: dequantised row by row instead
        int permuteHeads = 0;              // > 0: llama.cpp's Q/K row order undone over this many heads
    };
    // Fills layer `layer`'s buffers from the mapping (on every core); no-op when it is resident.
    void materialise(int layer);
    std::uint64_t bufferBytes() const;                          // float32 buffers, all layers share them
    std::uint64_t mappedBytes() const { return mappedBytes_; }  // what stays in the file's pages
    std::timed_mutex& mutex() { return mutex_; }

private:
    friend class WeightStore;
    float* buffer(std::size_t slot, std::int64_t numel);

    std::map<int, std::vector<Slot>> layers_;
    std::map<int, std::size_t> nextSlot_;  // get() order within a layer picks the buffer
    struct Buffer {
        std::size_t slot;
        std::int64_t numel;
        std::unique_ptr<float[]> data;
    };
    std::vector<Buffer> buffers_;
    std::uint64_t mappedBytes_ = 0;
    int resident_ = -1;
    std::timed_mutex mutex_;
};

// One forward's hold on a streamed model's buffers (a no-op for a converted one): waits for any
// other forward to finish (asking `progress` meanwhile, so a cancelled wait ends with Cancelled),
// and layer(l) materialises layer l. Families call layer(l) before a layer uses its weights.
class StreamPass {
public:
    StreamPass(std::shared_ptr<WeightStream> stream, const std::function<bool(long long, long long)>& progress);
    ~StreamPass();
    StreamPass(const StreamPass&) = delete;
    StreamPass& operator=(const StreamPass&) = delete;
    void layer(int l) {
        if (stream_) stream_->materialise(l);
    }

private:
    std::shared_ptr<WeightStream> stream_;
};

class WeightStore {
public:
    // `folder` is a model folder, or a GGUF file (recognised by its magic; weights_gguf.cpp):
    // its tensors are dequantised to float32, whole or, streamed, one layer at a time.
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
    // For families that stream (see above): Convert = requireMemory; Stream = streamed whenever
    // the checkpoint can be (CPU, half-precision matrices), else converted; Auto = converted when
    // that fits the budget, else streamed when that fits, else the converted refusal naming both.
    // Returns the stream (null when converted); call before any get().
    std::shared_ptr<WeightStream> plan(std::uint64_t budgetBytes, WeightPlan plan);
    // Bytes a streamed model takes besides the file's pages: converted small tensors + buffers.
    std::uint64_t streamedBytes() const;
    bool streamed() const { return stream_ != nullptr; }
    // For ModelInfo::weights: "streamed from BF16 (…)", "converted to float32", ….
    std::string describe() const;
    // A big non-layer matrix (embedding, output head): in its stored dtype from the mapping when
    // streamed (a quantised GGUF one as a QuantisedTable), else get().
    at::Tensor rows(const std::string& name, const std::vector<std::int64_t>& shape);

    std::int64_t parametersUsed() const { return parameters_; }
    std::string storageDtype() const;  // "F32", "F16", "BF16" or "mixed" over tensors used
    // What the weights were read from: model.safetensors, pytorch_model.bin or an index, for messages.
    const std::filesystem::path& source() const { return source_; }

private:
    // One tensor of one weight file (safetensors or torch.save), whatever the format.
    struct Entry {
        const TensorInfo* info;
        const std::byte* data;              // in the file's read-only mapping
        const std::filesystem::path* file;  // owned by `owner`
        std::shared_ptr<const void> owner;  // keeps the mapping alive
        const GgufTensor* gguf = nullptr;   // a GGUF tensor (info->dtype then reads F32, its dequantised type)
        int permuteHeads = 0;               // see WeightStream::Slot
    };
    // A weight file's tensors, and the names it leaves out (unsupported storage types).
    struct File {
        std::vector<Entry> entries;
        std::set<std::string> skipped;
    };
    static File openFile(const std::filesystem::path& path, bool torch);
    const Entry* lookup(const std::string& name) const;
    bool streamable(const TensorInfo& info) const;
    bool streamable(const Entry& e) const;
    at::Tensor mapped(const Entry& e, const std::vector<std::int64_t>& shape);  // from_blob over the mapping
    void openSharded(const std::filesystem::path& folder, const std::filesystem::path& index, bool torch);
    void openGguf(const std::filesystem::path& file);
    at::Tensor dequantised(const Entry& e, const std::vector<std::int64_t>& shape);           // a GGUF tensor, owned
    static at::Tensor quantisedRows(const Entry& e, const std::vector<std::int64_t>& shape);  // see QuantisedTable

    std::filesystem::path folder_, source_;
    std::map<std::string, Entry> entries_;
    c10::Device device_;
    c10::ScalarType compute_ = c10::ScalarType::Float;
    std::string prefix_;
    std::int64_t parameters_ = 0;
    std::set<DType> dtypesUsed_;
    std::set<std::string> ggufTypesUsed_;  // ggml type names of the GGUF tensors used
    std::set<std::string> used_;
    std::shared_ptr<WeightStream> stream_;
};

// A quantised GGUF matrix that rows() hands out without dequantising it (a streamed GGUF model's
// embedding and output head: hundreds of millions of values that would take seconds and gigabytes
// to convert when the file opens). The tensor is uint8 with the matrix's shape and all strides 0,
// so it holds no numbers of its own; family_common's gatherRows, rowsMatmul and denseRows
// recognise it by quantisedTable() and dequantise only the rows they use.
struct QuantisedTable {
    const GgufTensor* tensor;
    const std::byte* data;              // in the file's mapping
    std::shared_ptr<const void> owner;  // keeps the mapping alive
};
// The table behind t, or null when t is an ordinary tensor.
const QuantisedTable* quantisedTable(const at::Tensor& t);
// Rows [begin, end) of the table as float32 at out ((end - begin) × row length), on every core
// for big ranges.
void dequantiseTable(const QuantisedTable& q, std::int64_t begin, std::int64_t end, float* out);

// The first all-digit component of a tensor name ("model.layers.12.mlp…" -> 12), or -1.
int layerOfName(const std::string& name);

c10::ScalarType scalarType(DType dtype);

// GGUF rows [begin, end) of a slot's tensor dequantised into their rows of slot.target (moved
// to Hugging Face's order when slot.permuteHeads > 0). weights_gguf.cpp.
void dequantiseSlotRows(const WeightStream::Slot& slot, std::int64_t begin, std::int64_t end);

}  // namespace attnscope
