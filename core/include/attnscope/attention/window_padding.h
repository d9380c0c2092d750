// Window attention (Swin, core/src/models/swin_windows.h): which window each key of a layer
// belongs to, and the keys that take part in a block's softmax without being tokens, the window
// padding. Padding keys come last in BlockInfo::keyTokens, labelled "[PAD rRcC]" (row R, column C
// of the padded stage grid), so a map's rows sum to 1 over all its keys and to less over the
// tokens where a window holds padding. Other models have neither.
#pragma once

#include "attnscope/attention/trace.h"

#include <string>
#include <vector>

namespace attnscope {

// "[PAD rRcC]".
std::string paddingKeyLabel(int row, int col);
// How many of the block's last keys are padding (0 unless it has more keys than queries).
int paddingKeys(const BlockInfo& block);
// The map without its last `padding` columns: [rows, cols - padding], the tokens' part.
HeadMap withoutPaddingKeys(const HeadMap& map, int padding);

// The window of each of the layer's keys (BlockInfo::keyTokens: the tokens, then the padding),
// numbered row-major over the windows of the layer's shifted grid; a query attends only to the
// keys of its own token's window, so map cell (i, j) is 0 unless windows[i] == windows[j]. Empty
// for a layer without windows. Throws attnscope::Error for a block or layer out of range.
std::vector<int> keyWindows(const Trace& trace, int block, int layer);

}  // namespace attnscope
