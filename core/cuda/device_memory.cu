#include "device_memory.h"

#include <cuda_runtime_api.h>

namespace attnscope::cuda {

bool deviceMemory(int device, std::size_t& freeBytes, std::size_t& totalBytes) {
    int previous = 0;
    if (cudaGetDevice(&previous) != cudaSuccess) return false;
    if (cudaSetDevice(device) != cudaSuccess) return false;
    const bool ok = cudaMemGetInfo(&freeBytes, &totalBytes) == cudaSuccess;
    cudaSetDevice(previous);
    return ok;
}

}  // namespace attnscope::cuda
