// attnscope-cli export's batch figures and workspaces, end to end with the real binary: grids of
// chosen heads or a layer's heads, every layer as PDF pages (page count read from the file), a
// workspace file's figure, and one-line refusals (exit 2) or usage errors (exit 1).
#include "gpt2_fixture.h"

#include "cli_run.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <regex>

namespace test_cli_batch {

using namespace attnscope::testing;
namespace fs = std::filesystem;

namespace {

CliResult exportCli(std::vector<std::string> args) {
    args.insert(args.begin(), "export");
    return runCli(args);
}

fs::path batchModel() {  // 2 layers x 4 heads
    static const fs::path dir = [] {
        const auto d = freshDir("cli-batch-model");
        writeGpt2Folder(d, makeGpt2(Gpt2Spec{}, 7));
        return d;
    }();
    return dir;
}

void putText(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

}  // namespace

#ifdef ATTNSCOPE_CLI_HAS_EXPORT

TEST_CASE("cli export draws chosen heads, a layer's heads and every layer", "[cli][export][batch]") {
    const auto dir = freshDir("cli-batch");
    const std::string model = batchModel().string();
    CliResult r =
            exportCli({model, "--ids", "1,2,3,4,5", "--heads", "1:0,0:3,1:2", "--out", (dir / "heads.svg").string()});
    INFO(r.err);
    REQUIRE(r.code == 0);
    const std::string svg = slurpFile(dir / "heads.svg");
    CHECK(svg.find("<svg") != std::string::npos);
    for (const char* title : {"L1 H0", "L0 H3", "L1 H2", "3 heads"}) CHECK(svg.find(title) != std::string::npos);
    // Two columns' width by default: 6.75 in = 486 pt (the SVG is in tenths of a point).
    CHECK(svg.find("width=\"171.45mm\"") != std::string::npos);

    r = exportCli({model, "--ids", "1,2,3", "--layer", "1", "--all-heads", "--width-in", "3.25", "--out",
                   (dir / "layer.pdf").string()});
    REQUIRE(r.code == 0);
    CHECK(pdfPages(slurpFile(dir / "layer.pdf")) == 1);

    r = exportCli(
            {model, "--ids", "1,2,3", "--all-layers", "--temperature", "0.5", "--out", (dir / "all.pdf").string()});
    REQUIRE(r.code == 0);
    CHECK_THAT(r.err, Catch::Contains("2 pages"));
    const std::string pdf = slurpFile(dir / "all.pdf");
    CHECK(pdf.rfind("%PDF-", 0) == 0);
    CHECK(pdfPages(pdf) == 2);
    fs::remove_all(dir);
}

TEST_CASE("cli export refuses bad batch requests", "[cli][export][batch]") {
    const auto dir = freshDir("cli-batch-bad");
    const auto out = dir / "fig.pdf";
    putText(out, "keep");
    const auto refused = [&](std::vector<std::string> extra, const std::string& mentions, int code = 2) {
        std::vector<std::string> args = {batchModel().string(), "--ids", "1,2,3"};
        args.insert(args.end(), extra.begin(), extra.end());
        const CliResult r = exportCli(args);
        INFO(r.err);
        CHECK(r.code == code);
        if (code == 2) CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        CHECK_THAT(r.err, Catch::Contains(mentions));
        CHECK(slurpFile(out) == "keep");
    };
    refused({"--heads", "2:0", "--out", out.string()}, "layer 2 head 0 is outside the self block (2 layers x 4 heads)");
    refused({"--heads", "0:x", "--out", out.string()}, "0:x");
    refused({"--heads", "cross:0:1", "--out", out.string()}, "draws the self block");
    refused({"--all-layers", "--out", (dir / "all.png").string()}, "--out must be a .pdf");
    refused({"--all-heads", "--out", out.string()}, "--all-heads needs --layer L", 1);
    refused({"--heads", "0:1", "--all-layers", "--out", out.string()}, "give one of", 1);
    refused({"--heads", "0:1", "--head", "1", "--out", out.string()}, "leave out --head", 1);
    fs::remove_all(dir);
}

TEST_CASE("cli export draws a workspace file's figure", "[cli][export][workspace]") {
    const auto dir = freshDir("cli-workspace");
    const std::string model = batchModel().string();
    // Written by hand, as a script would: a relative model path, masked head, dot variant, zoom.
    fs::create_directories(dir / "models");
    fs::create_symlink(batchModel(), dir / "models" / "tiny");
    const std::string ws = R"({"format": "attnscope-workspace", "version": 1, "model": "models/tiny",
        "input": {"text": "1 2 3 4 5", "ids": true},
        "selection": {"block": "self", "layer": 1, "head": 2}, "temperature": 2.0,
        "masked_heads": [{"block": "self", "layer": 0, "head": 1}],
        "lab": {"variant": "dot"}, "colors": {"colormap": "gray", "scale": "log"},
        "view": {"zoom": {"keys": [0.5, 3.5], "queries": [-0.5, 4.5]}}, "figure": {"width_in": 4.0}})";
    putText(dir / "w.attnscope", ws);
    CliResult r = exportCli({"--workspace", (dir / "w.attnscope").string(), "--out", (dir / "w.svg").string()});
    INFO(r.err);
    REQUIRE(r.code == 0);
    const std::string svg = slurpFile(dir / "w.svg");
    CHECK(svg.find("tiny \xc2\xb7 layer 1 \xc2\xb7 head 2 \xc2\xb7 T = 2 \xc2\xb7 dot \xc2\xb7 1 masked") !=
          std::string::npos);
    CHECK(svg.find("width=\"101.6mm\"") != std::string::npos);  // the workspace's 4 in
    // The workspace's layer as a grid, and every layer.
    r = exportCli({"--workspace", (dir / "w.attnscope").string(), "--all-heads", "--out", (dir / "g.pdf").string()});
    REQUIRE(r.code == 0);
    CHECK(pdfPages(slurpFile(dir / "g.pdf")) == 1);
    r = exportCli({"--workspace", (dir / "w.attnscope").string(), "--all-layers", "--out", (dir / "a.pdf").string()});
    REQUIRE(r.code == 0);
    CHECK(pdfPages(slurpFile(dir / "a.pdf")) == 2);

    const auto refused = [&](const std::string& text, const std::string& mentions) {
        putText(dir / "bad.attnscope", text);
        const CliResult bad =
                exportCli({"--workspace", (dir / "bad.attnscope").string(), "--out", (dir / "bad.svg").string()});
        INFO(bad.err);
        CHECK(bad.code == 2);
        CHECK(bad.err.rfind("error: ", 0) == 0);
        CHECK(std::count(bad.err.begin(), bad.err.end(), '\n') == 1);
        CHECK_THAT(bad.err, Catch::Contains(mentions));
        CHECK_FALSE(fs::exists(dir / "bad.svg"));
    };
    refused("{\"format\": \"attnscope-workspace\"", "bad.attnscope: not a workspace file");
    refused(R"({"format": "attnscope-workspace", "version": 1, "model": "models/tiny", "lab": {"variant": "dots"}})",
            "bad.attnscope: lab.variant: unknown 'dots'");
    refused(R"({"format": "attnscope-workspace", "version": 1, "model": "models/tiny", "input": {"text": "1 2", "ids": true},
               "selection": {"layer": 5}})",
            "selection layer 5 head 0 is outside the self block");
    refused(R"({"format": "attnscope-workspace", "version": 1, "model": "models/tiny", "input": {"text": "1 2", "ids": true},
               "lab": {"variant": "additive"}})",
            "no additive fit");
    const CliResult usage =
            exportCli({"--workspace", (dir / "w.attnscope").string(), "--ids", "1", "--out", (dir / "x.svg").string()});
    CHECK(usage.code == 1);
    CHECK_THAT(usage.err, Catch::Contains("leave out --ids"));
    fs::remove_all(dir);
}

TEST_CASE("cli export draws a workspace's map source and refuses it for weight grids", "[cli][export][workspace]") {
    const auto dir = freshDir("cli-workspace-source");
    putText(dir / "v.attnscope",
            R"({"format": "attnscope-workspace", "version": 2, "model": ")" + batchModel().string() + R"(",
        "input": {"text": "1 2 3 4 5", "ids": true}, "selection": {"layer": 1, "head": 2},
        "map_source": {"source": "value-norm"}})");
    CliResult r = exportCli({"--workspace", (dir / "v.attnscope").string(), "--out", (dir / "v.svg").string()});
    INFO(r.err);
    REQUIRE(r.code == 0);
    const std::string svg = slurpFile(dir / "v.svg");
    CHECK(svg.find("layer 1 \xc2\xb7 head 2 \xc2\xb7 Value-weighted") != std::string::npos);
    r = exportCli({"--workspace", (dir / "v.attnscope").string(), "--all-heads", "--out", (dir / "g.pdf").string()});
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains("the workspace shows the value-norm map source"));
    CHECK_FALSE(fs::exists(dir / "g.pdf"));
    fs::remove_all(dir);
}

#endif

}  // namespace test_cli_batch
