#include "commands.h"
#include "common.h"

#include "attnscope/models/builtin.h"
#include "attnscope/runtime/error.h"

#include <cstdio>
#include <iostream>

namespace attnscope::cli {

namespace {

int runTrain(const std::vector<std::string>& argv) {
    Args args(argv, {"task", "attention", "out", "seed", "steps", "batch", "lr"}, {});
    args.expectPositionals(0);
    TrainOptions options;
    options.task = parseTask(args.required("task"));
    options.attention = parseAttentionKind(args.required("attention"));
    const std::string out = args.required("out");
    const long long seed = args.integer("seed", 0, kMaxSeed).value_or(1);
    const long long steps = args.integer("steps", 0, 1000000).value_or(0);  // 0: the task's default
    const long long batch = args.integer("batch", 1, 4096).value_or(64);
    options.seed = static_cast<std::uint64_t>(seed);
    options.steps = static_cast<int>(steps);
    options.batch = static_cast<int>(batch);
    options.learningRate = args.number("lr").value_or(0);
    if (options.learningRate < 0 || options.learningRate > 1) throw Error("--lr must be between 0 and 1");
    options.out = prepareOutDir(out);
    options.progress = [](const TrainProgress& p) {
        char line[128];
        std::snprintf(line, sizeof line, "step %5d/%d  loss %.4f  %.1f s\n", p.step, p.steps, p.loss, p.seconds);
        std::cerr << line << std::flush;
        return true;
    };
    std::cerr << "training " << taskName(options.task) << " with " << kindName(options.attention) << " attention, seed "
              << options.seed << "\n";
    const TrainResult r = trainBuiltin(options);
    std::cerr << "trained " << r.steps << " steps in " << r.seconds << " s; loss " << r.initialLoss << " -> "
              << r.finalLoss << "; " << r.parameters << " parameters\n";
    if (r.heldOutExamples > 0)
        std::cerr << "held-out accuracy " << r.heldOutAccuracy * 100 << "% on " << r.heldOutExamples << " examples\n";
    std::cerr << "wrote " << options.out.string() << "/{config.json, model.safetensors, vocab.json}\n";
    return 0;
}

}  // namespace

Command trainCommand() {
    return {"train", "train a built-in model (reverse or sentiment task)",
            "usage: attnscope-cli train --task reverse|sentiment --attention dot|additive|linear --out DIR\n"
            "                           [--seed S] [--steps N] [--batch B] [--lr RATE]\n\n"
            "Trains a small transformer on the task with the chosen attention (deterministic on the CPU:\n"
            "the same seed gives identical weights), scores it on held-out examples, and writes\n"
            "DIR/config.json, DIR/model.safetensors and DIR/vocab.json. Progress goes to stderr.\n"
            "  reverse    encoder-decoder; a string of 2-16 symbols from 0-9 a-z -> the string reversed\n"
            "  sentiment  encoder classifier; a short English sentence -> positive / negative\n"
            "Defaults: --seed 1, --steps 1500 (reverse) or 1000 (sentiment), --batch 64, --lr 0.003.\n",
            runTrain};
}

}  // namespace attnscope::cli
