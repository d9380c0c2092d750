#include "attnscope/attention/window_padding.h"

#include <algorithm>

namespace attnscope {

namespace {

const std::string kPrefix = "[PAD ";

bool isPaddingLabel(const std::string& label) {
    return label.size() > kPrefix.size() && label.compare(0, kPrefix.size(), kPrefix) == 0 && label.back() == ']';
}

}  // namespace

std::string paddingKeyLabel(int row, int col) {
    return kPrefix + "r" + std::to_string(row) + "c" + std::to_string(col) + "]";
}

int paddingKeys(const BlockInfo& block) {
    const auto& keys = block.keyTokens;
    if (keys.size() <= block.queryTokens.size()) return 0;
    const std::size_t extra = keys.size() - block.queryTokens.size();
    const bool all = std::all_of(keys.end() - static_cast<std::ptrdiff_t>(extra), keys.end(), isPaddingLabel);
    return all ? static_cast<int>(extra) : 0;
}

HeadMap withoutPaddingKeys(const HeadMap& map, int padding) {
    if (padding <= 0) return map;
    HeadMap out;
    out.rows = map.rows;
    out.cols = map.cols - padding;
    out.values.reserve(static_cast<std::size_t>(out.rows) * out.cols);
    for (int i = 0; i < map.rows; ++i) {
        const auto row = map.values.begin() + static_cast<std::ptrdiff_t>(i) * map.cols;
        out.values.insert(out.values.end(), row, row + out.cols);
    }
    return out;
}

}  // namespace attnscope
