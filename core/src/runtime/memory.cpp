#include "memory.h"
#include "capture_type.h"

#include "attnscope/runtime/error.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#ifdef ATTNSCOPE_WITH_CUDA_KERNELS
#include "../../cuda/device_memory.h"
#endif

namespace attnscope {

std::optional<std::uint64_t> availableBytes(const c10::Device& device) {
    if (device.is_cpu()) {
        std::ifstream in("/proc/meminfo");
        std::string key;
        std::uint64_t value = 0;
        std::string unit;
        while (in >> key >> value) {
            std::getline(in, unit);
            if (key == "MemAvailable:") return value * 1024;  // reported in kB
        }
        return std::nullopt;
    }
#ifdef ATTNSCOPE_WITH_CUDA_KERNELS
    if (device.is_cuda()) {
        std::size_t freeBytes = 0, totalBytes = 0;
        if (cuda::deviceMemory(device.has_index() ? device.index() : 0, freeBytes, totalBytes)) return freeBytes;
    }
#endif
    return std::nullopt;
}

std::string gibString(std::uint64_t bytes) {
    char text[32];
    const double gib = static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0);
    std::snprintf(text, sizeof text, gib < 0.1 && bytes > 0 ? "%.2f GiB" : "%.1f GiB", gib);
    return text;
}

void requireBytes(const std::string& what, std::uint64_t needed, const c10::Device& device, std::uint64_t budgetBytes) {
    std::optional<std::uint64_t> available =
            budgetBytes ? std::optional<std::uint64_t>(budgetBytes) : availableBytes(device);
    if (!available || needed <= *available) return;
    throw Error(what + " needs " + gibString(needed) + " on " + device.str() + ", " + gibString(*available) +
                (budgetBytes ? " allowed" : " available"));
}

std::uint64_t ForwardFootprint::bytes() const {
    const auto e = static_cast<std::uint64_t>(elementSize);
    const auto type = captureType();
    const auto c = static_cast<std::uint64_t>(captureElementSize > 0 ? captureElementSize
                                              : type ? static_cast<std::int64_t>(c10::elementSize(*type))
                                                     : elementSize);
    const std::uint64_t capture = static_cast<std::uint64_t>(layers) * (queries * heads + keys * kvHeads) * headDim * c;
    // The CPU forward attends in blocks of query rows (attention/blocked_attention.h): each
    // worker holds one block's logits, probabilities and their copy in v's dtype, [rows, keys] in
    // float32; counted for 256 rows on up to 8 workers, so no [heads, n, n] tensor is budgeted.
    const std::uint64_t workers = std::min(8u, std::max(1u, std::thread::hardware_concurrency()));
    const std::uint64_t scores = workers * 3ull * 256 * static_cast<std::uint64_t>(keys) * 4 +
                                 static_cast<std::uint64_t>(heads) * queries * headDim * e;  // the context
    const std::uint64_t hiddenStates = static_cast<std::uint64_t>(queries) * (8 * hidden + 3 * inner) * e;
    return capture + scores + hiddenStates;
}

namespace {
thread_local std::optional<c10::ScalarType> runningCaptureType;
}  // namespace

std::optional<c10::ScalarType> captureType() { return runningCaptureType; }

CaptureTypeScope::CaptureTypeScope(std::optional<c10::ScalarType> type) : previous_(runningCaptureType) {
    runningCaptureType = type;
}

CaptureTypeScope::~CaptureTypeScope() { runningCaptureType = previous_; }

void requireForwardMemory(const ForwardFootprint& f, const c10::Device& device) {
    if (!device.is_cpu()) return;
    requireBytes("a forward pass over " + std::to_string(f.queries) + " tokens", f.bytes(), device);
}

}  // namespace attnscope
