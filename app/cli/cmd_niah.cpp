// attnscope-cli niah: the needle-in-a-haystack scan and retrieval heads (analysis/needle.h), with
// its two figures drawn through ui/figure (the Qt build; otherwise the plots are skipped).
#include "commands.h"
#include "common.h"
#include "model_input.h"

#include "attnscope/analysis/needle.h"
#include "attnscope/io/atomic_file.h"
#include "attnscope/io/input_file.h"
#include "attnscope/io/npy.h"
#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <sstream>

#ifdef ATTNSCOPE_CLI_EXPORT
#include "figure/longfigures.h"
#include "headless_qt.h"
#endif

namespace attnscope::cli {

namespace {

// --NAME TEXT or --NAME-ids IDS (exactly one, unless optional).
std::vector<std::int64_t> piece(const Args& args, const Model& model, const std::string& name, bool required) {
    const auto text = args.value(name), ids = args.value(name + "-ids");
    if (text && ids) throw UsageError("give either --" + name + " or --" + name + "-ids, not both");
    if (ids) return parseIntegers(*ids, "--" + name + "-ids", "id");
    if (text) return needlePieceIds(model, *text, "--" + name);
    if (required) throw UsageError("missing --" + name + " TEXT or --" + name + "-ids IDS");
    return {};
}

std::vector<std::int64_t> haystackIds(const Args& args, const Model& model) {
    const auto file = args.value("haystack"), ids = args.value("haystack-ids");
    if (file && ids) throw UsageError("give either --haystack or --haystack-ids, not both");
    if (ids) return parseIntegers(*ids, "--haystack-ids", "id");
    if (!file) throw UsageError("missing --haystack FILE or --haystack-ids IDS");
    // The input rule: a FIFO or a device is refused, not waited on or read without end.
    return needlePieceIds(model, readInputFile(*file, kMaxTextFileBytes, "haystack file"), "--haystack");
}

std::vector<double> parseDepths(const std::string& text) {
    std::vector<double> out;
    std::stringstream all(text);
    std::string one;
    while (std::getline(all, one, ',')) {
        std::size_t used = 0;
        double v = 0;
        try {
            v = std::stod(one, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used == 0 || used != one.size()) throw Error("--depths: '" + one + "' is not a number");
        out.push_back(v);
    }
    return out;
}

std::string csvOf(const NeedleResult& r) {
    std::ostringstream csv;
    csv << "length,depth,success,generated\n";
    for (const NeedleRun& run : r.runs) {
        csv << run.length << "," << run.depth << "," << (run.success ? 1 : 0) << ",";
        for (std::size_t i = 0; i < run.generated.size(); ++i) csv << (i ? " " : "") << run.generated[i];
        csv << "\n";
    }
    return csv.str();
}

#ifdef ATTNSCOPE_CLI_EXPORT
// niah.pdf: success per depth (rows) and length (columns); retrieval.pdf: layer × head scores / max
// (figure/longfigures.h: the GUI's Long context tab exports the same figures).
void writePlots(const NeedleResult& r, const NeedleOptions& o, StagedOutputs& staged) {
    const HeadlessQt qt;
    writeFigure(needleSuccessFigure(r, o.lengths, o.depths), QString::fromStdString(staged.path("niah.pdf").string()));
    writeFigure(retrievalFigure(r), QString::fromStdString(staged.path("retrieval.pdf").string()));
}
#endif

int runNiah(const std::vector<std::string>& argv) {
    Args args(argv,
              {"haystack", "haystack-ids", "needle", "needle-ids", "question", "question-ids", "answer", "answer-ids",
               "lengths", "depths", "max-new-tokens", "out", "device", "weights", "capture-dtype", "revision"},
              {"progress"});
    args.expectPositionals(1);
    const std::string outArg = args.required("out");
    NeedleOptions o;
    std::vector<std::int64_t> lengths = parseIntegers(args.required("lengths"), "--lengths", "length");
    for (std::int64_t L : lengths) {
        if (L < 1 || L > kMaxInt) throw Error("--lengths: " + std::to_string(L) + " is not a length >= 1");
        o.lengths.push_back(static_cast<int>(L));
    }
    o.depths = parseDepths(args.required("depths"));
    if (!args.value("max-new-tokens")) throw UsageError("missing --max-new-tokens N");
    o.newTokens = static_cast<int>(*args.integer("max-new-tokens", 1, kMaxNewTokens));
    auto model = loadModel(args);
    o.haystack = haystackIds(args, *model);
    o.needle = piece(args, *model, "needle", true);
    o.question = piece(args, *model, "question", true);
    o.answer = piece(args, *model, "answer", false);
    o.endToken = endTokenOf(*model);
    applyRunFlags(args, o.run);
    checkNeedleOptions(o);
    if (args.flag("progress")) o.progress = stderrProgress("niah", "runs");
    const NeedleResult r = needleScan(*model, o);

    const std::filesystem::path out = prepareOutDir(outArg);
    StagedOutputs staged(out);
    std::vector<float> retrieval(r.retrieval.begin(), r.retrieval.end());
    writeNpy(staged.path("retrieval.npy"), {r.layers, r.heads}, retrieval);
    writeFileAtomically(staged.path("niah.csv"), csvOf(r));
    std::vector<std::string> written = {"retrieval.npy", "niah.csv"};
#ifdef ATTNSCOPE_CLI_EXPORT
    writePlots(r, o, staged);
    written.insert(written.end(), {"niah.pdf", "retrieval.pdf"});
#else
    std::cerr << "plots skipped: this attnscope-cli was built without the Qt UI (ATTNSCOPE_BUILD_UI=OFF)\n";
#endif
    staged.commit();
    int successes = 0;
    for (const NeedleRun& run : r.runs) successes += run.success ? 1 : 0;
    const auto best = std::max_element(r.retrieval.begin(), r.retrieval.end()) - r.retrieval.begin();
    std::cout << successes << " of " << r.runs.size() << " runs retrieved the needle; strongest retrieval head L"
              << best / r.heads << " H" << best % r.heads << " (" << r.retrieval[std::size_t(best)] << ")\n";
    for (const std::string& name : written) std::cerr << "wrote " << (out / name).string() << "\n";
    return 0;
}

}  // namespace

Command niahCommand() {
    return {"niah", "needle-in-a-haystack scan and retrieval heads",
            "usage: attnscope-cli niah MODEL (--haystack FILE | --haystack-ids IDS) (--needle TEXT | --needle-ids IDS)\n"
            "                          (--question TEXT | --question-ids IDS) [--answer TEXT | --answer-ids IDS]\n"
            "                          --lengths N1,N2,... --depths D1,D2,... --max-new-tokens N --out DIR\n"
            "                          [--device cpu|cuda|auto] [--weights auto|convert|stream]\n"
            "                          [--capture-dtype compute|float16|bfloat16] [--progress]\n\n"
            "For each context length L and depth d: the first L - |needle| haystack ids with the needle inserted\n"
            "after floor(d * (L - |needle|)) of them, then the question; N tokens generated greedily with the\n"
            "key/value cache (stopping early only at the config's eos_token_id). A run succeeds when the\n"
            "answer's ids (the needle's without --answer) appear contiguously in the generated ids. At each step\n"
            "a head whose most attended key lies in the needle and holds the generated token scores\n"
            "1/|needle| (Wu et al. 2024's retrieval score). Texts are tokenized without special tokens.\n"
            "Writes DIR/retrieval.npy float32 [layers, heads] (the mean over runs), DIR/niah.csv (length, depth,\n"
            "success, generated ids), DIR/niah.pdf (success by depth and length) and DIR/retrieval.pdf\n"
            "(layer x head).\n",
            runNiah};
}

}  // namespace attnscope::cli
