// The CLI tests' fork server: attnscope-cli's own objects (app/CMakeLists.txt) behind a loop that
// forks once per test run. Starting attnscope-cli costs 0.6 s before main (the dynamic loader
// over LibTorch's 280 libraries and its operator registration; 1.2-1.6 s under ASan), which was
// most of the CLI tests' time. This process pays it once; each request forks a child that is the
// CLI at the start of main, with the caller's working directory, environment, argv and output
// files, and runs the CLI's command line (runCommandLine, the same code main.cpp calls) and ends
// as main.cpp does (exitProcess: flushed streams, the leak checker under ASan, no static destructors).
//
// Under ASan the leak checker walks LibTorch's whole heap. A child checks for leaks when its run is
// the first of its kind in this server (the command, the set of option names given and the exit
// code), so every command's success and error paths with each combination of options the tests
// use are checked once per test process; ATTNSCOPE_FORK_SERVER_LEAKS=all checks every run.
//
// Under ASan this process allocates with LeakSanitizer disabled (__lsan_disable), from before the
// shared libraries' constructors to each fork: an entry in this executable's .preinit_array runs
// after ASan's own (__asan_init) and before any library's constructor (LibTorch's operator
// registration). A child enables it again first thing, so every chunk a CLI run allocates is
// checked as before. Chunks allocated while it is disabled are LeakSanitizer's "ignored" ones
// (compiler-rt's lsan_common): a check scans them for pointers, as roots, but writes nothing into
// them. Before, the check tagged every reachable chunk and then reset every tag, and in a forked
// child each of those writes copied a page of the heap it shares with this process (LibTorch's
// registries): about 34,000 page faults and 1.6 s of CPU per check, now 9,000 and 0.7 s
// (docs/ci.md, 2026-12-06). What the children's checks no longer see is a leak of memory
// allocated before the run (a pre-main chunk whose last pointer a run drops, or one a library
// leaked at load) and a run's chunks reachable only from such a chunk; the tests that start the
// real binary still check whole processes.
//
// Protocol on stdin/stdout (tests/cli/cli_run.h is the other side), native-endian:
//   request: u32 count, then count strings, each u32 length + bytes:
//            cwd, stdout file, stderr file, argc (decimal), argv[1..argc-1], then the environment
//   reply:   i32 the child's wait status (as waitpid reports it)
// EOF on stdin ends the server. No parallel region has run in this process when it forks, so the
// children start OpenMP and OpenBLAS afresh, as a new process would.
#include "commands.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <set>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define ATTNSCOPE_SERVER_HEAP_IGNORED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ATTNSCOPE_SERVER_HEAP_IGNORED 1
#endif
#endif
#ifdef ATTNSCOPE_SERVER_HEAP_IGNORED
#include <sanitizer/lsan_interface.h>
#endif

namespace {

#ifdef ATTNSCOPE_SERVER_HEAP_IGNORED
// The server's allocations, from here to each fork, are LeakSanitizer's "ignored" chunks (the
// header comment); the disabling counts per thread, and the child is the forking thread.
void ignoreServerHeap() { __lsan_disable(); }
__attribute__((section(".preinit_array"), used)) void (*ignoreServerHeapEntry)() = ignoreServerHeap;
#endif

bool readAll(int fd, void* data, size_t n) {
    auto* p = static_cast<char*>(data);
    while (n > 0) {
        const ssize_t got = read(fd, p, n);
        if (got <= 0) return false;
        p += got;
        n -= static_cast<size_t>(got);
    }
    return true;
}

bool readRequest(std::vector<std::string>& fields) {
    uint32_t count = 0;
    if (!readAll(0, &count, sizeof count)) return false;
    fields.assign(count, {});
    for (auto& f : fields) {
        uint32_t len = 0;
        if (!readAll(0, &len, sizeof len)) return false;
        f.resize(len);
        if (len > 0 && !readAll(0, f.data(), len)) return false;
    }
    return true;
}

void redirect(const std::string& file, int fd, int flags) {
    const int opened = open(file.c_str(), flags, 0644);
    if (opened < 0 || dup2(opened, fd) < 0) {
        std::perror(file.c_str());
        _exit(127);
    }
    close(opened);
}

// A run's kind: the command, the option names given (sorted, without their values) and the exit code.
std::string runKind(const std::vector<std::string>& fields, int argc, int code) {
    std::set<std::string> options;
    for (int i = 2; i < argc; ++i) {
        const std::string& a = fields[3 + static_cast<size_t>(i)];
        if (a.rfind("--", 0) == 0) options.insert(a.substr(0, a.find('=')));
    }
    std::string kind = argc >= 2 ? fields[4] : std::string();
    for (const auto& o : options) kind += " " + o;
    return kind + " -> " + std::to_string(code);
}

// In the child: become the CLI process the request describes, then run it. checked: the kinds of
// run already leak-checked by this server.
[[noreturn]] void runChild(std::vector<std::string>& fields, const std::set<std::string>& checked, bool checkAll) {
#ifdef ATTNSCOPE_SERVER_HEAP_IGNORED
    __lsan_enable();  // from here on, the CLI process's own allocations: all checked
#endif
    const int argc = std::atoi(fields[3].c_str());
    redirect("/dev/null", 0, O_RDONLY);
    redirect(fields[1], 1, O_WRONLY | O_CREAT | O_TRUNC);
    redirect(fields[2], 2, O_WRONLY | O_CREAT | O_TRUNC);
    if (chdir(fields[0].c_str()) != 0) {
        std::perror(fields[0].c_str());
        _exit(127);
    }
    clearenv();
    for (size_t i = 4 + static_cast<size_t>(argc - 1); i < fields.size(); ++i) putenv(fields[i].data());
    std::vector<char*> argv{const_cast<char*>("attnscope-cli")};
    for (int i = 1; i < argc; ++i) argv.push_back(fields[3 + static_cast<size_t>(i)].data());
    argv.push_back(nullptr);
    const int code = attnscope::cli::runCommandLine(argc, argv.data());
    attnscope::cli::exitProcess(code, checkAll || checked.count(runKind(fields, argc, code)) == 0);
}

}  // namespace

int main() {
    const char* leaks = std::getenv("ATTNSCOPE_FORK_SERVER_LEAKS");
    const bool checkAll = leaks && std::strcmp(leaks, "all") == 0;
    std::set<std::string> checked;
    std::vector<std::string> fields;
    while (readRequest(fields)) {
        int32_t status = 127 << 8;
        const int argc = fields.size() >= 4 ? std::atoi(fields[3].c_str()) : 0;
        if (argc >= 1 && fields.size() >= 3 + static_cast<size_t>(argc)) {
            std::fflush(nullptr);
            const pid_t pid = fork();
            if (pid == 0) runChild(fields, checked, checkAll);
            int st = 0;
            if (pid > 0 && waitpid(pid, &st, 0) == pid) {
                status = st;
                if (WIFEXITED(st)) checked.insert(runKind(fields, argc, WEXITSTATUS(st)));
            }
        }
        if (write(1, &status, sizeof status) != static_cast<ssize_t>(sizeof status)) return 1;
    }
    return 0;
}
