// Swin's shifted-window attention (swin.cpp) as one block-sparse map over a stage's grid, so that
// the Trace keeps each layer as one head map per head: the queries are the grid's tokens row by
// row, the keys the same tokens followed by the window padding (SwinLayer.maybe_pad pads the
// normalised grid with zero rows to a multiple of the window; the padding takes part in every
// softmax of its windows). A query sees the keys of its window after the cyclic shift; the others
// are blocked (MaskSpec::blocked), so they are exactly 0. The window's own terms, the relative
// position bias and the shifted windows' -100 between regions, go into an additive bias.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace attnscope {

// One layer's windows over a stage grid of rows × cols tokens, as SwinLayer runs them.
struct SwinWindows {
    int rows = 0, cols = 0;              // the stage grid
    int window = 0, shift = 0;           // the window's side; the cyclic shift (0: none)
    int paddedRows = 0, paddedCols = 0;  // the grid padded (bottom, right) to multiples of window
    // The keys' positions (row, col) in the padded grid: the tokens row by row, then the padding
    // positions row by row.
    std::vector<std::pair<int, int>> keys;

    std::int64_t tokens() const { return static_cast<std::int64_t>(rows) * cols; }
    std::int64_t padding() const { return static_cast<std::int64_t>(keys.size()) - tokens(); }
};

// SwinLayer.set_shift_and_window_size: a grid whose smaller side is at most `window` is cut in
// windows of that side and not shifted; otherwise windows of `window`, shifted by window / 2 on
// the shifted (odd) layers.
SwinWindows swinWindows(int rows, int cols, int window, bool shifted);

// The layer's terms for its [n, n + padding] map: blocked [n, m] bool (true outside the query's
// window) and bias [H, n, m]: the relative position bias table [(2w - 1)², H] at
// (Δrow + w - 1)·(2w - 1) + Δcol + w - 1 (window coordinates), plus -100 where a shifted window
// holds positions of two regions (SwinLayer.get_attn_mask), 0 where blocked. On table's device
// and in its dtype. Throws attnscope::Error when the table is not for windows of this side.
struct SwinTerms {
    at::Tensor blocked, bias;
};
SwinTerms swinTerms(const SwinWindows& windows, const at::Tensor& table);

// The window of each key (g.keys' order), numbered row-major over the shifted grid's windows.
std::vector<int> swinKeyWindows(const SwinWindows& windows);

// Labels of the grid's tokens, "rRcC" row by row.
std::vector<std::string> swinTokenLabels(int rows, int cols);
// Labels of the layer's keys: the tokens', then the padding's (attention/window_padding.h).
std::vector<std::string> swinKeyLabels(const SwinWindows& windows);

}  // namespace attnscope
