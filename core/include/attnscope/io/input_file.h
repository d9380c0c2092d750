// The one input rule for every file AttnScope reads (workspaces, corpus data, records, token
// lists, tokenizer and model files): it is opened only when it is a regular file after following
// symbolic links, and read whole only up to a bound its format allows. A FIFO, a device such as
// /dev/zero, a socket or a directory is refused with "PATH: not a regular file" instead of
// hanging or reading without end. The GUI uses the same functions before its own Qt reads.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace attnscope {

// Bounds for whole-file readers, in bytes. JSON: a tokenizer.json of a large vocabulary is tens of
// MB; text lists (vocab.txt, merges.txt, token lists) the same; a workspace is a few kB.
constexpr std::uint64_t kMaxJsonFileBytes = std::uint64_t(512) << 20;
constexpr std::uint64_t kMaxTextFileBytes = std::uint64_t(512) << 20;

// An open read-only descriptor of a regular file and its size. Owns the descriptor.
class InputFile {
public:
    // Opens without blocking (a FIFO cannot hang the open) and checks the type on the descriptor
    // itself. Throws attnscope::Error "PATH: cannot open: REASON" or "PATH: not a regular file".
    explicit InputFile(const std::filesystem::path& path);
    ~InputFile();
    InputFile(const InputFile&) = delete;
    InputFile& operator=(const InputFile&) = delete;

    int fd() const { return fd_; }
    std::uint64_t size() const { return size_; }

private:
    int fd_ = -1;
    std::uint64_t size_ = 0;
};

// Throws attnscope::Error "PATH: not a regular file" when path exists (links followed) and is not
// a regular file; a missing path is left to the caller's own open, which names what is wrong.
void refuseNonRegularFile(const std::filesystem::path& path);

// The whole file as bytes. Throws attnscope::Error "PATH: cannot be read" (missing or unreadable),
// "PATH: not a regular file", or "PATH: N bytes, more than the M a WHAT may have" when larger
// than maxBytes.
std::string readInputFile(const std::filesystem::path& path, std::uint64_t maxBytes, const std::string& what = "file");

}  // namespace attnscope
