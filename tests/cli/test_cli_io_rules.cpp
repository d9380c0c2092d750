// attnscope-cli and the output and input rules (issue 37): outputs that are FIFOs, device nodes
// or folders are refused and left as they were, a linked output keeps its link, an output that
// is an input is refused; inputs that are FIFOs or devices are refused instead of hanging or
// reading without end; and the black-box finds: a 1,000,000-byte SentencePiece piece, --flow-rows
// -1, corpus --out naming a file. Special files are made in the test's own folder only.
#include "cli_run.h"
#include "special_files.h"

#include <catch2/catch.hpp>

#include <sys/resource.h>

#include <nlohmann/json.hpp>

namespace test_cli_io_rules {

using namespace attnscope::testing;
namespace fs = std::filesystem;

namespace {

const fs::path kSpm = fs::path(ATTNSCOPE_TOKENIZER_DATA) / "spm";

// A protobuf varint and a length-delimited field.
void putVarint(std::string& out, std::uint64_t v) {
    for (; v >= 0x80; v >>= 7) out += static_cast<char>((v & 0x7f) | 0x80);
    out += static_cast<char>(v);
}
std::uint64_t getVarint(const std::string& s, std::size_t& at) {
    std::uint64_t v = 0;
    for (int shift = 0;; shift += 7) {
        const auto b = static_cast<unsigned char>(s.at(at++));
        v |= std::uint64_t(b & 0x7f) << shift;
        if (!(b & 0x80)) return v;
    }
}

// The model with the piece string of piece `index` (ModelProto field 1, its field 1) replaced by
// `piece`; every other byte as it was.
std::string withPiece(const std::string& model, int index, const std::string& piece) {
    std::string out;
    int seen = 0;
    for (std::size_t at = 0; at < model.size();) {
        const std::size_t start = at;
        const std::uint64_t key = getVarint(model, at);
        const int wire = static_cast<int>(key & 7);
        if (wire == 0) getVarint(model, at);
        if (wire == 1) at += 8;
        if (wire == 5) at += 4;
        if (wire != 2) {
            out += model.substr(start, at - start);
            continue;
        }
        const std::uint64_t n = getVarint(model, at);
        const std::string body = model.substr(at, n);
        at += n;
        if ((key >> 3) != 1 || seen++ != index) {
            out += model.substr(start, at - start);
            continue;
        }
        std::string msg;  // the SentencePiece message: field 1 replaced, the rest copied
        for (std::size_t p = 0; p < body.size();) {
            const std::size_t s = p;
            const std::uint64_t k = getVarint(body, p);
            const int w = static_cast<int>(k & 7);
            if (w == 0) getVarint(body, p);
            if (w == 5) p += 4;
            if (w == 1) p += 8;
            if (w == 2) p += getVarint(body, p);
            if ((k >> 3) != 1) msg += body.substr(s, p - s);
        }
        std::string field;
        putVarint(field, (1 << 3) | 2);
        putVarint(field, piece.size());
        msg = field + piece + msg;
        putVarint(out, key);
        putVarint(out, msg.size());
        out += msg;
    }
    return out;
}

}  // namespace

TEST_CASE("cli outputs: a FIFO, a device node or a folder is refused and left as it was", "[cli][rules]") {
    const auto dir = freshDir("cli-rules-out");
    REQUIRE(makeFifo(dir / "pipe"));
    const auto alignment = [&](const fs::path& file) {
        return runCli({"attention", "builtin:reverse-dot", "--text", "ab", "--out", (dir / "maps").string(),
                       "--alignment", file.string()});
    };
    requireCliInputError(alignment(dir / "pipe"), (dir / "pipe").string() + ": not a regular file");
    CHECK(isFifo(dir / "pipe"));
    if (makeCharDevice(dir / "null", 1, 3)) {  // as root: what replaced /dev/null itself
        requireCliInputError(alignment(dir / "null"), (dir / "null").string() + ": not a regular file");
        CHECK(isCharDevice(dir / "null"));
        fs::remove(dir / "null");  // no device node is left lying in the temporary folder
    }
    // The staged outputs of --out DIR follow the same rule.
    fs::create_directories(dir / "staged");
    REQUIRE(makeFifo(dir / "staged" / "attention.npy"));
    requireCliInputError(
            runCli({"attention", "builtin:sentiment-dot", "--text", "a good film", "--out", (dir / "staged").string()}),
            (dir / "staged" / "attention.npy").string() + ": not a regular file");
    CHECK(isFifo(dir / "staged" / "attention.npy"));
    fs::create_directories(dir / "folder.json");
    requireCliInputError(runCli({"metrics", "builtin:sentiment-dot", "--text", "a good film", "--out",
                                 (dir / "folder.json").string()}),
                         (dir / "folder.json").string() + ": not a regular file");
    CHECK(fs::is_directory(dir / "folder.json"));
}

TEST_CASE("cli outputs: a linked output keeps its link; an output that is an input is refused", "[cli][rules]") {
    const auto dir = freshDir("cli-rules-link");
    fs::create_directories(dir / "real");
    writeText(dir / "real" / "m.json", "old");
    fs::create_symlink("real/m.json", dir / "L.json");
    const CliResult r =
            runCli({"metrics", "builtin:sentiment-dot", "--text", "a good film", "--out", (dir / "L.json").string()});
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(fs::is_symlink(dir / "L.json"));
    CHECK(nlohmann::json::parse(slurpFile(dir / "real" / "m.json")).contains("heads"));

    // metrics --out onto its own --attention-file.
    REQUIRE(runCli({"attention", "builtin:sentiment-dot", "--text", "a good film", "--out", (dir / "maps").string()})
                    .code == 0);
    const std::string npy = slurpFile(dir / "maps" / "attention.npy");
    fs::copy_file(dir / "maps" / "attention.npy", dir / "maps" / "a.json");
    requireCliInputError(runCli({"metrics", "--attention-file", (dir / "maps" / "a.json").string(), "--tokens",
                                 (dir / "maps" / "tokens.json").string(), "--out", (dir / "maps" / "a.json").string()}),
                         (dir / "maps" / "a.json").string() + ": is also an input of this command");
    CHECK(slurpFile(dir / "maps" / "a.json") == npy);
}

TEST_CASE("cli corpus-merge S0 S1 --out S0 is refused and S0 still merges", "[cli][rules][corpus]") {
    const auto dir = freshDir("cli-rules-merge");
    writeText(dir / "c.txt", "a good film\na dull plot\nthe cast was great\n");
    std::vector<std::string> shards;
    for (int k = 0; k < 2; ++k) {
        shards.push_back((dir / ("s" + std::to_string(k))).string());
        REQUIRE(runCli({"corpus", "builtin:sentiment-dot", "--data", (dir / "c.txt").string(), "--out", shards[k],
                        "--shard", std::to_string(k) + "/2", "--analyses", "stats", "--no-plots"})
                        .code == 0);
    }
    const std::string before = slurpFile(fs::path(shards[0]) / "run.json");
    requireCliInputError(runCli({"corpus-merge", shards[0], shards[1], "--out", shards[0], "--no-plots"}),
                         shards[0] + ": is also an input of this command; write to another path");
    CHECK(slurpFile(fs::path(shards[0]) / "run.json") == before);
    const CliResult ok = runCli({"corpus-merge", shards[0], shards[1], "--out", (dir / "m").string(), "--no-plots"});
    INFO(ok.err);
    CHECK(ok.code == 0);

    // A record file linked to a device is refused by name (it was read until "out of memory").
    fs::remove(fs::path(shards[1]) / "stats.jsonl");
    fs::create_symlink("/dev/null", fs::path(shards[1]) / "stats.jsonl");
    requireCliInputError(runCli({"corpus-merge", shards[0], shards[1], "--out", (dir / "m2").string(), "--no-plots"}),
                         (fs::path(shards[1]) / "stats.jsonl").string() + ": not a regular file");
}

TEST_CASE("cli inputs: FIFOs and devices are refused, not waited on or read without end", "[cli][rules]") {
    const auto dir = freshDir("cli-rules-in");
    REQUIRE(makeFifo(dir / "pipe"));
    const FifoUnblocker unblock(dir / "pipe");  // without the rule the CLI would wait on it forever
    const std::string pipe = (dir / "pipe").string();
    requireCliInputError(runCli({"corpus", "builtin:sentiment-dot", "--data", pipe, "--out", (dir / "o").string()}),
                         pipe + ": not a regular file");
    requireCliInputError(
            runCli({"corpus", "builtin:sentiment-dot", "--data", "/dev/null", "--out", (dir / "o").string()}),
            "/dev/null: not a regular file");
    requireCliInputError(runCli({"tokenize", pipe, "--text", "x"}), pipe + ": not a regular file");
    requireCliInputError(runCli({"tokenize", (kSpm / "unigram.json").string(), "--text-file", pipe}),
                         pipe + ": not a regular file");
    REQUIRE(runCli({"attention", "builtin:sentiment-dot", "--text", "a good film", "--out", (dir / "maps").string()})
                    .code == 0);
    requireCliInputError(runCli({"metrics", "--attention-file", (dir / "maps" / "attention.npy").string(), "--tokens",
                                 pipe, "--out", (dir / "m.json").string()}),
                         pipe + ": not a regular file");
    // Round 3's readers: niah's haystack text, distil's data and task files.
    for (const std::string bad : {pipe, std::string("/dev/zero")}) {
        requireCliInputError(
                runCli({"niah", "builtin:reverse-dot", "--haystack", bad, "--needle-ids", "1", "--question-ids", "2",
                        "--lengths", "16", "--depths", "0", "--max-new-tokens", "2", "--out", (dir / "niah").string()}),
                bad + ": not a regular file");
        requireCliInputError(runCli({"distil", "--teacher", "builtin:sentiment-dot", "--per-head", "--data", bad,
                                     "--steps", "1", "--out", (dir / "distil").string()}),
                             bad + ": not a regular file");
    }
#ifdef ATTNSCOPE_CLI_HAS_EXPORT
    requireCliInputError(runCli({"export", "--workspace", pipe, "--out", (dir / "f.png").string()}),
                         pipe + ": not a regular file");
    requireCliInputError(runCli({"export", "--workspace", "/dev/null", "--out", (dir / "f.png").string()}),
                         "/dev/null: not a regular file");
#endif
}

TEST_CASE("cli tokenize: a 1,000,000-byte SentencePiece piece is refused, not a crash", "[cli][rules][sentencepiece]") {
    const std::string model = slurpFile(kSpm / "unigram.model");
    const auto dir = freshDir("cli-rules-spm");
    writeText(dir / "tokenizer.model", withPiece(model, 5, std::string(1000000, 'a')));
    requireCliInputError(runCli({"tokenize", dir.string(), "--text", "x"}),
                         (dir / "tokenizer.model").string() +
                                 ": not a usable SentencePiece model (piece 5 is 1000000 bytes long; at most 4096 are "
                                 "accepted)");
    // At the limit it loads and encodes.
    writeText(dir / "tokenizer.model", withPiece(model, 5, std::string(4096, 'a')));
    const CliResult ok = runCli({"tokenize", dir.string(), "--text", std::string(4096, 'a')});
    INFO(ok.err);
    REQUIRE(ok.code == 0);
    CHECK_FALSE(nlohmann::json::parse(ok.out)["ids"].empty());
}

TEST_CASE("cli messages: --flow-rows -1 names rows, corpus --out a file says so", "[cli][rules]") {
    const auto dir = freshDir("cli-rules-messages");
    requireCliInputError(runCli({"metrics", "builtin:sentiment-dot", "--text", "a good film", "--out",
                                 (dir / "m.json").string(), "--flow", "--flow-rows", "-1"}),
                         "--flow-rows: '-1' is not a row: it is negative");
    requireCliInputError(runCli({"metrics", "builtin:sentiment-dot", "--text", "a good film", "--out",
                                 (dir / "m.json").string(), "--flow", "--flow-rows", "99"}),
                         "row 99 is out of range");
    writeText(dir / "c.txt", "a good film\n");
    writeText(dir / "taken", "x");
    requireCliInputError(runCli({"corpus", "builtin:sentiment-dot", "--data", (dir / "c.txt").string(), "--out",
                                 (dir / "taken").string()}),
                         "--out " + (dir / "taken").string() + ": not a folder");
    CHECK(slurpFile(dir / "taken") == "x");
}

TEST_CASE("cli metrics --flow --progress reports the flow's progress", "[cli][rules]") {
    const auto dir = freshDir("cli-rules-flow");
    const CliResult r = runCli({"metrics", "builtin:sentiment-dot", "--text", "a good film", "--out",
                                (dir / "m.json").string(), "--flow", "--progress"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.err, Catch::Contains("flow (self): pair "));
    CHECK(nlohmann::json::parse(slurpFile(dir / "m.json"))["blocks"]["self"].contains("flow"));
}

#ifdef ATTNSCOPE_CLI_HAS_EXPORT
TEST_CASE("cli export: the project's own workspace seed exports; a generation on an encoder-decoder is named",
          "[cli][rules][workspace]") {
    const fs::path seeds = fs::path(ATTNSCOPE_TOKENIZER_DATA) / ".." / ".." / ".." / "fuzz" / "seeds" / "workspace";
    const auto dir = freshDir("cli-rules-views");
    const CliResult r =
            runCli({"export", "--workspace", (seeds / "views.attnscope").string(), "--out", (dir / "v.png").string()});
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(slurpFile(dir / "v.png").rfind("\x89PNG", 0) == 0);
    auto w = nlohmann::json::parse(slurpFile(seeds / "views.attnscope"));
    w["generation"]["prompt"] = {5, 6, 7};
    w["generation"]["generated"] = {1, 2, 3};
    writeText(dir / "gen.attnscope", w.dump());
    requireCliInputError(
            runCli({"export", "--workspace", (dir / "gen.attnscope").string(), "--out", (dir / "g.png").string()}),
            "workspace: generation: a generation needs a decoder-only language model; reverse-dot (");
}
#endif

TEST_CASE("cli write errors: a file over the size limit is exit 2 naming the path, the old file kept", "[cli][rules]") {
    const auto dir = freshDir("cli-rules-fsize");
    writeText(dir / "m.json", "old");
    // The real binary (the limit is inherited by the process std::system starts); the limit is
    // this process's too while it runs, and nothing here writes more than the CLI's one line.
    rlimit old{};
    REQUIRE(::getrlimit(RLIMIT_FSIZE, &old) == 0);
    rlimit small = old;
    small.rlim_cur = 1024;
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
    const CliResult r = runCliProcess(
            {"metrics", "builtin:sentiment-dot", "--text", "a good film", "--out", (dir / "m.json").string()});
    ::setrlimit(RLIMIT_FSIZE, &old);
    requireCliInputError(r, (dir / "m.json").string() + ": write failed (File too large)");
    CHECK(slurpFile(dir / "m.json") == "old");
}

}  // namespace test_cli_io_rules
