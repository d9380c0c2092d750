#pragma once

#include "attnscope/model.h"

#include <c10/core/Device.h>

namespace attnscope {

// Resolves a DeviceChoice: Cuda throws attnscope::Error when no GPU can be used; Auto falls
// back to the CPU. Also sets LibTorch's intra-op threads to every core, once.
c10::Device resolveDevice(DeviceChoice choice);

std::string deviceName(const c10::Device& device);  // "cpu", "cuda:0"

}  // namespace attnscope
