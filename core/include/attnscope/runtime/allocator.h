// How the process's heap serves LibTorch's large temporaries. glibc hands every allocation above
// 32 MiB (and, until a first one is freed, above 128 KiB) to a fresh mmap and unmaps it on free,
// so a forward's per-layer temporaries (a [4,096, 2,048] MLP activation is 32 MiB plus a header)
// come back as new, zeroed pages every layer. On the 2-core machine, Llama shape at 4,096 tokens
// (docs/benchmarks.md, issue 13 round 6): forward 6.36 -> 6.07 s, system time of the run
// 15.5 -> 10.0 s, no page faults left after the first forward.
#pragma once

namespace attnscope {

// For an executable's main: serve large blocks from the heap, one arena for all threads, and
// return its free top to the kernel only beyond 256 MiB, so that the next layer (or row block of
// a metrics pass) reuses the blocks the last one freed. `metrics --out F.json` at 4,096 tokens
// (issue 33): the metrics pass's page faults 9,981 -> 480, the run's system time 5.1 -> 3.3 s.
// shortLived (the CLI: one command, then exit) keeps all freed memory for reuse instead: pages
// the kernel gives back anew cost a fault each, and in a VM a costly one (`metrics --out F.json`
// at 4,096 tokens: system time 3.8 -> 1.8 s, the layer means' 805 MB zeroed in 0.7 s, not 1.5).
// ATTNSCOPE_SYSTEM_MALLOC=1 keeps glibc's defaults (for comparisons). A no-op off glibc.
void tuneAllocator(bool shortLived = false);

// For an executable's main, before anything else: where transparent huge pages are given on
// request (madvise mode), re-executes the process once with glibc's malloc asking for them
// (GLIBC_TUNABLES=glibc.malloc.hugetlb=1, glibc 2.35 and later), so that its large buffers fault
// in 2 MiB at a time. `metrics --out F.json` at 4,096 tokens on the 2-core machine (issue 33):
// page faults 562k -> 70k (docs/benchmarks.md). Not when GLIBC_TUNABLES already names
// glibc.malloc.hugetlb or ATTNSCOPE_SYSTEM_MALLOC=1; a no-op off glibc and under AddressSanitizer.
void ensureHugePages(char** argv);

}  // namespace attnscope
