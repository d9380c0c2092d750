#pragma once

#include "attnscope/runtime/device.h"

#include <c10/core/Device.h>

namespace attnscope {

// Resolves a DeviceChoice: Cuda throws attnscope::Error when no GPU can be used; Auto falls
// back to the CPU. The first call also sets the process-wide threading and allocator policy
// (see device.cpp).
c10::Device resolveDevice(DeviceChoice choice);

std::string deviceName(const c10::Device& device);  // "cpu", "cuda:0"

}  // namespace attnscope
