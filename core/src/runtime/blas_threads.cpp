#include "blas_threads.h"

#include "attnscope/runtime/blas_kernels.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <mutex>

namespace attnscope {

namespace {

using SetThreads = void (*)(int);
using GetThreads = int (*)();

struct OpenBlas {
    SetThreads set = nullptr;
    GetThreads get = nullptr;
    std::mutex lock;
    int holders = 0;
    int saved = 0;
};

OpenBlas& openBlas() {
    static OpenBlas* blas = [] {
        auto* b = new OpenBlas;  // never destroyed: guards may outlive static destruction order
        b->set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
        b->get = reinterpret_cast<GetThreads>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
        if (!b->set || !b->get) b->set = nullptr, b->get = nullptr;
        return b;
    }();
    return *blas;
}

}  // namespace

SingleThreadedBlas::SingleThreadedBlas() {
    OpenBlas& b = openBlas();
    if (!b.set) return;
    std::lock_guard<std::mutex> hold(b.lock);
    if (b.holders++ == 0) {
        b.saved = b.get();
        b.set(1);
    }
}

SingleThreadedBlas::~SingleThreadedBlas() {
    OpenBlas& b = openBlas();
    if (!b.set) return;
    std::lock_guard<std::mutex> hold(b.lock);
    if (--b.holders == 0) b.set(b.saved);
}

const char* blasCoreName() {
    using CoreName = char* (*)();
    static const auto name = reinterpret_cast<CoreName>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
    return name ? name() : "";
}

void ensureBlasKernels(char** argv) {
    if (std::getenv("OPENBLAS_CORETYPE") || std::getenv("ATTNSCOPE_KEEP_BLAS")) return;
    if (std::strcmp(blasCoreName(), "Prescott") != 0) return;
#if defined(__x86_64__) || defined(__i386__)
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return;
    setenv("OPENBLAS_CORETYPE", __builtin_cpu_supports("avx512f") ? "SkylakeX" : "Haswell", 1);
    execv("/proc/self/exe", argv);  // only returns on failure
    unsetenv("OPENBLAS_CORETYPE");
#else
    (void)argv;
#endif
}

void shortenBlasSpin() {
    if (std::getenv("OPENBLAS_THREAD_TIMEOUT") || std::getenv("GOTO_THREAD_TIMEOUT")) return;
    using Call = int (*)();
    using ReadEnv = void (*)();
    // OpenBLAS reads its environment once, when it loads (openblas_read_env), and takes the
    // timeout when it starts its threads: read it again, then stop and restart them.
    const auto readEnv = reinterpret_cast<ReadEnv>(dlsym(RTLD_DEFAULT, "openblas_read_env"));
    const auto shutdown = reinterpret_cast<Call>(dlsym(RTLD_DEFAULT, "blas_thread_shutdown_"));
    const auto init = reinterpret_cast<Call>(dlsym(RTLD_DEFAULT, "blas_thread_init"));
    if (!readEnv || !shutdown || !init) return;
    setenv("OPENBLAS_THREAD_TIMEOUT", "18", 1);
    readEnv();
    unsetenv("OPENBLAS_THREAD_TIMEOUT");
    shutdown();
    init();
}

int blasThreads() {
    OpenBlas& b = openBlas();
    return b.get ? b.get() : 1;
}

}  // namespace attnscope
