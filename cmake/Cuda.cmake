# Decides whether core/cuda is compiled. The kernels take raw device pointers, so they build
# with any CUDA toolkit; they are *used* only when LibTorch itself has CUDA (tensors on a GPU).
set(ATTNSCOPE_HAVE_CUDA OFF)
if(NOT ATTNSCOPE_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      # Ampere, Hopper; PTX for newer chips. Override with -DCMAKE_CUDA_ARCHITECTURES=...
      set(CMAKE_CUDA_ARCHITECTURES 80 90)
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(ATTNSCOPE_HAVE_CUDA ON)
  elseif(ATTNSCOPE_CUDA STREQUAL "ON")
    message(FATAL_ERROR "ATTNSCOPE_CUDA=ON but no CUDA compiler (nvcc) was found")
  endif()
endif()
message(STATUS "AttnScope CUDA kernels: ${ATTNSCOPE_HAVE_CUDA}")
