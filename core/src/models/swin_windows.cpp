#include "swin_windows.h"

#include "attnscope/attention/window_padding.h"
#include "attnscope/runtime/error.h"

#include <algorithm>

namespace attnscope {

SwinWindows swinWindows(int rows, int cols, int window, bool shifted) {
    SwinWindows g;
    g.rows = rows;
    g.cols = cols;
    const int smaller = std::min(rows, cols);
    g.window = smaller <= window ? smaller : window;
    g.shift = smaller <= window || !shifted ? 0 : window / 2;
    g.paddedRows = (rows + g.window - 1) / g.window * g.window;
    g.paddedCols = (cols + g.window - 1) / g.window * g.window;
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) g.keys.emplace_back(r, c);
    for (int r = 0; r < g.paddedRows; ++r)
        for (int c = 0; c < g.paddedCols; ++c)
            if (r >= rows || c >= cols) g.keys.emplace_back(r, c);
    return g;
}

namespace {

// Where a padded-grid position lands after the cyclic shift (torch.roll by -shift moves
// position p to (p - shift) mod size), and what the windows read there.
struct Placed {
    int window;  // the window's index, row-major over the windows
    int r, c;    // coordinates inside the window
    int region;  // the shift mask's region (0 without a shift)
};

// SwinLayer.get_attn_mask's slices along one axis of `size`: [0, size - w), [size - w, size - s),
// [size - s, size).
int regionOf(int p, int size, int window, int shift) {
    if (shift == 0 || p < size - window) return 0;
    return p < size - shift ? 1 : 2;
}

Placed place(const SwinWindows& g, std::pair<int, int> position) {
    const int r = (position.first - g.shift + g.paddedRows) % g.paddedRows;
    const int c = (position.second - g.shift + g.paddedCols) % g.paddedCols;
    const int w = g.window;
    return {(r / w) * (g.paddedCols / w) + c / w, r % w, c % w,
            3 * regionOf(r, g.paddedRows, w, g.shift) + regionOf(c, g.paddedCols, w, g.shift)};
}

}  // namespace

SwinTerms swinTerms(const SwinWindows& g, const at::Tensor& table) {
    const std::int64_t w = g.window, span = 2 * w - 1, n = g.tokens(), m = static_cast<std::int64_t>(g.keys.size());
    if (table.dim() != 2 || table.size(0) != span * span)
        throw Error("Swin's relative position bias table has " + std::to_string(table.size(0)) + " rows; windows of " +
                    std::to_string(w) + " need " + std::to_string(span * span));
    std::vector<Placed> placed;
    std::vector<std::vector<std::int64_t>> members(static_cast<std::size_t>((g.paddedRows / w) * (g.paddedCols / w)));
    for (std::int64_t j = 0; j < m; ++j) {
        placed.push_back(place(g, g.keys[static_cast<std::size_t>(j)]));
        members[static_cast<std::size_t>(placed.back().window)].push_back(j);
    }
    at::Tensor blocked = at::ones({n, m}, at::kBool), index = at::zeros({n, m}, at::kLong);
    at::Tensor regions = at::zeros({n, m}, at::kFloat);
    auto* b = blocked.data_ptr<bool>();
    auto* idx = index.data_ptr<std::int64_t>();
    auto* mask = regions.data_ptr<float>();
    for (std::int64_t i = 0; i < n; ++i) {
        const Placed& q = placed[static_cast<std::size_t>(i)];
        for (std::int64_t j : members[static_cast<std::size_t>(q.window)]) {
            const Placed& k = placed[static_cast<std::size_t>(j)];
            b[i * m + j] = false;
            idx[i * m + j] = (q.r - k.r + w - 1) * span + (q.c - k.c + w - 1);
            mask[i * m + j] = q.region == k.region ? 0.0f : -100.0f;
        }
    }
    const std::int64_t H = table.size(1);
    at::Tensor bias = table.index_select(0, index.reshape({-1}).to(table.device())).reshape({n, m, H});
    bias = bias.permute({2, 0, 1}) + regions.to(table.device(), table.scalar_type()).unsqueeze(0);
    blocked = blocked.to(table.device());
    bias.masked_fill_(blocked.unsqueeze(0), 0);
    return {blocked, bias.contiguous()};
}

std::vector<int> swinKeyWindows(const SwinWindows& g) {
    std::vector<int> windows;
    for (const auto& key : g.keys) windows.push_back(place(g, key).window);
    return windows;
}

std::vector<std::string> swinTokenLabels(int rows, int cols) {
    std::vector<std::string> labels;
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) labels.push_back("r" + std::to_string(r) + "c" + std::to_string(c));
    return labels;
}

std::vector<std::string> swinKeyLabels(const SwinWindows& g) {
    std::vector<std::string> labels = swinTokenLabels(g.rows, g.cols);
    for (std::size_t j = labels.size(); j < g.keys.size(); ++j)
        labels.push_back(paddingKeyLabel(g.keys[j].first, g.keys[j].second));
    return labels;
}

}  // namespace attnscope
