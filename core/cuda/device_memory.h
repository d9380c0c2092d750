// Free and total memory of a GPU from the CUDA runtime (no LibTorch), for memory checks.
#pragma once

#include <cstddef>

namespace attnscope::cuda {

// False when the runtime cannot tell (no such device, driver error).
bool deviceMemory(int device, std::size_t& freeBytes, std::size_t& totalBytes);

}  // namespace attnscope::cuda
