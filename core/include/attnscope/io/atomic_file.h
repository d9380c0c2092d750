// Files written whole or not at all. The bytes go to a temporary file next to the target (same
// folder, so the rename never crosses file systems) and commit() renames it over the target in
// one step: readers see the old file or the new one, never half of one. A writer destroyed
// without commit() removes its temporary and leaves the target as it was.
//
// The output rule: a regular file or a new path is replaced as above; a symbolic link is
// followed and its target replaced, the link kept; any other existing file (device, FIFO,
// socket, directory) is refused with attnscope::Error "PATH: not a regular file" before anything
// is written. Write errors (no space, read-only file system, I/O) throw Error naming the path.
//
// No fsync: these are exports and caches, not a database; the rename alone protects against
// this process failing half way, not against a power cut.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string_view>

namespace attnscope {

class AtomicFile {
public:
    // Applies the output rule, then creates the temporary "<file>.tmp-<pid>-<n>" next to the file
    // to replace (a link's target). Throws attnscope::Error naming target when it is not a regular
    // file or the temporary cannot be created (missing folder, no permission).
    explicit AtomicFile(std::filesystem::path target);
    ~AtomicFile();  // without commit(): closes and removes the temporary
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;

    // Appends bytes to the temporary. Throws attnscope::Error naming the target (disk full, ...).
    void write(const void* data, std::size_t bytes);
    void write(std::string_view bytes) { write(bytes.data(), bytes.size()); }
    // Closes the temporary and renames it to the target, replacing any file there. Throws
    // attnscope::Error naming the target; the temporary is gone either way. Nothing may be
    // written after it.
    void commit();

    const std::filesystem::path& target() const { return target_; }
    const std::filesystem::path& temporary() const { return tmp_; }

private:
    void discard() noexcept;

    std::filesystem::path target_;
    std::filesystem::path final_;  // target_ with its symbolic links followed: what commit() replaces
    std::filesystem::path tmp_;
    int fd_ = -1;
    bool committed_ = false;
};

// The output rule alone, for writers that place files themselves (the CLI's staged outputs): the
// file a write to `path` replaces, its symbolic links followed. Throws attnscope::Error
// "PATH: not a regular file" as AtomicFile does.
std::filesystem::path outputTarget(const std::filesystem::path& path);

// An output must not be one of the command's inputs (the same file or folder, links followed):
// writing it would replace what is still to be read. Throws attnscope::Error
// "OUTPUT: is also an input of this command; write to another path". Paths that do not exist
// are never the same.
void refuseOutputOverInput(const std::filesystem::path& output, const std::filesystem::path& input);

// The whole of bytes as the file at path, via AtomicFile. Throws attnscope::Error naming path.
void writeFileAtomically(const std::filesystem::path& path, std::string_view bytes);

}  // namespace attnscope
