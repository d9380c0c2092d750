// The dtype the running forward keeps its captured Q and K in (RunOptions::captureDtype), per
// thread: Model::forward sets it for the forward's duration, so that each layer's capture is
// narrowed as soon as it is recorded (the float32 copies of the other layers never coexist) and
// the memory check before the forward counts the capture at that size.
#pragma once

#include <c10/core/ScalarType.h>

#include <optional>

namespace attnscope {

// nullopt: the compute dtype (no narrowing).
std::optional<c10::ScalarType> captureType();

class CaptureTypeScope {
public:
    explicit CaptureTypeScope(std::optional<c10::ScalarType> type);
    ~CaptureTypeScope();
    CaptureTypeScope(const CaptureTypeScope&) = delete;
    CaptureTypeScope& operator=(const CaptureTypeScope&) = delete;

private:
    std::optional<c10::ScalarType> previous_;
};

}  // namespace attnscope
