#include "attnscope/runtime/allocator.h"

#include <cstdlib>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace attnscope {

void tuneAllocator() {
#if defined(__GLIBC__)
    if (const char* s = std::getenv("ATTNSCOPE_SYSTEM_MALLOC"); s && *s == '1') return;
    mallopt(M_MMAP_MAX, 0);                // no mmap per large block
    mallopt(M_TRIM_THRESHOLD, 256 << 20);  // give back the free top only beyond 256 MiB
#endif
}

}  // namespace attnscope
