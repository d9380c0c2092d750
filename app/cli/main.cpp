// attnscope-cli: the scriptable face of core (commands in cli/, the command line in entry.cpp).
#include "attnscope/runtime/allocator.h"
#include "attnscope/runtime/blas_kernels.h"
#include "commands.h"

int main(int argc, char** argv) {
    attnscope::ensureHugePages(argv);    // may re-execute with glibc's malloc asking for huge pages
    attnscope::ensureBlasKernels(argv);  // may re-execute with kernels OpenBLAS did not pick itself
    attnscope::shortenBlasSpin();
    attnscope::tuneAllocator(true);  // one command, then exit: keep freed memory for reuse
    attnscope::cli::exitProcess(attnscope::cli::runCommandLine(argc, argv));
}
