// Small helpers of core's file readers (safetensors, .npy, attention files, atomic writes): the
// one-line error that names the file, the text of an errno value, and an owned POSIX descriptor.
#pragma once

#include "attnscope/runtime/error.h"

#include <filesystem>
#include <string>
#include <system_error>
#include <unistd.h>

namespace attnscope {

// Throws Error("PATH: WHAT"), the form every reader's message takes.
[[noreturn]] inline void failAt(const std::filesystem::path& path, const std::string& what) {
    throw Error(path.string() + ": " + what);
}

inline std::string errnoText(int error) { return std::error_code(error, std::generic_category()).message(); }

// Closes the descriptor when it goes out of scope.
struct UniqueFd {
    int fd = -1;
    UniqueFd() = default;
    explicit UniqueFd(int f) : fd(f) {}
    UniqueFd(const UniqueFd&) = delete;
    UniqueFd& operator=(const UniqueFd&) = delete;
    ~UniqueFd() {
        if (fd >= 0) ::close(fd);
    }
};

}  // namespace attnscope
