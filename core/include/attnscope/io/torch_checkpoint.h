// PyTorch checkpoints as torch.save writes them (pytorch_model.bin): a state dict {name: tensor}
// in either of torch's formats:
//   zip (torch >= 1.6): an uncompressed zip archive PREFIX/data.pkl (the pickle) + PREFIX/data/KEY
//       (one entry per storage, raw little-endian bytes) [+ PREFIX/byteorder, PREFIX/version];
//   legacy (before 1.6): pickles of torch's magic number, the protocol version 1001 and sys_info,
//       then the state dict's pickle, then the list of storage keys, then for each key its
//       element count (int64) and its raw bytes.
// The pickles are read by a restricted unpickler that accepts only what a state dict needs and
// never runs anything from the file (io/torch_pickle.h). The file is mapped read-only and every
// tensor's bytes are handed out as a pointer into the mapping, like SafetensorsFile. Zip entries
// are 64-byte aligned; legacy storages lie at any byte (users such as WeightStore copy a tensor
// whose address is not aligned to its element size).
//
// Tensors of F32, F16, BF16 and I64 storages are read; tensors of other storage types (bool
// masks, int buffers) are listed in skipped() and left out. A tensor must be contiguous (the
// strides of its shape, any stride on a dimension of size 1); offsets into a shared storage (tied
// or sliced weights) are fine. Thread-safety: immutable after open().
#pragma once

#include "attnscope/io/safetensors.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace attnscope {

class TorchCheckpoint {
public:
    // Throws attnscope::Error "PATH: ..." (one line) on a malformed or refused file.
    static std::shared_ptr<const TorchCheckpoint> open(const std::filesystem::path& path);

    ~TorchCheckpoint();
    TorchCheckpoint(const TorchCheckpoint&) = delete;
    TorchCheckpoint& operator=(const TorchCheckpoint&) = delete;

    const std::filesystem::path& path() const { return path_; }
    const char* format() const { return zip_ ? "zip" : "legacy"; }
    // In the state dict's order. TensorInfo::begin/end are byte offsets into the file.
    const std::vector<TensorInfo>& tensors() const { return tensors_; }
    const TensorInfo* find(std::string_view name) const;  // nullptr when absent
    // name -> storage type ("BoolStorage") of the tensors left out.
    const std::map<std::string, std::string>& skipped() const { return skipped_; }
    // Pointer to the tensor's first byte inside the read-only mapping; valid while this lives.
    const std::byte* data(const TensorInfo& t) const;

private:
    TorchCheckpoint() = default;
    std::filesystem::path path_;
    bool zip_ = false;
    std::vector<TensorInfo> tensors_;
    std::map<std::string, std::size_t> index_;
    std::map<std::string, std::string> skipped_;
    const std::byte* map_ = nullptr;
    std::uint64_t size_ = 0;
    friend struct TorchCheckpointBuilder;
};

// True when the file's first bytes are those of a torch.save file (a zip archive or a pickle).
bool looksLikeTorchCheckpoint(const std::filesystem::path& path);

}  // namespace attnscope
