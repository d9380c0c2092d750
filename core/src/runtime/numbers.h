// Constants of core's maths (C++17 has no std::numbers).
#pragma once

namespace attnscope {

inline constexpr double kPi = 3.14159265358979323846;

}  // namespace attnscope
