// OpenBLAS picks its kernels from the CPU's model number when the library loads. A CPU newer than
// the library falls back to "Prescott" (SSE3 only): Debian's OpenBLAS 0.3.21 does so on Intel's
// Sapphire/Emerald Rapids Xeons, and every matrix product then runs several times slower than the
// AVX2/AVX-512 kernels the CPU can run (docs/benchmarks.md, the 512-token GPT-2 slowdown).
#pragma once

namespace attnscope {

// The kernels OpenBLAS runs ("Haswell", "SkylakeX", "Prescott", ...), or "" without OpenBLAS.
const char* blasCoreName();

// For an executable's main, before anything else: when OPENBLAS_CORETYPE is unset, OpenBLAS runs
// its Prescott fallback and the CPU has AVX2 and FMA, sets OPENBLAS_CORETYPE (SkylakeX where the
// CPU has AVX-512, else Haswell) and re-executes the program with the same argv, so that OpenBLAS
// loads with kernels fit for the CPU. Returns when nothing needed doing, or when the re-exec failed
// (the program then runs on the slow kernels). ATTNSCOPE_KEEP_BLAS=1 turns it off.
void ensureBlasKernels(char** argv);

// For an executable's main, after ensureBlasKernels: OpenBLAS's idle threads spin on sched_yield
// for 2^28 cycles (~0.1 s) after each product before they sleep, and while the blocked attention,
// the pooled maps and the metrics run on threads of their own (OpenBLAS single-threaded), that
// spinning takes a core from them: 10 % of the forward's samples at 4,096 tokens on 2 cores,
// 5-8 % of its wall time (docs/benchmarks.md, issue 13 round 8). When OPENBLAS_THREAD_TIMEOUT is
// unset, restarts OpenBLAS's threads with a 2^18-cycle spin (~0.1 ms: back-to-back products still
// find them awake). A no-op without OpenBLAS's pthread server; the environment is left as it was.
void shortenBlasSpin();

}  // namespace attnscope
