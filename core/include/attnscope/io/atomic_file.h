// Files written whole or not at all. The bytes go to a temporary file next to the target (same
// folder, so the rename never crosses file systems) and commit() renames it over the target in
// one step: readers see the old file or the new one, never half of one. A writer destroyed
// without commit() removes its temporary and leaves the target as it was.
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
    // Creates the temporary "<target>.tmp-<pid>-<n>". Throws attnscope::Error naming target when
    // it cannot be created (missing folder, no permission).
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
    std::filesystem::path tmp_;
    int fd_ = -1;
    bool committed_ = false;
};

// The whole of bytes as the file at path, via AtomicFile. Throws attnscope::Error naming path.
void writeFileAtomically(const std::filesystem::path& path, std::string_view bytes);

}  // namespace attnscope
