#include "pooled_map.h"

#include <algorithm>

namespace attnscope {

namespace {

// bin[i] = floor(i · bins / count): contiguous, non-empty bins when bins <= count.
void binsOf(std::int64_t count, int bins, std::vector<int>& bin, std::vector<int>& cells) {
    bin.resize(static_cast<std::size_t>(count));
    cells.assign(static_cast<std::size_t>(bins), 0);
    for (std::int64_t i = 0; i < count; ++i) {
        bin[static_cast<std::size_t>(i)] = static_cast<int>(i * bins / count);
        ++cells[static_cast<std::size_t>(bin[static_cast<std::size_t>(i)])];
    }
}

}  // namespace

MapPooler::MapPooler(std::int64_t rowBegin, std::int64_t rowEnd, std::int64_t colBegin, std::int64_t colEnd, int outRows,
                     int outCols, Pooling pooling)
    : rowBegin_(rowBegin), rowEnd_(rowEnd), colBegin_(colBegin), colEnd_(colEnd),
      rows_(static_cast<int>(std::min<std::int64_t>(outRows, rowEnd - rowBegin))),
      cols_(static_cast<int>(std::min<std::int64_t>(outCols, colEnd - colBegin))), pooling_(pooling) {
    binsOf(rowEnd - rowBegin, rows_, rowBin_, rowCount_);
    binsOf(colEnd - colBegin, cols_, colBin_, colCount_);
    acc_.assign(static_cast<std::size_t>(rows_) * static_cast<std::size_t>(cols_), 0.0);
}

void MapPooler::add(const at::Tensor& block, std::int64_t row, std::int64_t col) {
    const at::Tensor b = block.to(at::kFloat).contiguous();
    const std::int64_t len = b.size(0), width = b.size(1);
    const std::int64_t r0 = std::max(row, rowBegin_), r1 = std::min(row + len, rowEnd_);
    const std::int64_t c0 = std::max(col, colBegin_), c1 = std::min(col + width, colEnd_);
    if (r0 >= r1 || c0 >= c1) return;
    const float* data = b.data_ptr<float>();
    const int* colBin = colBin_.data() + (c0 - colBegin_);
    const std::int64_t cells = c1 - c0;
    for (std::int64_t i = r0; i < r1; ++i) {
        const float* src = data + (i - row) * width + (c0 - col);
        double* dst = acc_.data() + static_cast<std::size_t>(rowBin_[static_cast<std::size_t>(i - rowBegin_)]) * cols_;
        if (pooling_ == Pooling::Max) {
            for (std::int64_t j = 0; j < cells; ++j) dst[colBin[j]] = std::max(dst[colBin[j]], static_cast<double>(src[j]));
        } else {
            for (std::int64_t j = 0; j < cells; ++j) dst[colBin[j]] += src[j];
        }
    }
}

void MapPooler::merge(const MapPooler& other) {
    for (std::size_t i = 0; i < acc_.size(); ++i)
        acc_[i] = pooling_ == Pooling::Max ? std::max(acc_[i], other.acc_[i]) : acc_[i] + other.acc_[i];
}

HeadMap MapPooler::result() const {
    HeadMap out;
    out.rows = rows_;
    out.cols = cols_;
    out.values.resize(acc_.size());
    for (int r = 0; r < rows_; ++r)
        for (int c = 0; c < cols_; ++c) {
            double v = acc_[static_cast<std::size_t>(r) * cols_ + c];
            if (pooling_ == Pooling::Mean) v /= static_cast<double>(rowCount_[r]) * colCount_[c];
            out.values[static_cast<std::size_t>(r) * cols_ + c] = static_cast<float>(v);
        }
    return out;
}

}  // namespace attnscope
