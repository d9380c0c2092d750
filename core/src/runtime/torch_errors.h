// LibTorch reports failures as c10::Error with a multi-line backtrace; core's callers get one
// attnscope::Error with a readable line instead.
#pragma once

#include "attnscope/runtime/error.h"

#include <c10/util/Exception.h>

#include <new>
#include <string>

namespace attnscope {

// Runs fn(); c10::Error and std::bad_alloc become attnscope::Error("while <what>: ...").
template <typename Fn>
auto translateTorchErrors(const std::string& what, Fn&& fn) -> decltype(fn()) {
    try {
        return fn();
    } catch (const c10::Error& e) {
        std::string message = e.what_without_backtrace();
        message = message.substr(0, message.find('\n'));
        throw Error("LibTorch failed while " + what + ": " + message);
    } catch (const std::bad_alloc&) {
        throw Error("out of memory while " + what);
    }
}

}  // namespace attnscope
