#include "commands.h"
#include "common.h"

#include "attnscope/analysis/training_monitors.h"
#include "attnscope/models/builtin.h"
#include "attnscope/runtime/error.h"

#include <algorithm>
#include <cstdio>
#include <iostream>

namespace attnscope::cli {

// --window/--two-sided (local), --keep (topk), --buckets/--rounds (lsh; rotations seeded by --seed),
// --positions absolute|relative [--relative-clip K]; each only where it means something.
void parseKindFlags(const Args& args, TrainOptions& o) {
    const AttentionKind k = o.attention;
    const auto only = [&](const char* option, bool allowed, const char* needs) {
        if ((args.value(option) || args.flag(option)) && !allowed)
            throw UsageError(std::string("--") + option + " needs " + needs);
    };
    only("window", k == AttentionKind::Local, "--attention local");
    only("two-sided", k == AttentionKind::Local, "--attention local");
    only("keep", k == AttentionKind::TopK, "--attention topk");
    only("buckets", k == AttentionKind::Lsh, "--attention lsh");
    only("rounds", k == AttentionKind::Lsh, "--attention lsh");
    o.sparse.window = static_cast<int>(args.integer("window", 1, 4096).value_or(4));
    o.sparse.twoSided = args.flag("two-sided");
    o.sparse.keep = static_cast<int>(args.integer("keep", 1, 4096).value_or(4));
    o.sparse.buckets = static_cast<int>(args.integer("buckets", 2, 4096).value_or(4));
    if (o.sparse.buckets % 2 != 0)
        throw Error("--buckets must be even (h(x) = argmax([xR; -xR])), got " + std::to_string(o.sparse.buckets));
    o.sparse.rounds = static_cast<int>(args.integer("rounds", 1, 64).value_or(1));
    o.sparse.seed = static_cast<std::uint64_t>(args.integer("seed", 0, kMaxSeed).value_or(1));
    const std::string positions = args.value("positions").value_or("absolute");
    if (positions != "absolute" && positions != "relative")
        throw Error("--positions '" + positions + "' is not one of absolute, relative");
    o.relativePositions = positions == "relative";
    only("relative-clip", o.relativePositions, "--positions relative");
    o.relativeClip = static_cast<int>(args.integer("relative-clip", 1, 4096).value_or(8));
    if (o.relativePositions && (k == AttentionKind::Additive || k == AttentionKind::Linear))
        throw Error(std::string("--positions relative adds a bias to dot-product logits; ") + kindName(k) +
                    " attention has no place for it");
}

namespace {

int runTrain(const std::vector<std::string>& argv) {
    Args args(argv,
              {"task", "attention", "out", "seed", "steps", "batch", "lr", "window", "keep", "buckets", "rounds",
               "positions", "relative-clip", "epoch-steps", "vocab"},
              {"two-sided"});
    args.expectPositionals(0);
    TrainOptions options;
    const std::string task = args.required("task");
    if (task == "reverse" || task == "sentiment") {
        options.task = parseTask(task);
        if (args.value("vocab")) throw UsageError("--vocab needs --task FILE");
    } else {
        std::error_code ec;
        if (!std::filesystem::is_regular_file(task, ec))
            throw Error("unknown task '" + task + "' (use reverse, sentiment or a readable JSONL task file)");
        options.taskFile = task;
        options.vocabulary = args.value("vocab").value_or("auto");
        if (options.vocabulary != "auto" && options.vocabulary != "char" && options.vocabulary != "word")
            throw Error("--vocab '" + options.vocabulary + "' is not one of auto, char, word");
    }
    options.attention = parseAttentionKind(args.required("attention"));
    const std::string out = args.required("out");
    const long long seed = args.integer("seed", 0, kMaxSeed).value_or(1);
    const long long steps = args.integer("steps", 0, 1000000).value_or(0);  // 0: the task's default
    const long long batch = args.integer("batch", 1, 4096).value_or(64);
    options.seed = static_cast<std::uint64_t>(seed);
    options.steps = static_cast<int>(steps);
    options.batch = static_cast<int>(batch);
    parseKindFlags(args, options);
    options.learningRate = args.number("lr").value_or(0);
    if (options.learningRate < 0 || options.learningRate > 1) throw Error("--lr must be between 0 and 1");
    options.out = prepareOutDir(out);
    options.progress = [](const TrainProgress& p) {
        char line[128];
        std::snprintf(line, sizeof line, "step %5d/%d  loss %.4f  %.1f s\n", p.step, p.steps, p.loss, p.seconds);
        std::cerr << line << std::flush;
        return true;
    };
    if (!options.taskFile.empty()) heldOutExamples(options, 1);  // a bad line is the one error line, before any output
    std::cerr << "training " << (options.taskFile.empty() ? std::string(taskName(options.task)) : task) << " with "
              << kindName(options.attention) << " attention, seed " << options.seed << "\n";
    options.epochSteps = static_cast<int>(args.integer("epoch-steps", 1, 1000000).value_or(0));
    const std::filesystem::path csv = options.out / "monitors.csv";
    std::vector<EpochMonitor> epochs;
    const TrainResult r = trainMonitored(options, csv, epochs, {}, [](const EpochMonitor& e) {
        double entropy = 0, distance = 0, similarity = 0;
        std::string flagged;
        for (const HeadMonitor& h : e.heads) {
            entropy += h.entropy, distance += h.distance, similarity += h.layerSimilarity;
            if (!h.flags.empty())
                flagged += " " + h.block + ":" + std::to_string(h.layer) + ":" + std::to_string(h.head) + "(" +
                           h.flags + ")";
        }
        const double n = static_cast<double>(std::max<std::size_t>(1, e.heads.size()));
        char line[256];
        std::snprintf(line, sizeof line,
                      "epoch %d (step %d): loss %.4f, probe accuracy %.1f%%, head entropy %.3f nats, distance %.2f, "
                      "head similarity %.3f",
                      e.epoch, e.step, e.loss, e.accuracy * 100, entropy / n, distance / n, similarity / n);
        std::cerr << line << (flagged.empty() ? "" : "; flagged:" + flagged) << "\n";
    });
    std::cerr << "trained " << r.steps << " steps in " << r.seconds << " s; loss " << r.initialLoss << " -> "
              << r.finalLoss << "; " << r.parameters << " parameters\n";
    if (r.heldOutExamples > 0)
        std::cerr << "held-out accuracy " << r.heldOutAccuracy * 100 << "% on " << r.heldOutExamples << " examples\n";
    std::cerr << "wrote " << options.out.string() << "/{config.json, model.safetensors, vocab.json}, " << csv.string()
              << " (" << epochs.size() << " epochs) and checkpoints/epoch-N\n";
    return 0;
}

}  // namespace

Command trainCommand() {
    return {"train", "train a built-in model (reverse, sentiment, or a task file)",
            "usage: attnscope-cli train --task reverse|sentiment|FILE [--vocab auto|char|word] --out DIR\n"
            "                           --attention dot|additive|linear|local|topk|lsh|hybrid\n"
            "                           [--window W [--two-sided]] [--keep K] [--buckets B] [--rounds R]\n"
            "                           [--positions absolute|relative [--relative-clip K]]\n"
            "                           [--seed S] [--steps N] [--batch B] [--lr RATE]\n\n"
            "Trains a small transformer on the task with the chosen attention (deterministic on the CPU:\n"
            "the same seed gives identical weights), scores it on held-out examples, and writes\n"
            "DIR/config.json, DIR/model.safetensors and DIR/vocab.json. Progress goes to stderr.\n"
            "  reverse    encoder-decoder; a string of 2-16 symbols from 0-9 a-z -> the string reversed\n"
            "  sentiment  encoder classifier; a short English sentence -> positive / negative\n"
            "Defaults: --seed 1, --steps 1500 (reverse) or 1000 (sentiment), --batch 64, --lr 0.003.\n"
            "Kinds: local keeps keys i-W+1..i (--window, 4; --two-sided: |i-j| < W); topk the --keep K (4) largest\n"
            "  logits; lsh Reformer's shared-QK hashing into --buckets B (4) with --rounds R (1), rotations seeded\n"
            "  by --seed; hybrid g·additive + (1-g)·dot with g = σ(W_g q) learned per head. local and lsh apply\n"
            "  to self-attention (the reverse model's cross-attention stays dot).\n"
            "--task FILE trains on your own data: JSONL, one {\"text\": ..., \"label\": ...} (classification) or\n"
            "  {\"source\": ..., \"target\": ...} (sequence to sequence) per line; a bad line is refused naming it.\n"
            "  The vocabulary is built from the file (--vocab: auto = words for classification, characters for\n"
            "  seq2seq), 1 example in 10 (by a hash of its input; at least the last) is held out and scored, and\n"
            "  the model folder opens like the built-ins.\n"
            "Monitors: every --epoch-steps N steps (default steps/10) the checkpoint is saved to\n"
            "  DIR/checkpoints/epoch-E and measured on 32 fixed held-out probes: loss, accuracy, each head's mean\n"
            "  entropy, attention distance and cosine similarity to the other heads of its layer, written to\n"
            "  DIR/monitors.csv; heads with entropy near 0 or near log n (collapsed) or similarity > 0.95\n"
            "  (duplicated) are flagged.\n"
            "--positions relative: no position embeddings; each self-attention layer learns a bias per head\n"
            "  over the relative distance clipped to [-K, K] (--relative-clip, 8) (Shaw et al.); dot-family kinds.\n",
            runTrain};
}

}  // namespace attnscope::cli
