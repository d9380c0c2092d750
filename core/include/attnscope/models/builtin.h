// Built-in models: the two toy tasks they learn, the data those tasks are drawn from, and the
// trainer that produces the models shipped under resources/builtin.
//
// reverse   a string of 2-16 symbols from 0-9 a-z -> the same string reversed
//           (encoder-decoder, model_type "attnscope-seq2seq", per-character vocabulary)
// sentiment a short English sentence from the grammar in builtin/tasks.cpp -> positive/negative
//           (encoder classifier, model_type "attnscope-classifier", per-word vocabulary)
//
// Every sample is a pure function of a seed (a project-defined generator, not std:: distributions
// or LibTorch's), so data, initial weights and therefore trained weights are reproducible.
#pragma once

#include "attnscope/runtime/progress.h"
#include "attnscope/attention/trace.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace attnscope {

enum class BuiltinTask { Reverse, Sentiment };
const char* taskName(BuiltinTask task);          // "reverse", "sentiment"
BuiltinTask parseTask(const std::string& text);  // throws attnscope::Error naming the value
// "dot", "additive", "linear", "local", "topk", "lsh", "hybrid"
AttentionKind parseAttentionKind(const std::string& text);

// The symbols of the reverse task, in vocabulary order after the specials.
inline constexpr const char* kReverseAlphabet = "0123456789abcdefghijklmnopqrstuvwxyz";
inline constexpr int kReverseMinLength = 2;
inline constexpr int kReverseMaxLength = 16;

// Held-out examples are those whose text hashes (FNV-1a 64) to 0 mod 10; the trainer never sees
// them, so "held-out" is a property of the example, not of the seed that drew it.
bool isHeldOut(const std::string& text);

enum class Split { Train, HeldOut };

struct SentimentExample {
    std::string text;  // lowercase words separated by single spaces, no punctuation
    bool positive = false;
};

// A deterministic stream of task examples from one split.
class TaskData {
public:
    TaskData(std::uint64_t seed, Split split);
    std::string reverseSource();  // 2-16 symbols of kReverseAlphabet
    SentimentExample sentiment();

    std::uint64_t next();  // raw 64-bit output (splitmix64)
    int uniform(int n);    // in [0, n)
    double unit();         // in [0, 1)

private:
    std::uint64_t state_;
    Split split_;
};

// Every word the sentiment grammar can produce, in vocabulary order.
const std::vector<std::string>& sentimentWords();

// Trainer. Runs on the CPU, single-threaded, so a seed gives bit-identical weights.
struct TrainProgress {
    int step = 0;
    int steps = 0;
    double loss = 0;     // mean training loss over the last logging interval
    double seconds = 0;  // since training started
};

// The end of a training epoch: its checkpoint (a model folder that loads like the built-ins) is
// saved under TrainOptions::out / "checkpoints" / "epoch-N" before the callback runs.
struct EpochEnd {
    int epoch = 0;    // 1, 2, ...
    int step = 0;     // steps done
    double loss = 0;  // mean training loss over the epoch's steps
    std::filesystem::path checkpoint;
    // With a teacher (TrainOptions::distillation): the mean attention KL(teacher ‖ student), nats,
    // on a fixed batch of 64 held-out examples, whatever λ; -1 without a teacher.
    double kl = -1;
};

// Attention distillation (core/src/models/builtin/distillation.h gives the loss, the floor and the
// layer/head mapping): the loss becomes task loss + lambda · KL(teacher map ‖ student map) over
// the mapped attention modules and heads; gradients flow through the student's maps only.
struct DistillationOptions {
    // A built-in model folder trained on the same task (the same vocabulary); empty: no teacher.
    std::filesystem::path teacher;
    // >= 0; 0 trains on the task loss alone (bit-identical to no teacher) and still measures the KL.
    double lambda = 1.0;
};

struct TrainOptions {
    BuiltinTask task = BuiltinTask::Reverse;
    // A task file instead (JSONL lines {"text", "label"} or {"source", "target"}; see
    // core/src/models/builtin/task_file.h): the vocabulary ("char", "word" or "auto": words for
    // classification, characters for seq2seq) and the model's sizes come from it, examples whose
    // input hashes held out (isHeldOut) are kept for scoring. `task` is then ignored.
    std::filesystem::path taskFile;
    std::string vocabulary = "auto";
    AttentionKind attention = AttentionKind::Dot;
    // Local / TopK / Lsh: their window, k, buckets, rounds and hash seed (self-attention blocks;
    // the reverse model's cross-attention stays dot for local and lsh, which need one sequence).
    SparseOptions sparse;
    // Relative positions (Shaw et al.): no position embeddings; every self-attention layer adds a
    // learned bias per head over the relative distance j - i clipped to [-relativeClip, relativeClip].
    bool relativePositions = false;
    int relativeClip = 8;
    // Model sizes: layers of the encoder (and decoder) and heads per module; 0: the defaults (2, 2).
    // heads must divide the model width (32).
    int layers = 0;
    int heads = 0;
    DistillationOptions distillation;
    std::uint64_t seed = 1;
    int steps = 0;  // 0: the task's default
    int batch = 64;
    double learningRate = 0;    // 0: the task's default
    int evalExamples = -1;      // held-out examples scored after training; -1: the task's default
    std::filesystem::path out;  // folder: config.json, model.safetensors, vocab.json
    // Called every few steps; returning false stops training (attnscope::Cancelled).
    std::function<bool(const TrainProgress&)> progress;
    // Epochs: every epochSteps steps (0: steps / 10, at least 1) and at the last step, a checkpoint
    // is saved and epochEnd called (analysis/training_monitors.h logs the monitors there). Without
    // epochEnd no checkpoint is saved.
    int epochSteps = 0;
    std::function<void(const EpochEnd&)> epochEnd;
};

struct TrainResult {
    int steps = 0;
    double initialLoss = 0;       // training loss of the first step
    double finalLoss = 0;         // mean training loss over the last 50 steps
    double heldOutAccuracy = -1;  // exact-match (reverse) or label accuracy (sentiment); -1: not scored
    int heldOutExamples = 0;
    double seconds = 0;  // training time, without scoring and without epochEnd callbacks
    std::int64_t parameters = 0;
    double finalKl = -1;  // with a teacher: EpochEnd::kl of the final weights
};

// Held-out (input, expected output) pairs of the task `options` train, at most `count`: the
// built-in task's fixed held-out stream, or the task file's held-out lines (expected: the label,
// or the target as the model writes it: characters joined, words joined by single spaces).
std::vector<std::pair<std::string, std::string>> heldOutExamples(const TrainOptions& options, int count);

// Throws the attnscope::Error trainBuiltin would throw for these options' task, kind and teacher
// (a missing teacher, another task or vocabulary), without training or writing anything.
void checkTeacher(const TrainOptions& options);

// Trains a model and writes it to options.out (created; files replaced atomically). Throws
// attnscope::Error for invalid options or an unwritable folder.
TrainResult trainBuiltin(const TrainOptions& options);

}  // namespace attnscope
