#pragma once

#include <functional>

namespace attnscope {

// Called between compute steps with (done, total) in the step's own units. Returning false asks
// the computation to stop; it then throws attnscope::Cancelled. May be called from any thread.
using Progress = std::function<bool(long long done, long long total)>;

}  // namespace attnscope
