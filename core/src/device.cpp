#include "device.h"

#include "attnscope/error.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>

#include <mutex>
#include <thread>

namespace attnscope {

DeviceChoice parseDeviceChoice(const std::string& text) {
    if (text == "cpu") return DeviceChoice::Cpu;
    if (text == "cuda") return DeviceChoice::Cuda;
    if (text == "auto") return DeviceChoice::Auto;
    throw Error("unknown device '" + text + "' (use cpu, cuda or auto)");
}

bool cudaAvailable() { return at::hasCUDA(); }

c10::Device resolveDevice(DeviceChoice choice) {
    static std::once_flag threads;
    std::call_once(threads, [] {
        // Debian's LibTorch defaults to one thread per physical core at best; the engine should
        // use every core the machine offers for its matrix products.
        const unsigned n = std::thread::hardware_concurrency();
        if (n > 0) at::set_num_threads(static_cast<int>(n));
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
