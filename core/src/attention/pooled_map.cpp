#include "pooled_map.h"

#include "attnscope/runtime/error.h"
#include "runtime/vector_math.h"

#include <algorithm>
#include <cstdlib>
#include <string>

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

MapPooler::MapPooler(std::int64_t rowBegin, std::int64_t rowEnd, std::int64_t colBegin, std::int64_t colEnd,
                     int outRows, int outCols, Pooling pooling, bool onDevice)
    : rowBegin_(rowBegin), rowEnd_(rowEnd), colBegin_(colBegin), colEnd_(colEnd),
      rows_(static_cast<int>(std::min<std::int64_t>(outRows, rowEnd - rowBegin))),
      cols_(static_cast<int>(std::min<std::int64_t>(outCols, colEnd - colBegin))), pooling_(pooling),
      onDevice_(onDevice) {
    binsOf(rowEnd - rowBegin, rows_, rowBin_, rowCount_);
    binsOf(colEnd - colBegin, cols_, colBin_, colCount_);
    acc_.assign(static_cast<std::size_t>(rows_) * static_cast<std::size_t>(cols_), 0.0);
}

PoolRect resolvePoolRect(const PoolRequest& pool, std::int64_t n, std::int64_t m) {
    const PoolRect r{pool.rowBegin, pool.rowEnd > 0 ? pool.rowEnd : n, pool.colBegin,
                     pool.colEnd > 0 ? pool.colEnd : m};
    if (r.rowBegin < 0 || r.rowEnd > n || r.rowBegin >= r.rowEnd || r.colBegin < 0 || r.colEnd > m ||
        r.colBegin >= r.colEnd)
        throw Error("pooled map: rows " + std::to_string(r.rowBegin) + ".." + std::to_string(r.rowEnd) + " x keys " +
                    std::to_string(r.colBegin) + ".." + std::to_string(r.colEnd) + " is not inside the " +
                    std::to_string(n) + " x " + std::to_string(m) + " map");
    if (pool.outRows < 1 || pool.outCols < 1) throw Error("pooled map: the image needs at least 1 x 1 bins");
    return r;
}

namespace {

// Element-wise folds of one map row into a row-bin buffer: the only per-cell work of the pooling,
// written so the compiler vectorises it (AVX-512 / AVX2 / baseline clones picked at load time).
ATTNSCOPE_CLONES void maxInto(float* dst, const float* src, std::int64_t n) {
    for (std::int64_t j = 0; j < n; ++j) dst[j] = src[j] > dst[j] ? src[j] : dst[j];
}
ATTNSCOPE_CLONES void addInto(double* dst, const float* src, std::int64_t n) {
    for (std::int64_t j = 0; j < n; ++j) dst[j] += static_cast<double>(src[j]);
}

// ATTNSCOPE_SCALAR_POOLING=1: the per-cell loop the row folds replaced, kept only as the
// "before" of docs/benchmarks.md (bench --thumbnails in one binary, one run).
bool scalarPoolingBaseline() {
    static const bool on = [] {
        const char* s = std::getenv("ATTNSCOPE_SCALAR_POOLING");
        return s && *s == '1';
    }();
    return on;
}

}  // namespace

void MapPooler::add(const at::Tensor& block, std::int64_t row, std::int64_t col) {
    if (onDevice_) return addOnDevice(block, row, col);
    const at::Tensor b = block.to(at::kFloat).contiguous();
    const std::int64_t len = b.size(0), width = b.size(1);
    const std::int64_t r0 = std::max(row, rowBegin_), r1 = std::min(row + len, rowEnd_);
    const std::int64_t c0 = std::max(col, colBegin_), c1 = std::min(col + width, colEnd_);
    if (r0 >= r1 || c0 >= c1) return;
    const float* data = b.data_ptr<float>();
    const int* colBin = colBin_.data() + (c0 - colBegin_);
    const std::int64_t cells = c1 - c0;
    const bool max = pooling_ == Pooling::Max;
    if (scalarPoolingBaseline()) {
        for (std::int64_t i = r0; i < r1; ++i) {
            const float* src = data + (i - row) * width + (c0 - col);
            double* dst =
                    acc_.data() + static_cast<std::size_t>(rowBin_[static_cast<std::size_t>(i - rowBegin_)]) * cols_;
            for (std::int64_t j = 0; j < cells; ++j)
                dst[colBin[j]] = max ? std::max(dst[colBin[j]], static_cast<double>(src[j])) : dst[colBin[j]] + src[j];
        }
        return;
    }
    // The rows of one row bin are consecutive: fold them cell by cell into a row buffer first
    // (vectorised), then the buffer into the bin's column bins once per run of rows.
    for (std::int64_t i = r0; i < r1;) {
        const int bin = rowBin_[static_cast<std::size_t>(i - rowBegin_)];
        std::int64_t end = i + 1;
        while (end < r1 && rowBin_[static_cast<std::size_t>(end - rowBegin_)] == bin) ++end;
        double* dst = acc_.data() + static_cast<std::size_t>(bin) * cols_;
        if (max) {
            maxRow_.assign(data + (i - row) * width + (c0 - col), data + (i - row) * width + (c0 - col) + cells);
            for (std::int64_t k = i + 1; k < end; ++k)
                maxInto(maxRow_.data(), data + (k - row) * width + (c0 - col), cells);
            for (std::int64_t j = 0; j < cells; ++j)
                dst[colBin[j]] = std::max(dst[colBin[j]], static_cast<double>(maxRow_[static_cast<std::size_t>(j)]));
        } else {
            sumRow_.assign(static_cast<std::size_t>(cells), 0.0);
            for (std::int64_t k = i; k < end; ++k)
                addInto(sumRow_.data(), data + (k - row) * width + (c0 - col), cells);
            for (std::int64_t j = 0; j < cells; ++j) dst[colBin[j]] += sumRow_[static_cast<std::size_t>(j)];
        }
        i = end;
    }
}

namespace {

// For max pooling with plain gathers and reductions (no scatter): [bins · widest] indices, bin
// b's cells (consecutive, cells[b] of them) then its last cell repeated up to the widest bin's
// count (a repeat does not change a max).
at::Tensor binGather(const std::vector<int>& cells, const c10::Device& device) {
    const int widest = *std::max_element(cells.begin(), cells.end());
    std::vector<std::int64_t> index(cells.size() * static_cast<std::size_t>(widest));
    std::int64_t first = 0;
    for (std::size_t b = 0; b < cells.size(); ++b) {
        for (int t = 0; t < widest; ++t) index[b * widest + t] = first + std::min(t, cells[b] - 1);
        first += cells[b];
    }
    return at::tensor(index, at::TensorOptions().dtype(at::kLong)).to(device);
}

at::Tensor binIndex(const std::vector<int>& bin, const c10::Device& device) {
    return at::tensor(std::vector<std::int64_t>(bin.begin(), bin.end()), at::TensorOptions().dtype(at::kLong))
            .to(device);
}

}  // namespace

void MapPooler::addOnDevice(const at::Tensor& block, std::int64_t row, std::int64_t col) {
    const std::int64_t r0 = std::max(row, rowBegin_), r1 = std::min(row + block.size(0), rowEnd_);
    const std::int64_t c0 = std::max(col, colBegin_), c1 = std::min(col + block.size(1), colEnd_);
    if (r0 >= r1 || c0 >= c1) return;
    const bool max = pooling_ == Pooling::Max;
    const auto options = block.options().dtype(max ? at::kFloat : at::kDouble);
    const std::int64_t len = r1 - r0, width = colEnd_ - colBegin_;
    if (!deviceAcc_.defined()) {  // on the first block's device: every rectangle row's column bins
        deviceAcc_ = at::zeros({rowEnd_ - rowBegin_, cols_}, options);
        deviceColBin_ = max ? binGather(colCount_, block.device()) : binIndex(colBin_, block.device());
        deviceRowBin_ = max ? binGather(rowCount_, block.device()) : binIndex(rowBin_, block.device());
    }
    const at::Tensor cells = block.narrow(0, r0 - row, len).narrow(1, c0 - col, c1 - c0).to(options.dtype());
    at::Tensor dst = deviceAcc_.narrow(0, r0 - rowBegin_, len);
    if (max) {  // cells outside the block are 0 (never added); the weights are >= 0
        at::Tensor wide = at::zeros({len, width}, options);
        wide.narrow(1, c0 - colBegin_, c1 - c0).copy_(cells);
        dst.copy_(at::maximum(dst, wide.index_select(1, deviceColBin_).view({len, cols_, -1}).amax(-1)));
    } else {
        dst.index_add_(1, deviceColBin_.narrow(0, c0 - colBegin_, c1 - c0), cells);
    }
}

void MapPooler::merge(const MapPooler& other) {
    if (onDevice_ || other.onDevice_) throw Error("MapPooler::merge: poolers that fold on a device are not merged");
    for (std::size_t i = 0; i < acc_.size(); ++i)
        acc_[i] = pooling_ == Pooling::Max ? std::max(acc_[i], other.acc_[i]) : acc_[i] + other.acc_[i];
}

HeadMap MapPooler::result() const {
    HeadMap out;
    out.rows = rows_;
    out.cols = cols_;
    out.values.resize(acc_.size());
    at::Tensor fromDevice;       // onDevice: the accumulator, copied once, as doubles
    if (deviceAcc_.defined()) {  // the rows' column bins into row bins, on the device
        const at::Tensor binned =
                pooling_ == Pooling::Max
                        ? deviceAcc_.index_select(0, deviceRowBin_).view({rows_, -1, cols_}).amax(1)
                        : at::zeros({rows_, cols_}, deviceAcc_.options()).index_add_(0, deviceRowBin_, deviceAcc_);
        fromDevice = binned.to(at::kCPU, at::kDouble).contiguous();
    }
    const double* acc = fromDevice.defined() ? fromDevice.data_ptr<double>() : acc_.data();
    for (int r = 0; r < rows_; ++r)
        for (int c = 0; c < cols_; ++c) {
            double v = acc[static_cast<std::size_t>(r) * cols_ + c];
            if (pooling_ == Pooling::Mean) v /= static_cast<double>(rowCount_[r]) * colCount_[c];
            out.values[static_cast<std::size_t>(r) * cols_ + c] = static_cast<float>(v);
        }
    return out;
}

}  // namespace attnscope
