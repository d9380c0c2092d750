#include "attnscope/io/atomic_file.h"

#include "attnscope/runtime/error.h"
#include "io/file_errors.h"

#include <atomic>
#include <cerrno>
#include <string>
#include <system_error>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace attnscope {

namespace {

// open(O_CREAT) fails with ENOENT only when the folder is missing; say so instead of "No such file".
std::string openErrorText(int error) {
    if (error == ENOENT) return "the folder does not exist";
    return std::error_code(error, std::generic_category()).message();
}

// The output rule. A symbolic link is followed (to its end, as open() would) so that its target
// is replaced and the link kept; the final path must then be a regular file or not exist. Anything
// else (a device, FIFO, socket or directory) is refused: renaming over it would replace it, and
// as root even /dev/null. Returns the path to replace and, when it exists, its permission bits.
std::filesystem::path outputPath(const std::filesystem::path& given, mode_t& mode, bool& exists) {
    std::filesystem::path path = given;
    for (int hops = 0;; ++hops) {
        struct stat st {};
        if (::lstat(path.c_str(), &st) != 0) {
            if (errno != ENOENT) throw Error(given.string() + ": cannot write here (" + errnoText(errno) + ")");
            exists = false;  // a new path; a missing folder is reported when the temporary is created
            return path;
        }
        if (S_ISREG(st.st_mode)) {
            exists = true;
            mode = st.st_mode & 07777;
            return path;
        }
        if (!S_ISLNK(st.st_mode)) throw Error(given.string() + ": not a regular file");
        if (hops == 40) throw Error(given.string() + ": cannot write here (too many levels of symbolic links)");
        std::string link(static_cast<std::size_t>(st.st_size > 0 ? st.st_size : 4096) + 1, '\0');
        const ssize_t n = ::readlink(path.c_str(), link.data(), link.size());
        if (n < 0 || static_cast<std::size_t>(n) >= link.size())
            throw Error(given.string() + ": cannot write here (the link cannot be read)");
        link.resize(static_cast<std::size_t>(n));
        const std::filesystem::path next(link);
        path = next.is_absolute() ? next : path.parent_path() / next;
    }
}

}  // namespace

AtomicFile::AtomicFile(std::filesystem::path target) : target_(std::move(target)) {
    mode_t mode = 0;
    bool exists = false;
    final_ = outputPath(target_, mode, exists);
    // pid and a counter: two processes, or two writers in one process, never share a temporary;
    // O_EXCL makes sure a stale file of that name is never written into. The temporary sits next
    // to the file it replaces (a link's target), so the rename stays within one file system.
    static std::atomic<unsigned> counter{0};
    tmp_ = final_;
    tmp_ += ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
    fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ < 0) throw Error(target_.string() + ": cannot write here (" + openErrorText(errno) + ")");
    if (exists) (void)::fchmod(fd_, mode);  // the replaced file's permissions, not the umask's
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
    if (::rename(tmp_.c_str(), final_.c_str()) != 0) {
        const int error = errno;
        discard();
        throw Error(target_.string() + ": cannot be written (" + errnoText(error) + ")");
    }
    committed_ = true;
}

std::filesystem::path outputTarget(const std::filesystem::path& path) {
    mode_t mode = 0;
    bool exists = false;
    return outputPath(path, mode, exists);
}

void refuseOutputOverInput(const std::filesystem::path& output, const std::filesystem::path& input) {
    std::error_code ec;
    if (std::filesystem::equivalent(output, input, ec))
        throw Error(output.string() + ": is also an input of this command; write to another path");
}

void writeFileAtomically(const std::filesystem::path& path, std::string_view bytes) {
    AtomicFile file(path);
    file.write(bytes);
    file.commit();
}

}  // namespace attnscope
