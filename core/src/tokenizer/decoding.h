// Helpers shared by the decoders and the display labels.
#pragma once

#include <string>
#include <string_view>

namespace attnscope::tok {

// Appends bytes as UTF-8, each maximal invalid sequence replaced by U+FFFD.
void appendLossyUtf8(std::string& out, std::string_view bytes);
// False for invalid UTF-8, with the offset of the first bad byte.
bool isValidUtf8(std::string_view bytes, std::size_t* badAt);

}  // namespace attnscope::tok
