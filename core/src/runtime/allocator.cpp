#include "attnscope/runtime/allocator.h"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>

#if defined(__GLIBC__)
#include <malloc.h>
#include <unistd.h>
#endif

namespace attnscope {

void tuneAllocator(bool shortLived) {
#if defined(__GLIBC__)
    if (const char* s = std::getenv("ATTNSCOPE_SYSTEM_MALLOC"); s && *s == '1') return;
    mallopt(M_MMAP_MAX, 0);  // no mmap per large block
    // Give back the free top only beyond 256 MiB; a short-lived process never (INT_MAX bytes).
    mallopt(M_TRIM_THRESHOLD, shortLived ? std::numeric_limits<int>::max() : 256 << 20);
    // One arena for all threads: a worker thread's arena grows by extra 64 MiB heaps, and glibc
    // unmaps such a heap as soon as it is all free, whatever the trim threshold, so the next
    // row block's buffers came back as fresh pages to fault in again.
    mallopt(M_ARENA_MAX, 1);
#else
    (void)shortLived;
#endif
}

#if defined(__GLIBC__)
#if __GLIBC_PREREQ(2, 35)
#define ATTNSCOPE_MALLOC_HUGETLB 1
#endif
#endif

// Under AddressSanitizer, which replaces glibc's malloc, the re-execution would only cost a second
// start (3.9 s of CPU instead of 2.2 per CLI start in the sanitizer build).
#if defined(__SANITIZE_ADDRESS__)
#define ATTNSCOPE_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ATTNSCOPE_UNDER_ASAN 1
#endif
#endif

void ensureHugePages(char** argv) {
#if defined(ATTNSCOPE_MALLOC_HUGETLB) && !defined(ATTNSCOPE_UNDER_ASAN)
    if (const char* s = std::getenv("ATTNSCOPE_SYSTEM_MALLOC"); s && *s == '1') return;
    const char* tunables = std::getenv("GLIBC_TUNABLES");
    if (tunables && std::strstr(tunables, "glibc.malloc.hugetlb")) return;  // set, by us or by the user
    std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
    std::string mode;
    std::getline(thp, mode);
    if (mode.find("[madvise]") == std::string::npos) return;  // always: nothing to ask; never: nothing to get
    const std::string old = tunables ? tunables : "";
    const std::string with = (old.empty() ? "" : old + ":") + "glibc.malloc.hugetlb=1";
    setenv("GLIBC_TUNABLES", with.c_str(), 1);
    execv("/proc/self/exe", argv);  // only returns on failure
    if (tunables)
        setenv("GLIBC_TUNABLES", old.c_str(), 1);
    else
        unsetenv("GLIBC_TUNABLES");
#else
    (void)argv;
#endif
}

}  // namespace attnscope
