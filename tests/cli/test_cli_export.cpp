// attnscope-cli export end to end: the real binary writes PDF, SVG and PNG figures; the files
// are checked byte-wise here without Qt (PDF page box and embedded font, SVG size, PNG header
// and pHYs chunk), and invalid requests give exit code 2 and one line, leaving --out untouched.
#include "gpt2_fixture.h"

#include "cli_run.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <fstream>
#include <regex>
#include <sstream>
#include <sys/wait.h>

namespace test_cli_export {

using namespace attnscope::testing;
namespace fs = std::filesystem;

namespace {

CliResult exportCli(std::vector<std::string> args) {
    args.insert(args.begin(), "export");
    return runCli(args);
}

fs::path fixtureModel() {
    static const fs::path dir = [] {
        const auto d = freshDir("cli-export-model");
        writeGpt2Folder(d, makeGpt2(Gpt2Spec{}, 42));
        return d;
    }();
    return dir;
}

}  // namespace

#ifdef ATTNSCOPE_CLI_HAS_EXPORT

TEST_CASE("cli export writes a PDF with its page size and an embedded font", "[cli][export]") {
    const auto out = freshDir("cli-export") / "fig.pdf";
    const CliResult r = exportCli({fixtureModel().string(), "--ids", "1,2,3,4,5", "--layer", "1", "--head", "2",
                                   "--out", out.string(), "--device", "cpu"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.err, Catch::Contains("wrote " + out.string()));
    const std::string pdf = slurpFile(out);
    CHECK(pdf.compare(0, 5, "%PDF-") == 0);
    std::smatch box;
    REQUIRE(std::regex_search(pdf, box, std::regex("/MediaBox \\[0 0 ([0-9.]+) ([0-9.]+)\\]")));
    CHECK(std::stod(box[1]) == 234);  // 3.25 in
    CHECK(std::stod(box[2]) > 100);
    CHECK(pdf.find("/FontFile2") != std::string::npos);
}

TEST_CASE("cli export writes an SVG and a PNG that carries its dpi", "[cli][export]") {
    const auto dir = freshDir("cli-export");
    CliResult r =
            exportCli({fixtureModel().string(), "--ids", "3,1,4,1,5,9", "--layer", "0", "--head", "3", "--width-in",
                       "6.75", "--colormap", "cividis", "--temperature", "0.5", "--out", (dir / "fig.svg").string()});
    INFO(r.err);
    REQUIRE(r.code == 0);
    const std::string svg = slurpFile(dir / "fig.svg");
    CHECK(svg.find("<svg width=\"171.45mm\"") != std::string::npos);
    CHECK(svg.find("T = 0.5") != std::string::npos);  // the title names the temperature
    CHECK(svg.find(">t9<") != std::string::npos);     // token labels are text

    r = exportCli({fixtureModel().string(), "--ids", "3,1,4", "--layer", "0", "--head", "0", "--width-in", "2", "--dpi",
                   "150", "--scale", "log", "--out", (dir / "fig.png").string()});
    INFO(r.err);
    REQUIRE(r.code == 0);
    const PngInfo png = pngInfo(slurpFile(dir / "fig.png"));
    CHECK(png.width == 300);  // 2 in x 150 dpi
    CHECK(png.height > 100);
    CHECK(png.unit == 1);
    CHECK(png.ppmX == 5906);  // 150 / 0.0254, rounded
    CHECK(png.ppmY == 5906);
}

TEST_CASE("cli export refuses bad requests with one line and leaves --out alone", "[cli][export]") {
    const auto dir = freshDir("cli-export-bad");
    const auto out = dir / "fig.pdf";
    { std::ofstream(out) << "keep"; }
    const auto refused = [&](std::vector<std::string> extra, const std::string& mentions, int code = 2) {
        std::vector<std::string> args = {fixtureModel().string(), "--ids", "1,2,3"};
        args.insert(args.end(), extra.begin(), extra.end());
        const CliResult r = exportCli(args);
        INFO(r.err);
        CHECK(r.code == code);
        if (code == 2) {
            CHECK(r.err.rfind("error: ", 0) == 0);
            CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        }
        CHECK_THAT(r.err, Catch::Contains(mentions));
        CHECK(slurpFile(out) == "keep");
    };
    refused({"--layer", "5", "--head", "0", "--out", out.string()}, "layer 5 is out of range");
    refused({"--layer", "0", "--head", "9", "--out", out.string()}, "head 9 is out of range");
    refused({"--layer", "0", "--head", "0", "--block", "cross", "--out", out.string()}, "no 'cross' attention block");
    refused({"--layer", "0", "--head", "0", "--colormap", "jet", "--out", out.string()}, "jet");
    refused({"--layer", "0", "--head", "0", "--width-in", "0", "--out", out.string()}, "--width-in");
    refused({"--layer", "0", "--head", "0", "--temperature", "-1", "--out", out.string()}, "--temperature");
    refused({"--layer", "0", "--head", "0", "--out", (dir / "fig.jpg").string()}, "unknown figure format");
    refused({"--layer", "0", "--out", out.string()}, "--layer L --head H", 1);
}

#else

TEST_CASE("cli export says it is unavailable without the UI", "[cli][export]") {
    const CliResult r =
            exportCli({fixtureModel().string(), "--ids", "1,2", "--layer", "0", "--head", "0", "--out", "x.pdf"});
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains("export is unavailable"));
}

#endif

}  // namespace test_cli_export
