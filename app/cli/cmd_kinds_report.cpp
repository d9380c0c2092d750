#include "commands.h"
#include "common.h"

#include "attnscope/lab/kinds_report.h"
#include "attnscope/runtime/error.h"

#include <iostream>
#include <sstream>

namespace attnscope::cli {

namespace {

std::vector<std::string> splitList(const std::string& text) {
    std::vector<std::string> out;
    std::stringstream s(text);
    std::string item;
    while (std::getline(s, item, ','))
        if (!item.empty()) out.push_back(item);
    return out;
}

int runKindsReport(const std::vector<std::string>& argv) {
    Args args(argv, {"task", "kinds", "epochs", "epoch-steps", "seeds", "eval", "max-n", "out", "batch"}, {});
    args.expectPositionals(0);
    KindsReportOptions o;
    const std::string task = args.required("task");
    if (task == "reverse" || task == "sentiment") {
        o.base.task = parseTask(task);
    } else {
        std::error_code ec;
        if (!std::filesystem::is_regular_file(task, ec))
            throw Error("unknown task '" + task + "' (use reverse, sentiment or a readable JSONL task file)");
        o.base.taskFile = task;
        heldOutExamples(o.base, 1);  // a bad line is refused before any work
    }
    if (auto kinds = args.value("kinds")) o.kinds = splitList(*kinds);
    for (const auto& k : o.kinds) parseAttentionKind(k);
    o.epochs = static_cast<int>(args.integer("epochs", 1, 10000).value_or(5));
    o.epochSteps = static_cast<int>(args.integer("epoch-steps", 1, 100000).value_or(100));
    o.base.batch = static_cast<int>(args.integer("batch", 1, 4096).value_or(64));
    const int seeds = static_cast<int>(args.integer("seeds", 1, 100).value_or(3));
    o.seeds.clear();
    for (int s = 1; s <= seeds; ++s) o.seeds.push_back(static_cast<std::uint64_t>(s));
    o.evalExamples = static_cast<int>(args.integer("eval", 1, 100000).value_or(300));
    const int maxN = static_cast<int>(args.integer("max-n", 128, 1 << 20).value_or(16384));
    o.scalingLengths.clear();
    for (int n = 128; n <= maxN; n *= 2) o.scalingLengths.push_back(n);
    o.out = prepareOutDir(args.required("out"));
    o.log = [](const std::string& line) { std::cerr << line << "\n" << std::flush; };
    runKindsReport(o);
    std::cerr << "wrote " << (o.out / "kinds.csv").string() << " and " << (o.out / "scaling.csv").string() << "\n";
    return 0;
}

}  // namespace

Command kindsReportCommand() {
    return {"kinds-report", "train every attention kind on one task and measure them side by side",
            "usage: attnscope-cli kinds-report --task reverse|sentiment|FILE --out DIR\n"
            "                                  [--kinds dot,additive,linear,local,topk,lsh,hybrid] [--epochs N]\n"
            "                                  [--epoch-steps S] [--seeds K] [--eval E] [--max-n N] [--batch B]\n\n"
            "Trains each kind with the same budget (--epochs N of --epoch-steps S steps; defaults 5 and 100) and\n"
            "seeds (1..K, default 3), scores each model on E (300) held-out examples, and writes\n"
            "  DIR/kinds.csv    kind, parameters, parameter_count, accuracy_mean, accuracy_spread (max - min over\n"
            "                   seeds), length_buckets and accuracy_short/medium/long (three input-length ranges),\n"
            "                   seconds_per_epoch, peak_rss_mib, mean_entropy (heads, last epoch)\n"
            "  DIR/scaling.csv  kind, n, seconds, peak_extra_mib, note: one head's attention forward (d = 32)\n"
            "                   for n = 128, 256, ... up to --max-n (default 16384), measured in this run; a\n"
            "                   length whose n x n maps would not fit the available memory is skipped (-1) and\n"
            "                   the note says why\n"
            "  DIR/runs/KIND-SEED/  each trained model, its monitors.csv and checkpoints\n"
            "Kinds use: local window 4 two-sided, topk k 4, lsh 4 buckets 2 rounds, additive width 16.\n",
            runKindsReport};
}

}  // namespace attnscope::cli
