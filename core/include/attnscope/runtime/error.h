// The one exception type core throws. Its message is for people: it names the file, the tensor
// or the option, and says what was expected. ui and cli catch it at their boundary.
#pragma once

#include <stdexcept>
#include <string>

namespace attnscope {

class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Thrown when a progress callback asked to stop. Not an error to show to the user.
class Cancelled : public std::runtime_error {
public:
    Cancelled() : std::runtime_error("cancelled") {}
};

}  // namespace attnscope
