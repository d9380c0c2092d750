#include "commands.h"
#include "common.h"

#include "attnscope/lab/distillation.h"
#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"

#include <algorithm>
#include <cstdio>
#include <iostream>

namespace attnscope::cli {

namespace {

void parseTaskOption(const Args& args, TrainOptions& o) {
    const std::string task = args.required("task");
    if (task == "reverse" || task == "sentiment") {
        o.task = parseTask(task);
        if (args.value("vocab")) throw UsageError("--vocab needs --task FILE");
        return;
    }
    std::error_code ec;
    if (!std::filesystem::is_regular_file(task, ec))
        throw Error("unknown task '" + task + "' (use reverse, sentiment or a readable JSONL task file)");
    o.taskFile = task;
    o.vocabulary = args.value("vocab").value_or("auto");
    if (o.vocabulary != "auto" && o.vocabulary != "char" && o.vocabulary != "word")
        throw Error("--vocab '" + o.vocabulary + "' is not one of auto, char, word");
    heldOutExamples(o, 1);  // a bad line is the one error line, before any output
}

int runDistil(const std::vector<std::string>& argv) {
    if (std::find(argv.begin(), argv.end(), "--per-head") != argv.end()) return runDistilHeads(argv);
    Args args(argv,
              {"teacher", "student-kind", "task", "lambda", "epochs", "epoch-steps", "out", "seed", "batch", "lr",
               "student-layers", "student-heads", "window", "keep", "buckets", "rounds", "positions", "relative-clip",
               "vocab"},
              {"two-sided"});
    args.expectPositionals(0);
    TrainOptions o;
    parseTaskOption(args, o);
    o.distillation.teacher = resolveModelPath(args.required("teacher"));
    std::error_code ec;
    if (!std::filesystem::is_directory(o.distillation.teacher, ec))
        throw Error("--teacher " + o.distillation.teacher.string() + " is not a model folder");
    o.attention = parseAttentionKind(args.required("student-kind"));
    o.distillation.lambda = args.number("lambda").value_or(1.0);
    if (!(o.distillation.lambda >= 0) || o.distillation.lambda > 1e6) throw Error("--lambda must be between 0 and 1e6");
    const int epochs = static_cast<int>(args.integer("epochs", 1, 10000).value_or(5));
    o.epochSteps = static_cast<int>(args.integer("epoch-steps", 1, 100000).value_or(100));
    o.steps = epochs * o.epochSteps;
    o.seed = static_cast<std::uint64_t>(args.integer("seed", 0, kMaxSeed).value_or(1));
    o.batch = static_cast<int>(args.integer("batch", 1, 4096).value_or(64));
    o.learningRate = args.number("lr").value_or(0);
    if (o.learningRate < 0 || o.learningRate > 1) throw Error("--lr must be between 0 and 1");
    o.layers = static_cast<int>(args.integer("student-layers", 1, 12).value_or(0));
    o.heads = static_cast<int>(args.integer("student-heads", 1, 32).value_or(0));
    if (o.heads > 0 && 32 % o.heads != 0)
        throw Error("--student-heads must divide the model width 32 (1, 2, 4, 8, 16 or 32), got " +
                    std::to_string(o.heads));
    parseKindFlags(args, o);
    checkTeacher(o);  // a mismatched teacher is the one error line, before any output
    o.out = prepareOutDir(args.required("out"));
    std::cerr << "distilling " << o.distillation.teacher.string() << " into a " << kindName(o.attention)
              << " student, lambda " << o.distillation.lambda << ", " << epochs << " epochs of " << o.epochSteps
              << " steps (and the same with lambda 0)\n";
    const DistilReport r = distilBuiltin(o, [](const std::string& run, const EpochMonitor& e) {
        char line[160];
        std::snprintf(line, sizeof line, "%-9s epoch %d (step %d): loss %.4f, probe accuracy %.1f%%, KL %.4f nats\n",
                      run.c_str(), e.epoch, e.step, e.loss, e.accuracy * 100, e.kl);
        std::cerr << line << std::flush;
    });
    char line[256];
    std::snprintf(line, sizeof line,
                  "held-out accuracy %.1f%% distilled, %.1f%% without (lambda 0), %d examples; held-out KL %.4f "
                  "against %.4f nats\n",
                  r.distilled.result.heldOutAccuracy * 100, r.baseline.result.heldOutAccuracy * 100,
                  r.distilled.result.heldOutExamples, r.distilled.result.finalKl, r.baseline.result.finalKl);
    std::cerr << line << "wrote " << o.out.string() << " (the student), monitors.csv, distillation.csv and "
              << (o.out / "baseline").string() << "\n";
    return 0;
}

}  // namespace

Command distilCommand() {
    return {"distil", "train a built-in student on a teacher's attention maps (attention distillation)",
            "usage: attnscope-cli distil --teacher MODEL --student-kind KIND --task reverse|sentiment|FILE --out DIR\n"
            "                            [--lambda L] [--epochs N] [--epoch-steps S] [--seed S] [--batch B] [--lr R]\n"
            "                            [--student-layers L] [--student-heads H] [--vocab auto|char|word]\n"
            "                            [kind flags as train: --window W [--two-sided], --keep K, --buckets B,\n"
            "                             --rounds R, --positions absolute|relative [--relative-clip K]]\n\n"
            "Trains a built-in student (KIND: dot, additive, linear, local, topk, lsh, hybrid) with the task\n"
            "loss + L · KL(teacher map || student map) (L: --lambda, 1), the KL averaged over the student's\n"
            "attention modules, heads and real query rows, each student module paired with a teacher module of\n"
            "the same block, and then trains the same student with L = 0 (same seed, data and budget) for\n"
            "comparison. MODEL: a built-in (builtin:NAME) or trained model folder of the same task and\n"
            "vocabulary. When the counts differ, student layer l of Ls takes teacher layer max(0,\n"
            "floor((l+1)·Lt/Ls) - 1) and student head h of Hs the mean map of teacher heads floor(h·Ht/Hs) ..\n"
            "max(that + 1, floor((h+1)·Ht/Hs)) - 1 (docs/kinds.md). Gradients flow through the student's maps.\n"
            "Budget: --epochs N (5) of --epoch-steps S (100) steps.\n"
            "Writes DIR (the student: opens like the built-ins), DIR/monitors.csv (as train), DIR/baseline (the\n"
            "L = 0 student and its monitors.csv) and DIR/distillation.csv: per epoch the loss, the probe\n"
            "accuracy and the held-out KL of both runs.\n\n"
            "       attnscope-cli distil --teacher MODEL --per-head --data FILE --out DIR [--layers a-b|0,2]\n"
            "                            [--block NAME] [--steps 200] [--lr 0.01] [--batch 8] [--seed 0]\n"
            "                            [--max-tokens 128] [--device D] [--progress]\n\n"
            "Per-head distillation of a pretrained model (Hedgehog): for every head of the chosen layers of\n"
            "the block (default: all layers of the first block), feature maps phi(x) = [softmax(Wx+b),\n"
            "softmax(-(Wx+b))] (W d x d, one for queries, one for keys; from W = I, b = 0) are fitted with Adam\n"
            "so that the linear map phi(q_i).phi(k_j) / sum_j' phi(q_i).phi(k_j') (causal where the model is)\n"
            "matches the head's softmax map: mean row KL(softmax || linear) over FILE's texts (one per line;\n"
            "token ids for a model without a tokenizer), batches of --batch texts drawn by --seed. Every fifth\n"
            "text is held out when there are at least 5. Writes DIR/kl.npy [3, layers, heads] (held-out KL of\n"
            "the elu+1 map, the untrained map and the distilled map; kl.png draws it), kl_train.npy, loss.csv,\n"
            "feature_maps.npy [layers, heads, 2, d, d + 1] (rows [W | b] for queries, keys) with\n"
            "feature_maps.json, and report.json with the output change (KL, top-1 agreement) when the\n"
            "distilled heads replace the originals (docs/kinds.md).\n",
            runDistil};
}

}  // namespace attnscope::cli
