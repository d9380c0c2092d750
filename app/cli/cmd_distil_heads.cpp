// distil --per-head: Hedgehog feature maps fitted to a pretrained model's heads (lab/hedgehog.h).
#include "commands.h"
#include "common.h"

#include "attnscope/io/input_file.h"
#include "attnscope/lab/hedgehog.h"
#include "attnscope/lab/interventions.h"
#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"

#ifdef ATTNSCOPE_CLI_EXPORT
#include "figure/kindsfigures.h"
#include "headless_qt.h"
#endif

#include <cstdio>
#include <fstream>
#include <sstream>
#include <iostream>

namespace attnscope::cli {

namespace {

// "a-b" (inclusive) or "0,2,5".
std::vector<int> parseLayerRange(const std::string& text) {
    const auto dash = text.find('-');
    if (dash == std::string::npos || dash == 0) return parseLayerList(text);
    const std::vector<int> ends = parseLayerList(text.substr(0, dash) + "," + text.substr(dash + 1));
    if (ends.size() != 2 || ends[0] > ends[1])
        throw Error("--layers '" + text + "' is not a range a-b with a <= b, nor a list such as 0,2");
    std::vector<int> out;
    for (int l = ends[0]; l <= ends[1]; ++l) out.push_back(l);
    return out;
}

// One input per non-empty line: the model's tokenizer's ids, or for a model without one a line of
// ids; each cut to maxTokens (and to the model's positions).
std::vector<std::vector<std::int64_t>> readInputs(const std::string& file, const Model& model, int maxTokens) {
    // The input rule: a FIFO or a device is refused, not waited on or read without end.
    std::istringstream in(readInputFile(file, kMaxTextFileBytes, "data file"));
    std::vector<std::vector<std::int64_t>> inputs;
    std::string line;
    int number = 0;
    const int positions = model.info().maxPositions;
    const std::size_t limit = static_cast<std::size_t>(positions > 0 ? std::min(maxTokens, positions) : maxTokens);
    while (std::getline(in, line)) {
        ++number;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.find_first_not_of(" \t") == std::string::npos) continue;
        std::vector<std::int64_t> ids;
        try {
            ids = model.hasTokenizer() ? model.encodeText(line) : parseIds(line);
        } catch (const Error& e) {
            throw Error(file + ":" + std::to_string(number) + ": " + e.what() +
                        (model.hasTokenizer() ? "" : " (this model has no tokenizer: give each line as token ids)"));
        }
        if (ids.size() > limit) ids.resize(limit);
        if (ids.size() < 2) throw Error(file + ":" + std::to_string(number) + ": fewer than 2 tokens");
        inputs.push_back(std::move(ids));
    }
    if (inputs.empty()) throw Error("--data " + file + ": no text in it (one text per line)");
    return inputs;
}

double mean(const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? 0 : s / static_cast<double>(v.size());
}

// Every file or none (StagedOutputs); kl.png with the Qt build.
void writeOutputs(const std::filesystem::path& dir, const std::string& teacher, const HedgehogResult& r,
                  const HedgehogOptions& o) {
    StagedOutputs out(dir);
    std::filesystem::path staging;
    for (const std::string& name : hedgehogReportFiles()) staging = out.path(name).parent_path();
    writeHedgehogReport(staging, r, o, teacher);
#ifdef ATTNSCOPE_CLI_EXPORT
    {
        const HeadlessQt qt;
        writeCurveFigure(hedgehogKlFigure(r), QString::fromStdString(out.path("kl.png").string()));
    }
#else
    std::cerr << "kl.png skipped: this attnscope-cli was built without the Qt UI (ATTNSCOPE_BUILD_UI=OFF)\n";
#endif
    out.commit();
}

}  // namespace

int runDistilHeads(const std::vector<std::string>& argv) {
    Args args(argv,
              {"teacher", "data", "layers", "block", "steps", "lr", "batch", "seed", "max-tokens", "out", "device",
               "weights", "revision"},
              {"per-head", "progress"});
    args.expectPositionals(0);
    const std::string teacher = args.required("teacher");
    const std::string data = args.required("data");
    const std::string outDir = args.required("out");
    HedgehogOptions o;
    o.steps = static_cast<int>(args.integer("steps", 1, 1000000).value_or(200));
    o.batch = static_cast<int>(args.integer("batch", 1, 100000).value_or(8));
    o.seed = static_cast<std::uint64_t>(args.integer("seed", 0, kMaxSeed).value_or(0));
    o.learningRate = args.number("lr").value_or(0.01);
    if (!(o.learningRate > 0) || o.learningRate > 10) throw Error("--lr must be > 0 and at most 10");
    const int maxTokens = static_cast<int>(args.integer("max-tokens", 2, 100000).value_or(128));
    if (const auto layers = args.value("layers")) o.layers = parseLayerRange(*layers);
    o.block = args.value("block").value_or("");
    if (args.flag("progress")) o.progress = stderrProgress("distil", "step");
    const auto model = loadModelAt(args, teacher);
    const auto inputs = readInputs(data, *model, maxTokens);
    const std::filesystem::path dir = prepareOutDir(outDir);
    const HedgehogResult r = distilHeads(*model, inputs, o);
    writeOutputs(dir, teacher, r, o);
    char line[320];
    std::snprintf(line, sizeof line,
                  "mean per-head KL on %d %s texts: elu+1 %.4f, untrained %.4f, distilled %.4f nats; output change "
                  "(%s) with the distilled heads: KL %.4f, top-1 agreement %.1f%% (untrained: %.4f, %.1f%%); "
                  "training %.1f s\n",
                  r.evalInputs, r.heldOut ? "held-out" : "training", mean(r.klElu), mean(r.klInitial), mean(r.klFitted),
                  r.changeFitted.kind.c_str(), r.changeFitted.meanKl, r.changeFitted.top1Agreement * 100,
                  r.changeInitial.meanKl, r.changeInitial.top1Agreement * 100, r.trainSeconds);
    std::cerr << line << "wrote " << dir.string() << "\n";
    return 0;
}

}  // namespace attnscope::cli
