// Vectorised float32 kernels for the attention maps' hot loops (the blocked forward, a Trace's
// map rows, pooled thumbnails, the streamed metrics): exp, log and a fused softmax over one row
// held in L1. Written with GCC/Clang vector extensions and compiled for AVX-512, AVX2 and
// baseline x86-64; the variant is picked once at load time by the CPU's features (GCC
// target_clones), never by the environment, so every process on a machine (the CLI, the GUI,
// the test executables) computes the same bits. exp and log are within 2 ulp of the exact
// value (tests/internal/test_vector_math.cpp checks them against double precision).
#pragma once

#include <cstdint>

// Marks a function to be compiled for AVX-512, AVX2 and baseline x86-64, the variant picked once
// at load time by the CPU's features (GCC's target_clones). Clang and ASan builds keep one
// baseline version.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
#define ATTNSCOPE_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define ATTNSCOPE_CLONES
#endif

namespace attnscope::vmath {

// out[i] = exp(x[i]) for i in [0, n); out may equal x. exp(-inf) = 0, NaN stays NaN, results
// below float's normal range (x < -87.3) are 0, above it (x > 88.7) +inf.
void expInto(const float* x, float* out, std::int64_t n);

// out[i] = log(x[i]) (natural) for i in [0, n); out may equal x. log(0) = -inf, log(x < 0) and
// log(NaN) = NaN, log(+inf) = +inf; subnormal x are handled exactly.
void logInto(const float* x, float* out, std::int64_t n);

// In place on row[0, width): the softmax of row[begin, end) (exp(x - max) / Σ, the entries
// that may be -inf counting 0), and 0 outside [begin, end). A row with no finite maximum (every
// entry of the range -inf, or a NaN or +inf among them, or an empty range) becomes all NaN, as
// ATen's softmax gives for such rows.
void softmaxRow(float* row, std::int64_t width, std::int64_t begin, std::int64_t end);

// softmaxRow, and logs[0, width) = log of each probability taken from the softmax's own terms,
// (x - max) - log Σ, instead of a logarithm per cell: -inf outside [begin, end), all NaN where
// the row is. row's values are softmaxRow's bit for bit. (The metrics' entropy and KL.)
void softmaxRowLogs(float* row, float* logs, std::int64_t width, std::int64_t begin, std::int64_t end);

// softmaxRow without its last pass: row[begin, end) becomes exp(x - max), 0 outside, and the
// return value is 1/Σ (the sum in double, its inverse rounded to float), which the caller
// applies later (the forward scales a block's weighted values instead of its probabilities).
// A row softmaxRow makes NaN is NaN here too, and NaN is returned.
float expRow(float* row, std::int64_t width, std::int64_t begin, std::int64_t end);

// In place on row[0, width): row[begin, end) divided by its sum (in double), 0 outside; a row
// whose sum is <= 0 is left undivided (the linear map's rows, normaliseAllowed's rule).
void normaliseRow(float* row, std::int64_t width, std::int64_t begin, std::int64_t end);

}  // namespace attnscope::vmath
