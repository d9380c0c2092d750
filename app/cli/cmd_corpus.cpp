// attnscope-cli corpus / corpus-merge: corpus analyses into a run folder (core/corpus), with a
// progress line on stderr and the PDF plots of cmd_corpus_plots.cpp.
#include "cmd_corpus_plots.h"
#include "commands.h"
#include "common.h"

#include "attnscope/corpus/corpus_run.h"
#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"
#include "attnscope/runtime/progress.h"

#include <nlohmann/json.hpp>

#include <algorithm>

#include <chrono>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

#include <unistd.h>

namespace attnscope::cli {

namespace {

std::vector<std::string> splitList(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string s; std::getline(in, s, ',');)
        if (!s.empty()) out.push_back(s);
    return out;
}

int parseCount(const std::string& text, const std::string& option) {
    std::size_t used = 0;
    long long v = -1;
    try {
        v = std::stoll(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (text.empty() || used != text.size() || v < 0 || v > kMaxInt)
        throw Error(option + ": '" + text + "' is not a whole number >= 0");
    return static_cast<int>(v);
}

// "phase: 120/1000 examples, 14.2 examples/s, 1 min 02 s left": rewritten in place on a
// terminal, one line every 5 s in a log.
std::function<bool(const std::string&, long long, long long)> progressLine() {
    struct State {
        std::string phase;
        ProgressClock clock;
        std::chrono::steady_clock::time_point start, last;
        long long first = -1;
    };
    auto s = std::make_shared<State>();
    const bool tty = isatty(2);
    return [s, tty](const std::string& phase, long long done, long long total) {
        const auto now = std::chrono::steady_clock::now();
        if (phase != s->phase) *s = State{phase, {}, now, {}, done};
        const double left = s->clock.secondsLeft(done, total);
        const bool end = done >= total;
        if (!end && now - s->last < std::chrono::milliseconds(tty ? 200 : 5000) && done != s->first) return true;
        s->last = now;
        const double secs = std::chrono::duration<double>(now - s->start).count();
        const char* unit = phase == "greedy" ? "steps" : "examples";
        std::ostringstream line;
        line << phase << ": " << done << "/" << total << " " << unit;
        if (done > s->first && secs > 0)
            line << ", " << std::setprecision(3) << (done - s->first) / secs << " " << unit
                 << "/s";  // significant digits: big models run well under 0.01/s
        if (left >= 0 && !end) line << ", " << ProgressClock::format(left) << " left";
        std::cerr << (tty ? "\r" : "") << line.str() << (tty && !end ? "   " : "\n") << std::flush;
        return true;
    };
}

std::vector<HeadRef> orderFrom(const std::filesystem::path& dir) {
    const CorpusResult r = readCorpusResult(dir);
    if (r.pruneOrder.empty()) throw Error("--order " + dir.string() + ": heads.json has no importance (prune_order)");
    return r.pruneOrder;
}

void report(const CorpusResult& r, const std::filesystem::path& out, bool plots) {
    std::cerr << "corpus: " << r.examples << " examples, " << r.metricName << " " << r.baseMetric;
    if (!r.badLines.empty()) std::cerr << ", " << r.badLines.size() << " bad lines skipped";
    std::cerr << "\n";
    if (std::any_of(r.heads.begin(), r.heads.end(), [](const HeadSummary& h) { return h.hasStats; }))
        std::cerr << "attention sinks: " << r.sinkHeads << " of " << r.heads.size() << " heads (sink rate "
                  << r.sinkRate << ", mean sink score > " << r.sinkThreshold << ")\n";
    for (const BadLine& b : r.badLines) std::cerr << "  skipped line " << b.line << ": " << b.reason << "\n";
    if (plots) writeCorpusPlots(r, out);
    std::cerr << "wrote " << (out / "heads.json").string() << ", heads.csv"
              << (r.pruning.empty() ? "" : ", pruning.csv") << "\n";
}

int runCorpusCommand(const std::vector<std::string>& argv) {
    Args args(argv,
              {"data", "out", "device", "weights", "format", "max-tokens", "subset", "analyses", "order", "shard",
               "max-new-tokens", "separators", "revision"},
              {"skip-bad-lines", "no-plots"});
    args.expectPositionals(1);
    const std::filesystem::path data = args.required("data"), out = args.required("out");
    CorpusOptions o;
    if (auto f = args.value("format")) {
        if (*f == "text")
            o.read.format = CorpusFormat::Text;
        else if (*f == "jsonl")
            o.read.format = CorpusFormat::Jsonl;
        else
            throw Error("--format '" + *f + "' is not one of text, jsonl");
    }
    o.read.badLines = args.flag("skip-bad-lines") ? BadLinePolicy::Skip : BadLinePolicy::Refuse;
    o.maxTokens = static_cast<int>(args.integer("max-tokens", 1, kMaxInt).value_or(0));
    o.maxNewTokens = static_cast<int>(args.integer("max-new-tokens", 1, 4096).value_or(32));
    if (auto s = args.value("subset")) {
        const auto colon = s->find(':');
        if (colon == std::string::npos)
            o.subsetEnd = parseCount(*s, "--subset");
        else {
            o.subsetBegin = parseCount(s->substr(0, colon), "--subset");
            o.subsetEnd = parseCount(s->substr(colon + 1), "--subset");
        }
        if (o.subsetEnd <= o.subsetBegin) throw Error("--subset '" + *s + "' selects no examples (use N or FIRST:END)");
    }
    if (auto a = args.value("analyses")) {
        o.stats = o.importance = o.pruning = false;
        for (const std::string& name : splitList(*a)) {
            if (name == "stats")
                o.stats = true;
            else if (name == "importance")
                o.importance = true;
            else if (name == "pruning")
                o.pruning = true;
            else
                throw Error("--analyses: '" + name + "' is not one of stats, importance, pruning");
        }
        if (!o.stats && !o.importance && !o.pruning) throw Error("--analyses names none of stats, importance, pruning");
    }
    if (auto order = args.value("order")) {
        if (*order == "greedy")
            o.order = PruneOrder::Greedy;
        else if (*order != "importance") {
            std::filesystem::path p = *order;
            if (p.filename() == "heads.json") p = p.parent_path();
            o.fixedOrder = orderFrom(p);
        }
    }
    if (auto s = args.value("shard")) {
        const auto slash = s->find('/');
        if (slash == std::string::npos) throw Error("--shard '" + *s + "' is not K/N (e.g. 0/4)");
        o.shard = parseCount(s->substr(0, slash), "--shard");
        o.shards = parseCount(s->substr(slash + 1), "--shard");
        if (o.shards < 1 || o.shard >= o.shards) throw Error("--shard '" + *s + "': K must be in 0..N-1 and N >= 1");
    }
    if (auto sep = args.value("separators")) o.separatorLabels = splitList(*sep);
    o.progress = progressLine();
    auto model = loadModel(args);
    const CorpusRunSummary s = runCorpus(*model, data, out, o);
    if (s.resumed > 0)
        std::cerr << "resumed: " << s.resumed << " records from the earlier run, " << s.computed << " computed now\n";
    report(s.result, out, !args.flag("no-plots"));
    return 0;
}

int runCorpusMerge(const std::vector<std::string>& argv) {
    Args args(argv, {"out"}, {"no-plots"});
    if (args.positionals().empty()) throw UsageError("corpus-merge needs the shard folders");
    std::vector<std::filesystem::path> dirs(args.positionals().begin(), args.positionals().end());
    const std::filesystem::path out = args.required("out");
    const CorpusResult r = mergeCorpus(dirs, out);
    report(r, out, !args.flag("no-plots"));
    return 0;
}

}  // namespace

Command corpusCommand() {
    return {"corpus", "head statistics, importance and pruning curves over a corpus",
            "usage: attnscope-cli corpus MODEL --data FILE --out DIR\n"
            "           [--format text|jsonl] [--skip-bad-lines] [--max-tokens N] [--subset N|FIRST:END]\n"
            "           [--analyses stats,importance,pruning] [--order importance|greedy|DIR/heads.json]\n"
            "           [--shard K/N] [--max-new-tokens N] [--separators LABEL,LABEL] [--device cpu|cuda|auto]\n"
            "           [--weights auto|convert|stream] [--no-plots]\n\n"
            "FILE: one example per line, plain text, or JSONL (.jsonl) objects with \"text\" (or \"ids\") and\n"
            "optional \"label\" (classifiers: a class name or index), \"target\" (encoder-decoders).\n"
            "Per head: mean and spread of entropy, attention distance, attention to the first token and to\n"
            "separators, the pattern scores and class shares, and the previous-token, duplicate-token,\n"
            "induction and first-token (sink) detectors on each example (stats); the output change when the head alone is masked and the\n"
            "p(true label) drop for labelled classifiers (importance); the task metric after masking the k\n"
            "least important heads, k = 0 ... all (pruning; --order greedy recomputes the order each step).\n"
            "DIR gets heads.json, heads.csv, pruning.csv, importance.pdf, pruning.pdf and the per-example\n"
            "records; running again on the same DIR resumes. --shard K/N takes examples i with i % N == K;\n"
            "merge the shard folders with corpus-merge (docs/corpus.md). Bad lines are refused (exit 2) or,\n"
            "with --skip-bad-lines, skipped and listed with their line numbers.\n",
            runCorpusCommand};
}

Command corpusMergeCommand() {
    return {"corpus-merge", "combine corpus shard folders into one result",
            "usage: attnscope-cli corpus-merge DIR... --out DIR [--no-plots]\n\n"
            "Combines the folders of shards 0..N-1 of one corpus run (same model, file and settings) into\n"
            "exactly the result of one unsharded run.\n",
            runCorpusMerge};
}

}  // namespace attnscope::cli
