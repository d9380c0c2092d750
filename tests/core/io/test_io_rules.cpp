// The output and input rules of core's file I/O (attnscope/io/atomic_file.h, input_file.h) and
// the one JSON reader's wording. Special files are made in the test's own folder only: a FIFO,
// and as root a device node; /dev itself is only ever read (/dev/null), never written.
#include "attnscope/attention/attention_file.h"
#include "attnscope/corpus/corpus_data.h"
#include "attnscope/io/atomic_file.h"
#include "attnscope/io/input_file.h"
#include "attnscope/io/npy.h"
#include "attnscope/lab/hedgehog.h"
#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"
#include "attnscope/tokenizer/tokenizer.h"
#include "gpt2_fixture.h"
#include "special_files.h"

#include <catch2/catch.hpp>

#include <sys/resource.h>

#include <csignal>
#include <fstream>
#include <iterator>

namespace test_io_rules {

using namespace attnscope;
using namespace attnscope::testing;
namespace fs = std::filesystem;

namespace {

std::string contents(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string errorOf(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "(no error)";
}

}  // namespace

TEST_CASE("output rule: FIFOs, device nodes and folders are refused and left as they are", "[io][atomic][rules]") {
    const auto dir = freshDir("rules-out-special");
    const auto fifo = dir / "pipe";
    REQUIRE(makeFifo(fifo));
    CHECK(errorOf([&] { writeFileAtomically(fifo, "x"); }) == fifo.string() + ": not a regular file");
    CHECK(isFifo(fifo));
    // Through a link: the link is followed, and what it names is still not a regular file.
    fs::create_symlink("pipe", dir / "to-pipe");
    CHECK(errorOf([&] { writeFileAtomically(dir / "to-pipe", "x"); }) ==
          (dir / "to-pipe").string() + ": not a regular file");
    CHECK(isFifo(fifo));
    CHECK(fs::is_symlink(dir / "to-pipe"));

    fs::create_directories(dir / "folder");
    CHECK(errorOf([&] { writeFileAtomically(dir / "folder", "x"); }) ==
          (dir / "folder").string() + ": not a regular file");
    CHECK(fs::is_directory(dir / "folder"));
    CHECK(errorOf([&] { NpyWriter(dir / "folder", {1}); }) == (dir / "folder").string() + ": not a regular file");

    // As root (CI, containers) a rename replaced /dev/null itself; a node of the same kind made
    // here shows the rule without going near /dev.
    for (const auto& [name, minor] : {std::pair<const char*, unsigned>{"null", 3}, {"full", 7}}) {
        const auto node = dir / name;
        if (!makeCharDevice(node, 1, minor)) {
            WARN("not root: the device-node case is skipped");
            continue;
        }
        CHECK(errorOf([&] { writeFileAtomically(node, "x"); }) == node.string() + ": not a regular file");
        CHECK(isCharDevice(node));
        fs::remove(node);  // no device node is left lying in the temporary folder
    }
    // Nothing was left behind: no temporaries next to the refused paths.
    for (const auto& e : fs::directory_iterator(dir))
        CHECK(e.path().filename().string().find(".tmp-") == std::string::npos);
}

TEST_CASE("output rule: a symbolic link is followed, its target replaced, the link kept", "[io][atomic][rules]") {
    const auto dir = freshDir("rules-out-link");
    fs::create_directories(dir / "real");
    writeText(dir / "real" / "m.json", "old");
    fs::create_symlink("real/m.json", dir / "m.json");       // relative
    fs::create_symlink(dir / "m.json", dir / "chain.json");  // absolute, to a link
    writeFileAtomically(dir / "chain.json", "new");
    CHECK(fs::is_symlink(dir / "chain.json"));
    CHECK(fs::is_symlink(dir / "m.json"));
    CHECK(contents(dir / "real" / "m.json") == "new");
    // The temporary went next to the target (same file system), and is gone.
    CHECK(std::distance(fs::directory_iterator(dir / "real"), fs::directory_iterator()) == 1);

    // A dangling link: the file it names is created.
    fs::create_symlink("real/new.json", dir / "dangling.json");
    writeFileAtomically(dir / "dangling.json", "made");
    CHECK(fs::is_symlink(dir / "dangling.json"));
    CHECK(contents(dir / "real" / "new.json") == "made");

    // A replaced regular file keeps its permissions.
    fs::permissions(dir / "real" / "m.json", fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
    writeFileAtomically(dir / "real" / "m.json", "again");
    CHECK(fs::status(dir / "real" / "m.json").permissions() ==
          (fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read));

    // A loop of links is an error naming the path, not a hang.
    fs::create_symlink("b", dir / "a");
    fs::create_symlink("a", dir / "b");
    CHECK_THAT(errorOf([&] { writeFileAtomically(dir / "a", "x"); }), Catch::StartsWith((dir / "a").string() + ": "));
}

TEST_CASE("output rule: a write error (file too large) names the path and keeps the old file", "[io][atomic][rules]") {
    const auto dir = freshDir("rules-out-fsize");
    const auto target = dir / "big.bin";
    writeText(target, "old");
    // RLIMIT_FSIZE makes write() fail with EFBIG, as a full disk fails with ENOSPC; SIGXFSZ is
    // ignored so that the error reaches the writer. Both are restored.
    rlimit old{};
    REQUIRE(::getrlimit(RLIMIT_FSIZE, &old) == 0);
    auto* previous = std::signal(SIGXFSZ, SIG_IGN);
    rlimit small = old;
    small.rlim_cur = 4096;
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
    const std::string message = errorOf([&] { writeFileAtomically(target, std::string(100000, 'x')); });
    ::setrlimit(RLIMIT_FSIZE, &old);
    std::signal(SIGXFSZ, previous);
    CHECK_THAT(message, Catch::StartsWith(target.string() + ": write failed (File too large)"));
    CHECK(contents(target) == "old");
    CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 1);
}

TEST_CASE("an output that is also an input is refused", "[io][atomic][rules]") {
    const auto dir = freshDir("rules-out-in");
    writeText(dir / "in.json", "{}");
    fs::create_symlink("in.json", dir / "alias.json");
    CHECK(errorOf([&] { refuseOutputOverInput(dir / "alias.json", dir / "in.json"); }) ==
          (dir / "alias.json").string() + ": is also an input of this command; write to another path");
    CHECK(errorOf([&] { refuseOutputOverInput(dir / "." / "in.json", dir / "in.json"); }) != "(no error)");
    refuseOutputOverInput(dir / "out.json", dir / "in.json");  // a new path
    refuseOutputOverInput(dir / "other", dir / "missing");     // neither exists
}

TEST_CASE("input rule: every reader refuses FIFOs and devices, and bounds what it reads", "[io][rules]") {
    const auto dir = freshDir("rules-in");
    const auto fifo = dir / "pipe";
    REQUIRE(makeFifo(fifo));
    const FifoUnblocker unblock(fifo);  // without the rule a reader would wait on it forever
    fs::create_symlink("/dev/null", dir / "null-link");
    for (const fs::path& bad : {fifo, fs::path("/dev/null"), dir / "null-link", dir}) {
        INFO(bad);
        const std::string refused = bad.string() + ": not a regular file";
        CHECK(errorOf([&] { readInputFile(bad, 100); }) == refused);
        CHECK(errorOf([&] { InputFile f(bad); }) == refused);
        CHECK(errorOf([&] { Tokenizer::fromFile(bad); }) == refused);
        CHECK(errorOf([&] { readAttentionTokens(bad, 2, 2, "self"); }) == refused);
        CHECK(errorOf([&] { readCorpus(bad); }) == refused);
        if (bad != dir) CHECK(errorOf([&] { refuseNonRegularFile(bad); }) == refused);
    }
    // A model folder whose config.json is a FIFO.
    fs::create_directories(dir / "model");
    REQUIRE(makeFifo(dir / "model" / "config.json"));
    {
        const FifoUnblocker unblockConfig(dir / "model" / "config.json");
        CHECK(errorOf([&] { Model::load(dir / "model"); }) ==
              (dir / "model" / "config.json").string() + ": not a regular file");
    }

    // A distil --per-head folder whose files are FIFOs (the Kinds tab and distil read them).
    fs::create_directories(dir / "hedgehog");
    REQUIRE(makeFifo(dir / "hedgehog" / "feature_maps.json"));
    REQUIRE(makeFifo(dir / "hedgehog" / "report.json"));
    {
        const FifoUnblocker unblockMaps(dir / "hedgehog" / "feature_maps.json");
        const FifoUnblocker unblockReport(dir / "hedgehog" / "report.json");
        CHECK(errorOf([&] { readFeatureMaps(dir / "hedgehog"); }) ==
              (dir / "hedgehog" / "feature_maps.json").string() + ": not a regular file");
        CHECK(errorOf([&] { readHedgehogReport(dir / "hedgehog"); }) ==
              (dir / "hedgehog" / "report.json").string() + ": not a regular file");
    }

    // Regular files: read whole up to the bound, refused above it with the sizes.
    writeText(dir / "ten.txt", "0123456789");
    CHECK(readInputFile(dir / "ten.txt", 10) == "0123456789");
    CHECK(errorOf([&] { readInputFile(dir / "ten.txt", 9, "token list"); }) ==
          (dir / "ten.txt").string() + ": 10 bytes, more than the 9 a token list may have");
    CHECK(errorOf([&] { readInputFile(dir / "none.txt", 9); }) == (dir / "none.txt").string() + ": cannot be read");
    refuseNonRegularFile(dir / "none.txt");  // missing: left to the caller's open
}

TEST_CASE("one JSON reader: the same wording for config, tokenizer and token files", "[io][json][rules]") {
    const auto dir = freshDir("rules-json");
    const std::string bad = "{\"a\": 1,,}";
    const std::string expected =
            ": not valid JSON (parse error at line 1, column 9: syntax error while parsing object key";
    writeText(dir / "tok.json", bad);
    writeText(dir / "tokens.json", bad);
    fs::create_directories(dir / "model");
    writeText(dir / "model" / "config.json", bad);
    const std::string tok = errorOf([&] { Tokenizer::fromFile(dir / "tok.json"); });
    const std::string tokens = errorOf([&] { readAttentionTokens(dir / "tokens.json", 2, 2, "self"); });
    const std::string config = errorOf([&] { Model::load(dir / "model"); });
    CHECK_THAT(tok, Catch::StartsWith((dir / "tok.json").string() + expected));
    CHECK_THAT(tokens, Catch::StartsWith((dir / "tokens.json").string() + expected));
    CHECK_THAT(config, Catch::StartsWith((dir / "model" / "config.json").string() + expected));
    for (const std::string& m : {tok, tokens, config}) CHECK(m.find("json.exception") == std::string::npos);
}

}  // namespace test_io_rules
