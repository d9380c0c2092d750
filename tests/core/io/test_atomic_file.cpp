// AtomicFile and writeFileAtomically (attnscope/io/atomic_file.h): a file appears whole on
// commit or not at all, a failed write keeps the old file and leaves no temporary behind.
#include "attnscope/io/atomic_file.h"
#include "attnscope/io/npy.h"
#include "attnscope/runtime/error.h"
#include "gpt2_fixture.h"
#include "npy_read.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <set>
#include <string>

namespace test_atomic_file {

using namespace attnscope;
namespace fs = std::filesystem;

namespace {

std::set<std::string> entries(const fs::path& dir) {
    std::set<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
    return names;
}

std::string contents(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("an atomic file appears only on commit, next to its target", "[io][atomic]") {
    const auto dir = testing::freshDir("atomic-commit");
    const auto target = dir / "a.json";
    {
        AtomicFile file(target);
        file.write("{\"x\": ");
        const char rest[] = "1}\n";
        file.write(rest, sizeof rest - 1);
        CHECK_FALSE(fs::exists(target));
        CHECK(file.temporary().parent_path() == dir);  // same folder: the rename never copies
        CHECK(entries(dir) == std::set<std::string>{file.temporary().filename().string()});
        file.commit();
        CHECK_THROWS_AS(file.write("more"), Error);
    }
    CHECK(contents(target) == "{\"x\": 1}\n");
    CHECK(entries(dir) == std::set<std::string>{"a.json"});

    // Replacing a file: the new content in one step, still no temporary left.
    writeFileAtomically(target, "second");
    CHECK(contents(target) == "second");
    CHECK(entries(dir) == std::set<std::string>{"a.json"});
}

TEST_CASE("a failure before commit leaves the old file and no temporary", "[io][atomic]") {
    const auto dir = testing::freshDir("atomic-fail");
    const auto target = dir / "a.txt";
    writeFileAtomically(target, "old");
    const auto fail = [&] {
        AtomicFile file(target);
        file.write("half of the new");
        throw Error("stopped before commit");
    };
    REQUIRE_THROWS_WITH(fail(), "stopped before commit");
    CHECK(contents(target) == "old");
    CHECK(entries(dir) == std::set<std::string>{"a.txt"});

    // NpyWriter writes through AtomicFile: a miscounted array keeps the previous .npy.
    writeNpy(dir / "m.npy", {2}, {1.f, 2.f});
    {
        NpyWriter w(dir / "m.npy", {2, 2});
        const float x[3] = {5, 6, 7};
        w.append(x, 3);
        REQUIRE_THROWS_WITH(w.finish(), Catch::Contains("m.npy") && Catch::Contains("shape holds 4"));
    }
    CHECK(testing::readNpy(dir / "m.npy").values == std::vector<float>{1.f, 2.f});
    CHECK(entries(dir) == std::set<std::string>{"a.txt", "m.npy"});

    // The rename itself fails (a folder with files took the path after the writer was made, as the
    // output rule refuses an existing folder up front): named, and cleaned up.
    AtomicFile late(dir / "busy");
    late.write("y");
    fs::create_directories(dir / "busy");
    writeFileAtomically(dir / "busy" / "inside", "x");
    REQUIRE_THROWS_WITH(late.commit(), Catch::StartsWith((dir / "busy").string() + ": cannot be written ("));
    CHECK(entries(dir) == std::set<std::string>{"a.txt", "busy", "m.npy"});
    CHECK(entries(dir / "busy") == std::set<std::string>{"inside"});
}

TEST_CASE("writing into a missing folder is a one-line error naming the file", "[io][atomic]") {
    const auto dir = testing::freshDir("atomic-missing");
    const auto target = dir / "no" / "such" / "out.json";
    std::string message;
    try {
        writeFileAtomically(target, "{}");
    } catch (const Error& e) {
        message = e.what();
    }
    CHECK(message == target.string() + ": cannot write here (the folder does not exist)");
    CHECK(message.find('\n') == std::string::npos);
    CHECK(fs::is_empty(dir));  // no folder is created on the way
    REQUIRE_THROWS_WITH(NpyWriter(target, {1}), target.string() + ": cannot write here (the folder does not exist)");
}

}  // namespace test_atomic_file
