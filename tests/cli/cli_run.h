// Running the real attnscope-cli from tests: every CLI test file uses these.
#pragma once

#include "gpt2_fixture.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <fcntl.h>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <string>
#include <spawn.h>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char** environ;

namespace attnscope::testing {

struct CliResult {
    int code = -1;
    std::string out, err;
};

inline std::string slurpFile(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

inline std::uint32_t be32(const std::string& s, std::size_t at) {
    return (std::uint32_t(std::uint8_t(s[at])) << 24) | (std::uint32_t(std::uint8_t(s[at + 1])) << 16) |
           (std::uint32_t(std::uint8_t(s[at + 2])) << 8) | std::uint32_t(std::uint8_t(s[at + 3]));
}

// Width, height and pixels per metre (pHYs, unit = metre) of a PNG, read from its chunks (the
// export tests); ended: the chunks run to an IEND chunk that closes the file.
struct PngInfo {
    std::uint32_t width = 0, height = 0, ppmX = 0, ppmY = 0;
    int unit = -1;
    bool ended = false;
};

inline PngInfo pngInfo(const std::string& png) {
    REQUIRE(png.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0);
    PngInfo info;
    for (std::size_t at = 8; at + 8 <= png.size();) {
        const std::uint32_t length = be32(png, at);
        const std::string type = png.substr(at + 4, 4);
        if (type == "IHDR") {
            info.width = be32(png, at + 8);
            info.height = be32(png, at + 12);
        } else if (type == "pHYs") {
            info.ppmX = be32(png, at + 8);
            info.ppmY = be32(png, at + 12);
            info.unit = std::uint8_t(png[at + 16]);
        } else if (type == "IEND") {
            info.ended = at + 12 == png.size();
        }
        at += 12 + length;
    }
    return info;
}

// /Type /Page objects of a PDF (not /Pages).
inline int pdfPages(const std::string& pdf) {
    const std::regex page("/Type\\s*/Page[^s]");
    return int(std::distance(std::sregex_iterator(pdf.begin(), pdf.end(), page), std::sregex_iterator()));
}

inline std::string shellQuote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

inline int exitCodeOf(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

// Starts the real attnscope-cli binary through the shell, as a user would.
inline CliResult runCliProcess(const std::vector<std::string>& args) {
    static const auto dir = freshDir("cli-run-io");
    std::string cmd = shellQuote(ATTNSCOPE_CLI);
    for (const auto& a : args) cmd += " " + shellQuote(a);
    cmd += " >" + shellQuote((dir / "out").string()) + " 2>" + shellQuote((dir / "err").string()) + " </dev/null";
    CliResult r;
    r.code = exitCodeOf(std::system(cmd.c_str()));
    r.out = slurpFile(dir / "out");
    r.err = slurpFile(dir / "err");
    return r;
}

#ifdef ATTNSCOPE_CLI_FORK_SERVER
// The same command line run by the fork server (tests/cli/fork_server.cpp): attnscope-cli's
// objects in a child forked from one long-lived process, with this process's working directory
// and environment, so that a run does not pay LibTorch's start-up each time.
class CliForkServer {
public:
    static CliForkServer& instance() {
        static CliForkServer server;
        return server;
    }
    int run(const std::vector<std::string>& args, const std::filesystem::path& out, const std::filesystem::path& err) {
        std::vector<std::string> fields{std::filesystem::current_path().string(), out.string(), err.string(),
                                        std::to_string(args.size() + 1)};
        fields.insert(fields.end(), args.begin(), args.end());
        for (char** e = environ; *e; ++e) fields.emplace_back(*e);
        std::string msg;
        auto put = [&msg](uint32_t v) { msg.append(reinterpret_cast<const char*>(&v), sizeof v); };
        put(static_cast<uint32_t>(fields.size()));
        for (const auto& f : fields) {
            put(static_cast<uint32_t>(f.size()));
            msg += f;
        }
        if (::write(toServer_, msg.data(), msg.size()) != static_cast<ssize_t>(msg.size()))
            throw std::runtime_error("the CLI fork server stopped (write failed)");
        int32_t status = 0;
        auto* p = reinterpret_cast<char*>(&status);
        for (size_t got = 0; got < sizeof status;) {
            const ssize_t n = ::read(fromServer_, p + got, sizeof status - got);
            if (n <= 0) throw std::runtime_error("the CLI fork server stopped (no reply)");
            got += static_cast<size_t>(n);
        }
        return status;
    }

private:
    CliForkServer() {
        int in[2], out[2];
        if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_adddup2(&actions, in[0], 0);
        posix_spawn_file_actions_adddup2(&actions, out[1], 1);
        char* argv[] = {const_cast<char*>(ATTNSCOPE_CLI_FORK_SERVER), nullptr};
        pid_t pid = 0;
        const int rc = posix_spawn(&pid, ATTNSCOPE_CLI_FORK_SERVER, &actions, nullptr, argv, environ);
        posix_spawn_file_actions_destroy(&actions);
        ::close(in[0]);
        ::close(out[1]);
        if (rc != 0) throw std::runtime_error(std::string("cannot start ") + ATTNSCOPE_CLI_FORK_SERVER);
        toServer_ = in[1];
        fromServer_ = out[0];
        signal(SIGPIPE, SIG_IGN);  // a dead server shows as a failed write, not a killed test
    }
    // Closing the request pipe at exit ends the server's loop.
    ~CliForkServer() {
        ::close(toServer_);
        ::close(fromServer_);
    }
    int toServer_ = -1, fromServer_ = -1;
};
#endif

// Runs attnscope-cli with `args` (without the program name); the CLI test executable uses the
// fork server, the other tests start the binary.
inline CliResult runCli(const std::vector<std::string>& args) {
#ifdef ATTNSCOPE_CLI_FORK_SERVER
    static const auto dir = freshDir("cli-fork-io");
    CliResult r;
    r.code = exitCodeOf(CliForkServer::instance().run(args, dir / "out", dir / "err"));
    r.out = slurpFile(dir / "out");
    r.err = slurpFile(dir / "err");
    return r;
#else
    return runCliProcess(args);
#endif
}

// Exit `code` with stderr naming the problem; exit 2 (invalid input) is exactly one line "error: ...".
inline void requireCliExit(const CliResult& r, int code, const std::string& mentions) {
    INFO("stderr: " << r.err);
    REQUIRE(r.code == code);
    if (code == 2) {
        REQUIRE(r.err.rfind("error: ", 0) == 0);
        REQUIRE(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    }
    REQUIRE_THAT(r.err, Catch::Contains(mentions));
}

// Exit 2 and exactly one line "error: ..." naming the problem.
inline void requireCliInputError(const CliResult& r, const std::string& mentions) { requireCliExit(r, 2, mentions); }

// Invalid input: exit 2 and one line "error: ..." naming `what`.
inline void requireOneLineError(const CliResult& r, const std::string& what) {
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_THAT(r.err, Catch::StartsWith("error: ") && Catch::Contains(what));
}

}  // namespace attnscope::testing
