// Special files for the input and output rules' tests, made only inside a test's own temporary
// folder (never /dev itself): FIFOs, device nodes (as root), and a guard that keeps a FIFO from
// hanging a test run by code that opens it without the rules.
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

namespace attnscope::testing {

inline bool makeFifo(const std::filesystem::path& path) { return ::mkfifo(path.c_str(), 0600) == 0; }

// A character device node like /dev/null (1, 3) or /dev/full (1, 7), made in the test's folder.
// Needs root (CAP_MKNOD), as CI and containers run; false otherwise, and the caller skips it.
inline bool makeCharDevice(const std::filesystem::path& path, unsigned major, unsigned minor) {
    return ::mknod(path.c_str(), S_IFCHR | 0600, ::makedev(major, minor)) == 0;
}

inline bool isFifo(const std::filesystem::path& p) {
    return std::filesystem::symlink_status(p).type() == std::filesystem::file_type::fifo;
}
inline bool isCharDevice(const std::filesystem::path& p) {
    return std::filesystem::symlink_status(p).type() == std::filesystem::file_type::character;
}

// While alive, opens the FIFO for writing whenever a reader waits on it and closes it at once, so
// a reader that opened it blocking gets end-of-file instead of waiting forever: code without the
// input rule then fails its test rather than hanging it.
class FifoUnblocker {
public:
    explicit FifoUnblocker(std::filesystem::path fifo) : fifo_(std::move(fifo)), thread_([this] { loop(); }) {}
    ~FifoUnblocker() {
        stop_ = true;
        thread_.join();
    }
    FifoUnblocker(const FifoUnblocker&) = delete;
    FifoUnblocker& operator=(const FifoUnblocker&) = delete;

private:
    void loop() {
        while (!stop_) {
            const int fd = ::open(fifo_.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);  // ENXIO without a reader
            if (fd >= 0) ::close(fd);
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    }
    std::filesystem::path fifo_;
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

}  // namespace attnscope::testing
