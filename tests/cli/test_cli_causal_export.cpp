// attnscope-cli export --workspace W --figure lens|dla|patch: the Causal tab's figures from a
// workspace's Causal settings, end to end with the real binary. The files are parsed here without
// Qt (a PDF's pages and page box, an SVG's root element and text, a PNG's chunks to its IEND) and
// their titles name what core computes for the same settings; refusals are one line and exit 2.
#include "attnscope/analysis/logit_lens.h"
#include "attnscope/models/model.h"
#include "family_fixtures.h"
#include "fixtures_alibi.h"

#include "cli_run.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <regex>

namespace test_cli_causal_export {

using namespace attnscope;
using namespace attnscope::testing;
namespace fs = std::filesystem;

namespace {

fs::path causalLlama() {
    static const fs::path dir = [] {
        const auto d = freshDir("cli-causal-export-llama");
        writeCheckpoint(d, makeLlama(LlamaSpec{}, 5));
        return d;
    }();
    return dir;
}

// A workspace on `model` whose main input is kClean and whose Causal section is `causal`.
void writeWorkspace(const fs::path& file, const std::string& model, const std::string& causal) {
    std::ofstream(file) << R"({"format": "attnscope-workspace", "version": 2, "model": ")" << model
                        << R"(", "input": {"text": "3 17 0 39 22", "ids": true}, "view": {"tab": "causal"}, "causal": )"
                        << causal << "}";
}

CliResult exportCausal(const fs::path& ws, const std::string& figure, const fs::path& out,
                       std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"export", "--workspace", ws.string(), "--figure", figure, "--out", out.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return runCli(args);
}

}  // namespace

#ifdef ATTNSCOPE_CLI_HAS_EXPORT

TEST_CASE("cli export draws a workspace's Causal figures as PDF, SVG and PNG files that parse",
          "[cli][export][causal]") {
    const auto dir = freshDir("cli-causal-export");
    const fs::path ws = dir / "causal.attnscope";
    // The clean box empty (the main input), P the last, T and T2 not chosen: the tab's defaults.
    writeWorkspace(ws, causalLlama().string(),
                   R"({"clean": "", "corrupt": "3 17 5 39 22", "ids": true, "what": "resid", "attribution": false})");
    // What the tab computes for it: T and T2 are the top two predictions at the last position.
    const auto model = Model::load(causalLlama(), LoadOptions{DeviceChoice::Cpu, {}});
    RunOptions run;
    run.recordResiduals = true;
    LensOptions lo;
    lo.topK = 2;
    const LogitLens lens = logitLens(*model->forward({3, 17, 0, 39, 22}, run), lo);
    const std::size_t last = std::size_t(((lens.rows - 1) * 5 + 4) * 2);
    const std::string T = "#" + std::to_string(lens.topIds[last]), T2 = "#" + std::to_string(lens.topIds[last + 1]);

    // The lens grid as a PDF: one page, two columns wide (6.75 in = 486 pt), fonts embedded.
    CliResult r = exportCausal(ws, "lens", dir / "lens.pdf");
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.err, Catch::Contains("wrote " + (dir / "lens.pdf").string()));
    const std::string pdf = slurpFile(dir / "lens.pdf");
    CHECK(pdf.rfind("%PDF-", 0) == 0);
    CHECK(pdf.find("%%EOF", pdf.size() > 16 ? pdf.size() - 16 : 0) != std::string::npos);
    CHECK(pdfPages(pdf) == 1);
    std::smatch box;
    REQUIRE(std::regex_search(pdf, box, std::regex("/MediaBox \\[0 0 ([0-9.]+) ([0-9.]+)\\]")));
    CHECK(std::stod(box[1]) == 486);
    CHECK(pdf.find("/FontFile2") != std::string::npos);

    // DLA as an SVG: its root element closes the file and the title names T and T2 and P.
    r = exportCausal(ws, "dla", dir / "dla.svg", {"--width-in", "3.25"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    const std::string svg = slurpFile(dir / "dla.svg");
    CHECK(svg.find("<svg width=\"82.55mm\"") != std::string::npos);  // 3.25 in
    CHECK(svg.find("</svg>") != std::string::npos);
    CHECK(svg.find("DLA of logit(" + T + ") \xe2\x88\x92 logit(" + T2 + ") at P = 4") != std::string::npos);
    CHECK(svg.find("logit difference") != std::string::npos);  // the completeness note

    // Patching the residual stream as a PNG at 100 dpi: 675 pixels wide, its chunks end in IEND.
    r = exportCausal(ws, "patch", dir / "patch.png", {"--dpi", "100"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    const PngInfo png = pngInfo(slurpFile(dir / "patch.png"));
    CHECK(png.width == 675);
    CHECK(png.height > 100);
    CHECK(png.ended);
    // The same figure as an SVG says what it patched, how, and where.
    r = exportCausal(ws, "patch", dir / "patch.svg", {"--title", "Figure 3"});
    REQUIRE(r.code == 0);
    const std::string patchSvg = slurpFile(dir / "patch.svg");
    CHECK(patchSvg.find("Figure 3") != std::string::npos);
    CHECK(patchSvg.find("LD clean") != std::string::npos);

    // A chosen T at another P, attribution patching of the attention outputs.
    writeWorkspace(dir / "chosen.attnscope", causalLlama().string(),
                   R"({"clean": "3 17 0 39 22", "corrupt": "3 17 5 39 22", "ids": true, "answer": 7, "wrong": 9,
                       "position": 3, "what": "attn_out", "attribution": true})");
    r = exportCausal(dir / "chosen.attnscope", "patch", dir / "chosen.svg");
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(slurpFile(dir / "chosen.svg").find("Patching attention out (attribution) at P = 3") != std::string::npos);
    r = exportCausal(dir / "chosen.attnscope", "dla", dir / "chosen-dla.svg");
    REQUIRE(r.code == 0);
    CHECK(slurpFile(dir / "chosen-dla.svg").find("DLA of logit(#7) \xe2\x88\x92 logit(#9) at P = 3") !=
          std::string::npos);
    fs::remove_all(dir);
}

TEST_CASE("cli export refuses Causal figures it cannot draw with one line", "[cli][export][causal]") {
    const auto dir = freshDir("cli-causal-export-bad");
    const std::string llama = causalLlama().string();
    const auto refused = [&](const std::string& causal, const std::string& figure, const std::string& mentions,
                             const std::string& model) {
        writeWorkspace(dir / "bad.attnscope", model, causal);
        const CliResult r = exportCausal(dir / "bad.attnscope", figure, dir / "bad.svg");
        INFO(r.err);
        requireOneLineError(r, mentions);
        CHECK(r.code == 2);
        CHECK_FALSE(fs::exists(dir / "bad.svg"));
    };
    refused(R"({"ids": true})", "patch", "causal.corrupt is empty", llama);
    refused(R"({"corrupt": "3 17 5", "ids": true})", "patch", "same length (5 and 3 tokens)", llama);
    refused(R"({"corrupt": "3 17 0 39 22", "ids": true})", "patch", "same logit difference", llama);
    refused(R"({"position": 9})", "lens", "position 9 is outside the clean input (0..4)", llama);
    refused(R"({"answer": 48})", "dla", "--token 48 is outside the vocabulary", llama);
    refused(R"({})", "map", "use lens, dla or patch", llama);
    refused(R"({})", "lens", "built-in models are not language models", "builtin:reverse-dot");
    OptSpec post;  // post-norm: the lens draws, DLA is refused with core's reason
    post.preNorm = false;
    const auto opt = freshDir("cli-causal-export-opt");
    writeCheckpoint(opt, makeOpt(post, 3));
    refused(R"({})", "dla", "post-norm", opt.string());
    writeWorkspace(dir / "opt.attnscope", opt.string(), "{}");
    CHECK(exportCausal(dir / "opt.attnscope", "lens", dir / "opt.svg").code == 0);

    writeWorkspace(dir / "w.attnscope", llama, "{}");
    const CliResult usage = exportCausal(dir / "w.attnscope", "lens", dir / "x.svg", {"--all-heads"});
    CHECK(usage.code == 1);
    CHECK_THAT(usage.err, Catch::Contains("leave out the batch options"));
    fs::remove_all(dir);
}

#endif

}  // namespace test_cli_causal_export
