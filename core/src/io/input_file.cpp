#include "attnscope/io/input_file.h"

#include "io/file_errors.h"

#include <cerrno>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace attnscope {

namespace {

// fstat on an open descriptor: the type checked is that of the file actually read.
std::uint64_t regularSize(int fd, const std::filesystem::path& path) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) failAt(path, "cannot be read (" + errnoText(errno) + ")");
    if (!S_ISREG(st.st_mode)) failAt(path, "not a regular file");
    return static_cast<std::uint64_t>(st.st_size);
}

int openNonBlocking(const std::filesystem::path& path) {
    int fd;
    do fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    while (fd < 0 && errno == EINTR);
    return fd;
}

}  // namespace

InputFile::InputFile(const std::filesystem::path& path) {
    fd_ = openNonBlocking(path);
    if (fd_ < 0) failAt(path, "cannot open: " + errnoText(errno));
    try {
        size_ = regularSize(fd_, path);
    } catch (...) {
        ::close(fd_);
        throw;
    }
}

InputFile::~InputFile() {
    if (fd_ >= 0) ::close(fd_);
}

void refuseNonRegularFile(const std::filesystem::path& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) failAt(path, "not a regular file");
}

std::string readInputFile(const std::filesystem::path& path, std::uint64_t maxBytes, const std::string& what) {
    const UniqueFd file{openNonBlocking(path)};
    if (file.fd < 0) {
        const int error = errno;
        // The readers' long-standing wording for a missing file; other causes are named.
        failAt(path, error == ENOENT ? std::string("cannot be read") : "cannot be read (" + errnoText(error) + ")");
    }
    const std::uint64_t size = regularSize(file.fd, path);
    auto tooLarge = [&](std::uint64_t bytes) {
        failAt(path, std::to_string(bytes) + " bytes, more than the " + std::to_string(maxBytes) + " a " + what +
                             " may have");
    };
    if (size > maxBytes) tooLarge(size);
    std::string bytes(static_cast<std::size_t>(size), '\0');
    std::size_t have = 0;
    for (;;) {  // to the end, even if the file grew since fstat, but never past the bound
        if (have == bytes.size()) {
            if (have > maxBytes) tooLarge(have);
            bytes.resize(have + 65536);
        }
        const ssize_t n = ::read(file.fd, bytes.data() + have, bytes.size() - have);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) failAt(path, "cannot be read (" + errnoText(errno) + ")");
        if (n == 0) break;
        have += static_cast<std::size_t>(n);
    }
    if (have > maxBytes) tooLarge(have);
    bytes.resize(have);
    return bytes;
}

}  // namespace attnscope
