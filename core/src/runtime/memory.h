// Memory checks before loading and running, so that a model that does not fit is refused with a
// message ("needs X GiB, Y GiB available") instead of the process being killed.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <optional>
#include <string>

namespace attnscope {

// Bytes the device can give now: MemAvailable from /proc/meminfo on the CPU, free memory from
// the CUDA runtime on a GPU; nullopt when it cannot be told (no /proc, CUDA kernels not built).
std::optional<std::uint64_t> availableBytes(const c10::Device& device);

// "1.5 GiB" (one decimal).
std::string gibString(std::uint64_t bytes);

// Throws attnscope::Error "<what> needs X GiB on DEVICE, Y GiB available" when needed exceeds
// budgetBytes (when non-zero) or else availableBytes(device). Nothing is checked when neither
// is known.
void requireBytes(const std::string& what, std::uint64_t needed, const c10::Device& device,
                  std::uint64_t budgetBytes = 0);

// A forward pass's working set, for requireBytes: the capture (Q and K of every layer) plus the
// largest per-layer temporaries (the blocked attention's row blocks of scores, hidden states).
struct ForwardFootprint {
    std::int64_t layers = 0, heads = 0, kvHeads = 0, headDim = 0, hidden = 0, inner = 0;
    std::int64_t queries = 0, keys = 0;
    std::int64_t elementSize = 4;  // compute dtype
    // Of the captured Q and K: 0 = the running forward's capture dtype (runtime/capture_type.h),
    // else bytes per element.
    std::int64_t captureElementSize = 0;
    std::uint64_t bytes() const;
};

// For a forward on the CPU: refuses when the footprint does not fit in memory available now
// (weights are already counted as used). On a GPU LibTorch's out-of-memory error is caught and
// reported instead, since its caching allocator's free blocks are invisible to the runtime.
void requireForwardMemory(const ForwardFootprint& footprint, const c10::Device& device);

}  // namespace attnscope
