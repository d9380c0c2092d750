#include "blas_threads.h"

#include <dlfcn.h>

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

int blasThreads() {
    OpenBlas& b = openBlas();
    return b.get ? b.get() : 1;
}

}  // namespace attnscope
