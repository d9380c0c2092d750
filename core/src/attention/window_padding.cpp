#include "attnscope/attention/window_padding.h"

#include "attnscope/runtime/error.h"
#include "trace_impl.h"

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

std::vector<int> keyWindows(const Trace& trace, int block, int layer) {
    const auto& blocks = trace.impl().blocks;
    if (block < 0 || block >= static_cast<int>(blocks.size()))
        throw Error("block " + std::to_string(block) + " is out of range");
    const auto& layers = blocks[static_cast<std::size_t>(block)].layers;
    if (layer < 0 || layer >= static_cast<int>(layers.size()))
        throw Error("layer " + std::to_string(layer) + " is out of range (0.." + std::to_string(layers.size() - 1) +
                    ")");
    return layers[static_cast<std::size_t>(layer)].windows;
}

}  // namespace attnscope
