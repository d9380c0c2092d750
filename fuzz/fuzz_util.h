// Shared by the libFuzzer targets: a private scratch folder per process and whole-file writes,
// so that targets can hand inputs to readers that take paths (the real code path, not a copy).
//
// Contract of every target: an input may be rejected only with attnscope::Error (the one-line
// message the app shows). Anything else escaping (a std::out_of_range, nlohmann's or LibTorch's
// own exceptions), a crash, a sanitizer report, a hang or an allocation above libFuzzer's
// -rss_limit_mb is a finding.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

namespace attnscope::fuzz {

// The folder is removed when the process exits normally (a crash leaves it beside the finding).
struct ScratchDir {
    std::filesystem::path path;
    ScratchDir() {
        const char* base = std::getenv("TMPDIR");
        path = std::filesystem::path(base && *base ? base : "/tmp") / ("attnscope-fuzz-" + std::to_string(::getpid()));
        std::filesystem::remove_all(path);
        std::filesystem::create_directories(path);
    }
    ~ScratchDir() {
        std::error_code ignored;
        std::filesystem::remove_all(path, ignored);
    }
};

inline const std::filesystem::path& scratch() {
    static const ScratchDir dir;
    return dir.path;
}

inline void writeBytes(const std::filesystem::path& file, std::string_view bytes) {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Splits data at every occurrence of sep (parts may be empty).
inline std::vector<std::string_view> splitParts(std::string_view data, std::string_view sep) {
    std::vector<std::string_view> parts;
    for (std::size_t at = 0;;) {
        const std::size_t next = data.find(sep, at);
        if (next == std::string_view::npos) {
            parts.push_back(data.substr(at));
            return parts;
        }
        parts.push_back(data.substr(at, next - at));
        at = next + sep.size();
    }
}

inline std::string_view asView(const std::uint8_t* data, std::size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

}  // namespace attnscope::fuzz
