// attnscope-cli attention --alignment: the Pharaoh file parsed back and checked against the argmax
// of the cross.npy the same run wrote, the built-in reverse model's known alignment, and errors.
#include "gpt2_fixture.h"
#include "npy_read.h"

#include "cli_run.h"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <set>
#include <sstream>

namespace test_cli_alignment {

using namespace attnscope;
using namespace attnscope::testing;

namespace {

using Links = std::set<std::pair<int, int>>;

// "i-j i-j\n" -> pairs; fails the test on anything else.
Links parsePharaoh(const std::string& text) {
    REQUIRE(!text.empty());
    REQUIRE(text.back() == '\n');
    REQUIRE(std::count(text.begin(), text.end(), '\n') == 1);
    Links links;
    std::istringstream in(text);
    std::string pair;
    while (in >> pair) {
        const auto dash = pair.find('-');
        REQUIRE(dash != std::string::npos);
        REQUIRE(pair.find_first_not_of("0123456789-") == std::string::npos);
        links.insert({std::stoi(pair.substr(0, dash)), std::stoi(pair.substr(dash + 1))});
    }
    return links;
}

}  // namespace

TEST_CASE("cli attention --alignment writes the cross maps' argmax as Pharaoh i-j", "[cli][alignment]") {
    const auto dir = freshDir("cli-alignment");
    const std::string text = "q7k2m9a0";
    const int n = static_cast<int>(text.size());

    SECTION("default heads: the argmax of the mean of the last layer's heads in cross.npy") {
        const auto file = dir / "default.align";
        const CliResult r = runCli({"attention", "builtin:reverse-dot", "--text", text, "--out",
                                    (dir / "maps").string(), "--alignment", file.string()});
        INFO(r.err);
        REQUIRE(r.code == 0);
        CHECK_THAT(r.err, Catch::Contains("every head of the last layer"));
        const NpyArray cross = readNpy(dir / "maps" / "cross.npy");  // [L, H, T, S]
        const auto L = cross.shape[0], H = cross.shape[1], T = cross.shape[2], S = cross.shape[3];
        const auto tokens = nlohmann::json::parse(slurpFile(dir / "maps" / "tokens.json"));
        REQUIRE(tokens["target"][0] == "<s>");
        Links expected;
        for (std::int64_t t = 0; t + 1 < T; ++t) {  // row t predicts target token t; the last row predicts </s>
            std::int64_t best = 0;
            std::vector<double> mean(S, 0.0);
            for (std::int64_t h = 0; h < H; ++h)
                for (std::int64_t s = 0; s < S; ++s) mean[s] += cross.values[(((L - 1) * H + h) * T + t) * S + s];
            for (std::int64_t s = 1; s < S; ++s)
                if (mean[s] > mean[best]) best = s;
            expected.insert({static_cast<int>(best), static_cast<int>(t)});
        }
        CHECK(parsePharaoh(slurpFile(file)) == expected);
    }
    SECTION("one trained head: target i with source n-1-i; words = symbols; input rows differ") {
        const auto file = dir / "head.align";
        const CliResult r =
                runCli({"attention", "builtin:reverse-dot", "--text", text, "--out", (dir / "maps2").string(),
                        "--alignment", file.string(), "--alignment-heads", "0:1", "--alignment-units", "words"});
        INFO(r.err);
        REQUIRE(r.code == 0);
        Links expected;
        for (int i = 0; i < n; ++i) expected.insert({n - 1 - i, i});
        CHECK(parsePharaoh(slurpFile(file)) == expected);
        REQUIRE(runCli({"attention", "builtin:reverse-dot", "--text", text, "--out", (dir / "maps2").string(),
                        "--alignment", file.string(), "--alignment-heads", "0:1", "--alignment-rows", "input"})
                        .code == 0);
        CHECK(parsePharaoh(slurpFile(file)) != expected);
    }
    SECTION("errors exit 2 with one line and write nothing") {
        const auto file = dir / "bad.align";
        requireCliInputError(runCli({"attention", "builtin:sentiment-dot", "--text", "a good film", "--out",
                                     (dir / "s").string(), "--alignment", file.string()}),
                             "no cross-attention");
        requireCliInputError(runCli({"attention", "builtin:reverse-dot", "--text", "abc", "--out", (dir / "b").string(),
                                     "--alignment", file.string(), "--alignment-heads", "2:0"}),
                             "head 2:0");
        requireCliInputError(runCli({"attention", "builtin:reverse-dot", "--text", "abc", "--out", (dir / "b").string(),
                                     "--alignment", file.string(), "--alignment-heads", "layer:9"}),
                             "layer:9");
        requireCliInputError(runCli({"attention", "builtin:reverse-dot", "--text", "abc", "--out", (dir / "b").string(),
                                     "--alignment", file.string(), "--alignment-heads", "1:x"}),
                             "'x' is not a layer or head index");
        requireCliInputError(runCli({"attention", "builtin:reverse-dot", "--text", "abc", "--out", (dir / "b").string(),
                                     "--alignment", file.string(), "--alignment-units", "letters"}),
                             "--alignment-units 'letters'");
        CHECK_FALSE(std::filesystem::exists(file));
        CHECK_FALSE(std::filesystem::exists(dir / "b" / "cross.npy"));
        requireCliExit(runCli({"attention", "builtin:reverse-dot", "--text", "abc", "--out", (dir / "b").string(),
                               "--alignment-units", "words"}),
                       1, "--alignment-units needs --alignment FILE");
    }
}

#ifdef ATTNSCOPE_CLI_HAS_EXPORT
TEST_CASE("cli export --figure alignment draws the cross map with source on top and target down the side",
          "[cli][alignment][export]") {
    const auto dir = freshDir("cli-alignment-figure");
    const auto svg = dir / "align.svg";
    const CliResult r = runCli(
            {"export", "builtin:reverse-dot", "--text", "q7k2m9", "--figure", "alignment", "--out", svg.string()});
    INFO(r.err);
    REQUIRE(r.code == 0);
    const std::string text = slurpFile(svg);
    REQUIRE(text.find("<svg") != std::string::npos);
    CHECK(text.find("</svg>") != std::string::npos);
    for (const char* label : {">source<", ">target<", ">q<", ">9<", "every head of the last layer"}) {
        INFO(label);
        CHECK(text.find(label) != std::string::npos);
    }
    const auto one = dir / "one.png";
    REQUIRE(runCli({"export", "builtin:reverse-dot", "--text", "q7k2m9", "--figure", "alignment", "--layer", "0",
                    "--head", "1", "--out", one.string()})
                    .code == 0);
    CHECK(slurpFile(one).rfind("\x89PNG", 0) == 0);
    requireCliInputError(runCli({"export", "builtin:sentiment-dot", "--text", "a good film", "--figure", "alignment",
                                 "--out", (dir / "s.svg").string()}),
                         "no cross-attention");
    requireCliInputError(runCli({"export", "builtin:reverse-dot", "--text", "abc", "--figure", "alignment", "--layer",
                                 "5", "--head", "0", "--out", (dir / "bad.svg").string()}),
                         "head 5:0");
    requireCliExit(runCli({"export", "builtin:reverse-dot", "--text", "abc", "--figure", "alignment", "--layer", "1",
                           "--out", (dir / "bad.svg").string()}),
                   1, "give both --layer L --head H, or neither");
    CHECK_FALSE(std::filesystem::exists(dir / "bad.svg"));
}
#endif

}  // namespace test_cli_alignment
