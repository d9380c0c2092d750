// Small string helpers every layer of core uses.
#pragma once

#include <string_view>

namespace attnscope {

// C++20's starts_with for C++17.
inline bool startsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

}  // namespace attnscope
