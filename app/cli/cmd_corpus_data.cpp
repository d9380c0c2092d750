// attnscope-cli builtin-data: held-out corpora of the built-in tasks (JSONL for `corpus`), and
// corpus-plot: several corpus results' pruning curves in one figure.
#include "cmd_corpus_plots.h"
#include "commands.h"
#include "common.h"

#include "attnscope/corpus/corpus_result.h"
#include "attnscope/io/atomic_file.h"
#include "attnscope/models/builtin.h"
#include "attnscope/runtime/error.h"

#include <nlohmann/json.hpp>

#include <iostream>
#include <set>
#include <sstream>

namespace attnscope::cli {

namespace {

int runBuiltinData(const std::vector<std::string>& argv) {
    Args args(argv, {"examples", "seed", "out"}, {});
    args.expectPositionals(1);
    const BuiltinTask task = parseTask(args.positional(0, "TASK (reverse or sentiment)"));
    const int n = static_cast<int>(args.integer("examples", 1, 1000000).value_or(500));
    const auto seed = static_cast<std::uint64_t>(args.integer("seed", 0, kMaxSeed).value_or(1));
    const std::string out = args.required("out");
    // Distinct held-out examples: the split never seen in training (isHeldOut), no repeats.
    TaskData data(seed, Split::HeldOut);
    std::set<std::string> seen;
    std::ostringstream s;
    for (long long tries = 0; static_cast<int>(seen.size()) < n; ++tries) {
        if (tries > 1000LL * n)
            throw Error("builtin-data: the task has fewer than " + std::to_string(n) + " distinct held-out examples");
        nlohmann::json line;
        if (task == BuiltinTask::Sentiment) {
            const SentimentExample e = data.sentiment();
            line = {{"text", e.text}, {"label", e.positive ? "positive" : "negative"}};
        } else {
            const std::string src = data.reverseSource();
            line = {{"text", src}, {"target", std::string(src.rbegin(), src.rend())}};
        }
        if (!seen.insert(line["text"].get<std::string>()).second) continue;
        s << line.dump() << "\n";
    }
    writeFileAtomically(out, s.str());
    std::cerr << "wrote " << out << " (" << n << " held-out " << taskName(task) << " examples)\n";
    return 0;
}

int runCorpusPlot(const std::vector<std::string>& argv) {
    Args args(argv, {"out", "names"}, {});
    if (args.positionals().empty()) throw UsageError("corpus-plot needs result folders");
    std::vector<CorpusResult> results;
    for (const auto& d : args.positionals()) results.push_back(readCorpusResult(d));
    std::vector<std::string> names;
    if (auto v = args.value("names")) {
        std::istringstream in(*v);
        for (std::string n; std::getline(in, n, ',');) names.push_back(n);
        if (names.size() != results.size())
            throw Error("--names gives " + std::to_string(names.size()) + " names for " +
                        std::to_string(results.size()) + " folders");
    }
    writePruningComparison(results, names, args.required("out"));
    std::cerr << "wrote " << args.required("out") << "\n";
    return 0;
}

}  // namespace

Command builtinDataCommand() {
    return {"builtin-data", "held-out examples of a built-in task as a JSONL corpus",
            "usage: attnscope-cli builtin-data reverse|sentiment --out FILE.jsonl [--examples N] [--seed S]\n\n"
            "N distinct examples (default 500) from the task's held-out split, which the built-in models never\n"
            "saw in training: sentiment lines carry \"label\", reverse lines \"target\" (the reversed text).\n",
            runBuiltinData};
}

Command corpusPlotCommand() {
    return {"corpus-plot", "pruning curves of several corpus results in one figure",
            "usage: attnscope-cli corpus-plot DIR... --out FIG.pdf|.svg|.png [--names A,B,...]\n\n"
            "One curve per result folder (task metric against heads pruned), named by --names.\n",
            runCorpusPlot};
}

}  // namespace attnscope::cli
