// Where core computes: the CPU or a CUDA GPU.
#pragma once

#include <string>

namespace attnscope {

enum class DeviceChoice { Cpu, Cuda, Auto };

// "cpu", "cuda", "auto"; throws attnscope::Error otherwise.
DeviceChoice parseDeviceChoice(const std::string& text);
// True when LibTorch was built with CUDA and a GPU is visible.
bool cudaAvailable();
// Waits for the work queued on the GPU (a no-op without one): timings of GPU work end here.
void synchronizeDevice();

}  // namespace attnscope
