#include "attnscope/io/atomic_file.h"

#include "attnscope/runtime/error.h"
#include "io/file_errors.h"

#include <atomic>
#include <cerrno>
#include <string>
#include <system_error>

#include <fcntl.h>
#include <unistd.h>

namespace attnscope {

namespace {

// open(O_CREAT) fails with ENOENT only when the folder is missing; say so instead of "No such file".
std::string openErrorText(int error) {
    if (error == ENOENT) return "the folder does not exist";
    return std::error_code(error, std::generic_category()).message();
}

}  // namespace

AtomicFile::AtomicFile(std::filesystem::path target) : target_(std::move(target)) {
    // pid and a counter: two processes, or two writers in one process, never share a temporary;
    // O_EXCL makes sure a stale file of that name is never written into.
    static std::atomic<unsigned> counter{0};
    tmp_ = target_;
    tmp_ += ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
    fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ < 0) throw Error(target_.string() + ": cannot write here (" + openErrorText(errno) + ")");
}

AtomicFile::~AtomicFile() {
    if (!committed_) discard();
}

void AtomicFile::discard() noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    ::unlink(tmp_.c_str());
}

void AtomicFile::write(const void* data, std::size_t bytes) {
    if (fd_ < 0) throw Error(target_.string() + ": already closed (written after commit)");
    const auto* p = static_cast<const char*>(data);
    while (bytes > 0) {
        const ssize_t n = ::write(fd_, p, bytes);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0)
            throw Error(target_.string() + ": write failed (" + (n < 0 ? errnoText(errno) : "nothing written") + ")");
        p += n;
        bytes -= static_cast<std::size_t>(n);
    }
}

void AtomicFile::commit() {
    if (fd_ < 0) throw Error(target_.string() + ": already closed (committed twice)");
    // close() reports delayed write errors (NFS, quotas), so it is checked like a write.
    const int closed = ::close(fd_);
    fd_ = -1;
    if (closed != 0) {
        const int error = errno;
        discard();
        throw Error(target_.string() + ": write failed (" + errnoText(error) + ")");
    }
    if (::rename(tmp_.c_str(), target_.c_str()) != 0) {
        const int error = errno;
        discard();
        throw Error(target_.string() + ": cannot be written (" + errnoText(error) + ")");
    }
    committed_ = true;
}

void writeFileAtomically(const std::filesystem::path& path, std::string_view bytes) {
    AtomicFile file(path);
    file.write(bytes);
    file.commit();
}

}  // namespace attnscope
