// Keys that take part in a block's softmax without being tokens: Swin's window padding
// (core/src/models/swin_windows.h). They come last in BlockInfo::keyTokens, labelled
// "[PAD rRcC]" (row R, column C of the padded stage grid), so a map's rows sum to 1 over all its
// keys and to less over the tokens where a window holds padding. Other models have none.
#pragma once

#include "attnscope/attention/trace.h"

#include <string>

namespace attnscope {

// "[PAD rRcC]".
std::string paddingKeyLabel(int row, int col);
// How many of the block's last keys are padding (0 unless it has more keys than queries).
int paddingKeys(const BlockInfo& block);
// The map without its last `padding` columns: [rows, cols - padding], the tokens' part.
HeadMap withoutPaddingKeys(const HeadMap& map, int padding);

}  // namespace attnscope
