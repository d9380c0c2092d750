// Folding blocks of a head's map into the bins of a PoolRequest (Trace::pooledMap), so that an
// overview thumbnail or a heat map's screen-resolution image never needs the whole n×n map.
#pragma once

#include "attnscope/attention/trace.h"

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace attnscope {

// A PoolRequest's rectangle with its ends resolved against an n x m map (an end of 0 is the
// map's). Throws Error, naming the rectangle and the map's size, when the rectangle is empty or
// not inside the map, or when the image has no bins.
struct PoolRect {
    std::int64_t rowBegin, rowEnd, colBegin, colEnd;
};
PoolRect resolvePoolRect(const PoolRequest& pool, std::int64_t n, std::int64_t m);

class MapPooler {
public:
    // The rectangle rows [rowBegin, rowEnd) x cols [colBegin, colEnd) (ends already resolved,
    // non-empty) into min(outRows, rows) x min(outCols, cols) bins.
    // onDevice: the blocks stay on their device (a GPU trace's) and are folded there with ATen's
    // operations into a bins-sized accumulator, so only the image crosses to the CPU; the CPU's
    // vectorised loops otherwise. Both give the same bins (max exactly, sums up to the order of
    // double additions).
    MapPooler(std::int64_t rowBegin, std::int64_t rowEnd, std::int64_t colBegin, std::int64_t colEnd, int outRows,
              int outCols, Pooling pooling, bool onDevice = false);

    // Adds a block [len, width] whose first cell is map cell (row, col); its cells outside the
    // rectangle are ignored. Cells never added count as 0 (masked keys).
    void add(const at::Tensor& block, std::int64_t row, std::int64_t col);
    // Combines another pooler of the same request (one per worker thread; CPU poolers only).
    void merge(const MapPooler& other);
    HeadMap result() const;

private:
    std::int64_t rowBegin_, rowEnd_, colBegin_, colEnd_;
    int rows_, cols_;
    Pooling pooling_;
    std::vector<int> rowBin_, colBin_;      // bin of each row / col of the rectangle
    std::vector<int> rowCount_, colCount_;  // cells per row bin / col bin
    std::vector<double> acc_;               // [rows_, cols_]
    std::vector<float> maxRow_;             // add()'s fold of one row bin's rows (scratch)
    std::vector<double> sumRow_;
    bool onDevice_ = false;
    // onDevice, on the blocks' device: each rectangle row's column bins [rowEnd - rowBegin, cols_],
    // and the bins as gathers (max) or bin indices (sums).
    at::Tensor deviceAcc_, deviceRowBin_, deviceColBin_;

    void addOnDevice(const at::Tensor& block, std::int64_t row, std::int64_t col);
};

}  // namespace attnscope
