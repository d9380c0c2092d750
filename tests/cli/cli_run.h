// Running the real attnscope-cli from tests: every CLI test file uses these.
#pragma once

#include "gpt2_fixture.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <vector>

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

inline CliResult runCli(const std::vector<std::string>& args) {
    static const auto dir = freshDir("cli-run-io");
    auto quote = [](const std::string& s) {
        std::string q = "'";
        for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
        return q + "'";
    };
    std::string cmd = quote(ATTNSCOPE_CLI);
    for (const auto& a : args) cmd += " " + quote(a);
    cmd += " >" + quote((dir / "out").string()) + " 2>" + quote((dir / "err").string()) + " </dev/null";
    const int status = std::system(cmd.c_str());
    CliResult r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = slurpFile(dir / "out");
    r.err = slurpFile(dir / "err");
    return r;
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

}  // namespace attnscope::testing
