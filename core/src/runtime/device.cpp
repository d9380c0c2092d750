#include "device.h"

#include "attnscope/runtime/error.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <torch/cuda.h>

#include <cstdlib>
#include <malloc.h>
#include <mutex>

namespace attnscope {

DeviceChoice parseDeviceChoice(const std::string& text) {
    if (text == "cpu") return DeviceChoice::Cpu;
    if (text == "cuda") return DeviceChoice::Cuda;
    if (text == "auto") return DeviceChoice::Auto;
    throw Error("unknown device '" + text + "' (use cpu, cuda or auto)");
}

bool cudaAvailable() { return at::hasCUDA(); }

void synchronizeDevice() {
    if (at::hasCUDA()) torch::cuda::synchronize();
}

c10::Device resolveDevice(DeviceChoice choice) {
    static std::once_flag threads;
    std::call_once(threads, [] {
        // Activations and maps are large, short-lived blocks (12 MB per layer for GPT-2 small at
        // 512 tokens). glibc would mmap and unmap each one and fault its pages in again on every
        // layer; serving them from the heap without trimming it keeps the pages mapped. Measured:
        // bmm + softmax over [12, 512, 512] 14.5 ms -> 4.4 ms; see docs/benchmarks.md.
        mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
        mallopt(M_TRIM_THRESHOLD, 1024 * 1024 * 1024);
        // Every core works through the BLAS: OpenBLAS runs each matrix product on all cores with
        // its own threads (most of a forward's time). LibTorch's OpenMP intra-op threads spin
        // after each element-wise op and starve those BLAS threads: with 2 intra-op threads on
        // 2 cores a GPT-2-small forward at 512 tokens takes 1.33 s, with 1 it takes 0.50 s.
        // ATTNSCOPE_THREADS overrides the intra-op count.
        int intraOp = 1;
        if (const char* env = std::getenv("ATTNSCOPE_THREADS"); env && std::atoi(env) > 0) intraOp = std::atoi(env);
        at::set_num_threads(intraOp);
    });
    switch (choice) {
        case DeviceChoice::Cpu: return c10::Device(c10::kCPU);
        case DeviceChoice::Cuda:
            if (!cudaAvailable())
                throw Error("device 'cuda' is not available: this LibTorch has no CUDA support or no GPU is visible "
                            "(use --device cpu or auto)");
            return c10::Device(c10::kCUDA, 0);
        case DeviceChoice::Auto: return cudaAvailable() ? c10::Device(c10::kCUDA, 0) : c10::Device(c10::kCPU);
    }
    return c10::Device(c10::kCPU);
}

std::string deviceName(const c10::Device& device) { return device.str(); }

}  // namespace attnscope
