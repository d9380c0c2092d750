// main() of the Google Benchmark executables: the process set up as the app's executables set it
// up (app/gui_main.cpp), so that the figures are theirs: OpenBLAS's kernels fit for the CPU
// (without it a CPU newer than Debian's OpenBLAS runs the SSE3 fallback, 4x slower products on an
// Emerald Rapids Xeon), its threads' short spin and the allocator as the GUI sets it.
#include "attnscope/runtime/allocator.h"
#include "attnscope/runtime/blas_kernels.h"

#include <benchmark/benchmark.h>

int main(int argc, char** argv) {
    attnscope::ensureBlasKernels(argv);
    attnscope::shortenBlasSpin();
    attnscope::tuneAllocator();
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
