// OpenBLAS's own thread count, for code that runs several matrix products at once on its own
// threads (the blocked attention): each of those products must then run on its caller's thread
// only, or the BLAS threads and ours fight over the same cores.
#pragma once

namespace attnscope {

// While any instance lives, OpenBLAS runs every product single-threaded; the count it had is
// restored when the last one goes. Safe to nest and to hold from several threads. A no-op when
// the BLAS is not OpenBLAS (the symbol is looked up at run time, so any BLAS links).
class SingleThreadedBlas {
public:
    SingleThreadedBlas();
    ~SingleThreadedBlas();
    SingleThreadedBlas(const SingleThreadedBlas&) = delete;
    SingleThreadedBlas& operator=(const SingleThreadedBlas&) = delete;
};

// The BLAS's thread count now (1 when it cannot be told).
int blasThreads();

}  // namespace attnscope
