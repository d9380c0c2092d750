// LowerBands: a lower-triangular n×n float32 matrix kept as bands of kRows rows, each band over
// the columns up to its own end (its diagonal block whole, the rest of the upper triangle not
// stored): n²/2 + kRows·n/2 floats instead of n². The layer means of causal blocks and the
// rollout's products over them (rollout.cpp) live in it: at 4,096 tokens the dense means were
// 805 MB of new memory, and on the 2-core machine each new megabyte costs about 1.5 ms of a core
// to fault in (docs/benchmarks.md).
#pragma once

#include "attnscope/attention/trace.h"

#include <algorithm>
#include <cstddef>
#include <memory>
#include <vector>

namespace attnscope {

class LowerBands {
public:
    static constexpr int kRows = 256;

    // The values are not initialised: whoever fills a row writes all of its width. Each band is
    // its own allocation (at most kRows·n floats), small enough for the heap to serve from the
    // blocks a forward has freed instead of new pages (allocator.h).
    explicit LowerBands(int n) : n_(n) {
        for (int b = 0; b < bands(); ++b)
            data_.emplace_back(new float[static_cast<std::size_t>(rows(b)) * static_cast<std::size_t>(width(b))]);
    }

    int size() const { return n_; }
    int bands() const { return (n_ + kRows - 1) / kRows; }
    int firstRow(int band) const { return band * kRows; }
    int rows(int band) const { return std::min(kRows, n_ - band * kRows); }
    // The columns a band keeps, which is also its rows' stride: those up to the band's last row.
    int width(int band) const { return std::min(n_, (band + 1) * kRows); }
    int rowWidth(int i) const { return width(i / kRows); }

    float* band(int b) { return data_[static_cast<std::size_t>(b)].get(); }
    const float* band(int b) const { return data_[static_cast<std::size_t>(b)].get(); }
    float* row(int i) { return band(i / kRows) + static_cast<std::size_t>(i % kRows) * rowWidth(i); }
    const float* row(int i) const { return band(i / kRows) + static_cast<std::size_t>(i % kRows) * rowWidth(i); }

    // The whole n×n map, zeros above the stored part.
    HeadMap toHeadMap() const {
        HeadMap out{n_, n_, std::vector<float>(static_cast<std::size_t>(n_) * static_cast<std::size_t>(n_), 0.0f)};
        for (int i = 0; i < n_; ++i)
            std::copy_n(row(i), rowWidth(i), out.values.data() + static_cast<std::size_t>(i) * n_);
        return out;
    }

private:
    int n_;
    std::vector<std::unique_ptr<float[]>> data_;
};

// The rollout R = Â_{L-1}·…·Â_0 (rollout.h) in place: layers[l] holds layer l's map on entry
// (lower triangular) and the last holds R on return (the others are emptied on the way). Float32 products on
// every core, one band of rows per product (single-threaded BLAS), so the values do not depend
// on the core count. layers is not empty; every member has one size.
void rolloutInPlace(std::vector<LowerBands>& layers, double residual);

}  // namespace attnscope
