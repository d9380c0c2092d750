// What this machine computes and moves per second, as the engine runs (OpenBLAS on every core,
// LibTorch's own threads as set): for comparing a forward's time with its FLOPs and the bytes
// its weights take (bench --rates, docs/benchmarks.md). Takes a few seconds.
#pragma once

#include <cstdint>

namespace attnscope {

struct MachineRates {
    double gemmF32Gflops = 0;      // [m, k] · [k, n] in float32
    double gemmBf16Gflops = 0;     // the same product with both operands in bfloat16 (LibTorch's kernel)
    double readGBps = 0;           // reading a 1 GiB buffer on every core (one pass over weights)
    double convertGBps = 0;        // bf16 -> float32 of the same bytes, counted as bf16 bytes read
    double convertCachedGBps = 0;  // the same with plain (cached) stores, the conversion before 2026-12-01 evening
    // A streamed layer's matrix both ways, in effective GFLOP/s of the [m, k] · [k, n] product:
    // the BF16 weight converted into a float32 buffer then multiplied by OpenBLAS (what the
    // streamed forward does), or multiplied in BF16 directly (activations rounded to BF16).
    double convertThenF32Gflops = 0;
    double bf16DirectGflops = 0;
};

// m, k, n: the product to time, e.g. tokens × hidden × MLP width.
MachineRates measureRates(std::int64_t m, std::int64_t k, std::int64_t n);

}  // namespace attnscope
