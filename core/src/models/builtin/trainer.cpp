// The trainer of the built-in models: LibTorch autograd over the same network functions the
// models run (net.h, training mode), Adam with warm-up and cosine decay, gradient clipping.
// Deterministic: data and initial weights come from the project's own generator (TaskData) and
// LibTorch runs single-threaded, so a seed gives bit-identical weights on a given build.
#include "attnscope/models/builtin.h"
#include "attnscope/io/atomic_file.h"
#include "attnscope/runtime/error.h"
#include "attnscope/models/model.h"
#include "attnscope/io/safetensors.h"
#include "attnscope/attention/trace.h"
#include "config.h"
#include "runtime/device.h"
#include "batches.h"
#include "distillation.h"
#include "net.h"
#include "task_file.h"
#include "attention/kinds.h"
#include "symbols.h"
#include "runtime/numbers.h"

#include <ATen/Parallel.h>
#include <c10/core/GradMode.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <optional>

namespace attnscope {

namespace {

using builtin::Batch;
using builtin::Config;
using builtin::Encoded;
using builtin::Weights;

Config defaultConfig(BuiltinTask task, const TrainOptions& options) {
    Config c;
    c.task = task;
    c.kind = options.attention;
    c.sparse = options.sparse;
    c.relative = options.relativePositions;
    c.relativeClip = options.relativeClip;
    c.seq2seq = task == BuiltinTask::Reverse;
    if (options.layers > 0) c.encoderLayers = c.decoderLayers = options.layers;
    if (options.heads > 0) c.heads = options.heads;
    c.vocabSize = builtin::Symbols::forTask(task).size();
    if (c.seq2seq) {
        c.maxSource = kReverseMaxLength;
        c.maxTarget = kReverseMaxLength;
        c.sourceFromEnd = true;
    } else {
        c.maxSource = 16;  // <cls> + up to 15 words; the grammar's longest sentence has 13
        c.labels = {"negative", "positive"};
    }
    return c;
}

int defaultSteps(BuiltinTask task) { return task == BuiltinTask::Reverse ? 1500 : 1000; }
double defaultLearningRate(BuiltinTask) { return 3e-3; }
int defaultEvalExamples(BuiltinTask task) { return task == BuiltinTask::Reverse ? 500 : 1000; }

// Normal(0, std) from the project's generator (Box-Muller), so the weights do not depend on
// LibTorch's random number generators.
at::Tensor normal(TaskData& rng, const std::vector<std::int64_t>& shape, double std) {
    at::Tensor t = at::empty(shape, at::kFloat);
    float* p = t.data_ptr<float>();
    for (std::int64_t i = 0; i < t.numel(); ++i) {
        const double u1 = 1.0 - rng.unit(), u2 = rng.unit();
        p[i] = static_cast<float>(std * std::sqrt(-2.0 * std::log(u1)) * std::cos(2 * kPi * u2));
    }
    return t;
}

bool endsWith(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Weights initialWeights(const Config& c, std::uint64_t seed) {
    TaskData rng(seed ^ 0x5EEDull, Split::Train);
    Weights w;
    for (const auto& [name, shape] : builtin::parameterShapes(c)) {
        at::Tensor t;
        if (name.find(".ln") != std::string::npos) {  // LayerNorm: identity
            t = endsWith(name, ".weight") ? at::ones(shape, at::kFloat) : at::zeros(shape, at::kFloat);
        } else if (shape.size() == 1) {  // biases
            t = at::zeros(shape, at::kFloat);
        } else if (name == "src_embed" || name == "tgt_embed" || name == "src_pos" || name == "tgt_pos") {
            t = normal(rng, shape, 0.5);
        } else if (endsWith(name, ".rel") || endsWith(name, ".gw")) {  // no bias, gate 1/2 at the start
            t = at::zeros(shape, at::kFloat);
        } else if (endsWith(name, ".av")) {
            t = normal(rng, shape, 1.0 / std::sqrt(static_cast<double>(shape[1])));
        } else {  // [out, in] matrices and the additive [H, d, w] projections: fan-in scaling
            t = normal(rng, shape, 1.0 / std::sqrt(static_cast<double>(shape[1])));
        }
        w[name] = t.requires_grad_(true);
    }
    return w;
}

// What a model trained on the file should write for an example: the label, or the target's units
// joined (characters as they are, words by single spaces).
std::string expectedOutput(const builtin::FileTask& task, const builtin::FileExample& ex) {
    if (!task.seq2seq) return ex.output;
    std::string out;
    for (const auto& u : builtin::splitUnits(ex.output, task.perCharacter))
        out += (out.empty() || task.perCharacter ? "" : " ") + u;
    return out;
}

std::string writtenOutput(const Trace& trace, bool perCharacter) {
    if (!trace.classLabels().empty()) {
        const auto& p = trace.classProbabilities();
        return trace.classLabels()[static_cast<std::size_t>(std::max_element(p.begin(), p.end()) - p.begin())];
    }
    std::string got;
    for (const auto& t : trace.outputTokens()) got += (got.empty() || perCharacter ? "" : " ") + t;
    return got;
}

void save(const Weights& w, const Config& c, const builtin::Symbols& symbols, const nlohmann::json& training,
          const std::filesystem::path& out) {
    std::vector<TensorBytes> tensors;
    for (const auto& [name, shape] : builtin::parameterShapes(c)) {
        const at::Tensor t = w.at(name).detach().contiguous();
        TensorBytes tb{name, DType::F32, shape, std::vector<std::byte>(static_cast<std::size_t>(t.numel()) * 4)};
        std::memcpy(tb.bytes.data(), t.data_ptr<float>(), tb.bytes.size());
        tensors.push_back(std::move(tb));
    }
    writeSafetensors(out / "model.safetensors", tensors, {{"format", "pt"}, {"attnscope_task", taskName(c.task)}});
    symbols.write(out);
    writeFileAtomically(out / "config.json", builtin::configJson(c, training).dump(2) + "\n");
}

// Exact-match (reverse) or label (sentiment) accuracy of the saved model on held-out examples.
double heldOutAccuracy(const std::filesystem::path& folder, BuiltinTask task, int examples) {
    LoadOptions load;
    load.device = DeviceChoice::Cpu;
    const auto model = Model::load(folder, load);
    TaskData data(20260601, Split::HeldOut);
    int correct = 0;
    for (int i = 0; i < examples; ++i) {
        if (task == BuiltinTask::Reverse) {
            const std::string s = data.reverseSource();
            const auto trace = model->forward(model->encodeText(s));
            std::string got;
            for (const auto& t : trace->outputTokens()) got += t;
            correct += got == std::string(s.rbegin(), s.rend());
        } else {
            const SentimentExample ex = data.sentiment();
            const auto trace = model->forward(model->encodeText(ex.text));
            correct += (trace->classProbabilities()[1] > trace->classProbabilities()[0]) == ex.positive;
        }
    }
    return static_cast<double>(correct) / examples;
}

std::vector<Encoded> encodeExamples(const builtin::FileTask& file, const builtin::Symbols& symbols, const Config& c,
                                    const std::vector<builtin::FileExample>& examples) {
    std::vector<Encoded> out;
    for (const auto& ex : examples) {
        Encoded e;
        e.source = symbols.encode(ex.input, c.maxSource);
        if (file.seq2seq)
            e.target = symbols.encode(ex.output, c.maxTarget);
        else
            e.label = std::find(file.labels.begin(), file.labels.end(), ex.output) - file.labels.begin();
        out.push_back(std::move(e));
    }
    return out;
}

// Sizes the model to the file (vocabulary, longest source and target, labels) and encodes its
// training examples.
std::vector<Encoded> encodeFileTask(const builtin::FileTask& file, const builtin::Symbols& symbols,
                                    const std::filesystem::path& path, Config& c) {
    c.fileTask = true;
    c.perCharacter = file.perCharacter;
    c.taskFile = path.filename().string();
    c.vocabSize = symbols.size();
    c.sourceFromEnd = false;
    c.maxSource = c.maxTarget = 1;
    const int classifierExtra = file.seq2seq ? 0 : 1;  // <cls>
    for (const auto* set : {&file.train, &file.heldOut})
        for (const auto& ex : *set) {
            c.maxSource =
                    std::max(c.maxSource, static_cast<int>(builtin::splitUnits(ex.input, file.perCharacter).size()) +
                                                  classifierExtra);
            if (file.seq2seq)
                c.maxTarget = std::max(c.maxTarget,
                                       static_cast<int>(builtin::splitUnits(ex.output, file.perCharacter).size()));
        }
    if (!file.seq2seq) c.labels = file.labels;
    return encodeExamples(file, symbols, c, file.train);
}

// Accuracy of the saved model on the file's first `examples` held-out examples.
double fileHeldOutAccuracy(const std::filesystem::path& folder, const builtin::FileTask& file, int examples) {
    LoadOptions load;
    load.device = DeviceChoice::Cpu;
    const auto model = Model::load(folder, load);
    int correct = 0;
    for (int i = 0; i < examples; ++i) {
        const auto& ex = file.heldOut[static_cast<std::size_t>(i)];
        const auto trace = model->forward(model->encodeText(ex.input));
        correct += writtenOutput(*trace, file.perCharacter) == expectedOutput(file, ex);
    }
    return static_cast<double>(correct) / examples;
}

// One Adam step at learning rate lr on gradients clipped to global norm 1; gradients zeroed.
void adamStep(Weights& w, Weights& m, Weights& v, int step, double lr) {
    at::NoGradGuard noGrad;
    double norm2 = 0;
    for (auto& [name, t] : w) norm2 += t.grad().pow(2).sum().item<double>();
    const double clip = std::min(1.0, 1.0 / (std::sqrt(norm2) + 1e-12));
    const double b1 = 0.9, b2 = 0.999, eps = 1e-8;
    const double c1 = 1 - std::pow(b1, step), c2 = 1 - std::pow(b2, step);
    for (auto& [name, t] : w) {
        at::Tensor g = t.grad() * clip;
        m[name].mul_(b1).add_(g, 1 - b1);
        v[name].mul_(b2).addcmul_(g, g, 1 - b2);
        t.sub_(m[name] / c1 / ((v[name] / c2).sqrt() + eps) * lr);
        t.mutable_grad().zero_();
    }
}

void checkKindOptions(const TrainOptions& o) {
    const AttentionKind k = o.attention;
    if (k == AttentionKind::Local) checkSparseOptions(MapVariant::Local, o.sparse);
    if (k == AttentionKind::TopK) checkSparseOptions(MapVariant::TopK, o.sparse);
    if (k == AttentionKind::Lsh) checkSparseOptions(MapVariant::Lsh, o.sparse);
    if (o.relativePositions && (k == AttentionKind::Additive || k == AttentionKind::Linear))
        throw Error(std::string("train: relative positions add a bias to dot-product logits; ") + kindName(k) +
                    " attention has no place for it");
    if (o.relativePositions && o.relativeClip < 1) throw Error("train: the relative clip distance must be >= 1");
    if (o.layers < 0 || o.layers > 12) throw Error("train: layers must be between 1 and 12");
    if (o.heads < 0 || (o.heads > 0 && 32 % o.heads != 0))
        throw Error("train: heads must divide the model width 32 (1, 2, 4, 8, 16 or 32), got " +
                    std::to_string(o.heads));
    if (!(o.distillation.lambda >= 0)) throw Error("train: the distillation weight lambda must be >= 0");
}

// A distillation run's teacher and the fixed held-out batch EpochEnd::kl is measured on.
struct Distiller {
    builtin::Teacher teacher;
    Batch probe;
    double lambda = 0;

    double heldOutKl(const Weights& w, const Config& c) const {
        at::NoGradGuard noGrad;
        std::vector<builtin::SiteMap> maps;
        builtin::taskLoss(w, c, probe, &maps);
        return builtin::distillationKl(teacher, c, maps, probe).item<double>();
    }
};

std::optional<Distiller> makeDistiller(const TrainOptions& o, const Config& c, const builtin::Symbols& symbols,
                                       const std::optional<builtin::FileTask>& file) {
    if (o.distillation.teacher.empty()) return std::nullopt;
    Distiller d;
    d.teacher = builtin::loadTeacher(o.distillation.teacher, c, symbols);
    d.lambda = o.distillation.lambda;
    TaskData data(20261204, Split::HeldOut);  // fixed: the same batch for every run and epoch
    if (file)
        d.probe = builtin::fileBatch(data, encodeExamples(*file, symbols, c, file->heldOut), file->seq2seq, 64);
    else
        d.probe = c.seq2seq ? builtin::reverseBatch(data, symbols, 64) : builtin::sentimentBatch(data, symbols, 64);
    return d;
}

// The objective of one step: the task loss, plus lambda · KL when distilling with lambda > 0.
at::Tensor objective(const Weights& w, const Config& c, const Batch& batch, const std::optional<Distiller>& d) {
    if (!d || d->lambda == 0) return builtin::taskLoss(w, c, batch);
    std::vector<builtin::SiteMap> maps;
    const at::Tensor task = builtin::taskLoss(w, c, batch, &maps);
    return task + d->lambda * builtin::distillationKl(d->teacher, c, maps, batch);
}

// The task, its vocabulary, the model's configuration and a task file's encoded examples.
struct Setup {
    std::optional<builtin::FileTask> file;
    BuiltinTask task = BuiltinTask::Reverse;
    builtin::Symbols symbols;
    Config config;
    std::vector<Encoded> encoded;
};

Setup prepare(const TrainOptions& options) {
    checkKindOptions(options);
    Setup s;
    if (!options.taskFile.empty()) s.file = builtin::readTaskFile(options.taskFile, options.vocabulary);
    s.task = s.file ? (s.file->seq2seq ? BuiltinTask::Reverse : BuiltinTask::Sentiment) : options.task;
    s.symbols = s.file ? builtin::Symbols::fromUnits(s.task, s.file->symbols, s.file->perCharacter)
                       : builtin::Symbols::forTask(s.task);
    s.config = defaultConfig(s.task, options);
    if (s.file) s.encoded = encodeFileTask(*s.file, s.symbols, options.taskFile, s.config);
    return s;
}

}  // namespace

void checkTeacher(const TrainOptions& options) {
    const Setup setup = prepare(options);
    makeDistiller(options, setup.config, setup.symbols, setup.file);
}

TrainResult trainBuiltin(const TrainOptions& options) {
    if (options.out.empty()) throw Error("train: no output folder given");
    if (options.steps < 0) throw Error("train: steps must be >= 0");
    if (options.batch < 1) throw Error("train: batch must be >= 1");
    resolveDevice(DeviceChoice::Cpu);  // process-wide threading policy first, then pin to one thread
    at::set_num_threads(1);
    std::error_code ec;
    std::filesystem::create_directories(options.out, ec);
    if (ec || !std::filesystem::is_directory(options.out, ec))
        throw Error(options.out.string() + ": cannot create the output folder");

    Setup setup = prepare(options);
    const std::optional<builtin::FileTask>& file = setup.file;
    const BuiltinTask task = setup.task;
    const builtin::Symbols& symbols = setup.symbols;
    const Config& config = setup.config;
    const std::vector<Encoded>& encoded = setup.encoded;
    const std::optional<Distiller> distiller = makeDistiller(options, config, symbols, file);
    const int steps = options.steps > 0 ? options.steps : defaultSteps(task);
    const double peak = options.learningRate > 0 ? options.learningRate : defaultLearningRate(task);
    const int warmup = std::min(100, steps / 10 + 1);
    c10::AutoGradMode gradMode(true);

    Weights w = initialWeights(config, options.seed);
    Weights m, v;  // Adam moments
    for (const auto& [name, t] : w) {
        m[name] = at::zeros_like(t).detach();
        v[name] = at::zeros_like(t).detach();
    }
    TaskData data(options.seed, Split::Train);
    TrainResult result;
    result.steps = steps;
    const auto start = std::chrono::steady_clock::now();
    double monitoring = 0;  // seconds spent in epochEnd, not counted as training time
    auto elapsed = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() - monitoring;
    };
    double windowLoss = 0, tailLoss = 0, epochLoss = 0;
    int windowCount = 0, tailCount = 0, epochCount = 0, epoch = 0;
    const int epochSteps = options.epochSteps > 0 ? options.epochSteps : std::max(1, steps / 10);
    const int tail = std::min(50, steps);
    for (int step = 1; step <= steps; ++step) {
        const Batch batch = file ? builtin::fileBatch(data, encoded, file->seq2seq, options.batch)
                            : task == BuiltinTask::Reverse ? builtin::reverseBatch(data, symbols, options.batch)
                                                           : builtin::sentimentBatch(data, symbols, options.batch);
        at::Tensor l = objective(w, config, batch, distiller);
        l.backward();
        const double value = l.item<double>();
        if (step == 1) result.initialLoss = value;
        windowLoss += value;
        ++windowCount;
        if (step > steps - tail) {
            tailLoss += value;
            ++tailCount;
        }
        const double progress = static_cast<double>(step - warmup) / std::max(1, steps - warmup);
        adamStep(w, m, v, step,
                 step <= warmup ? peak * step / warmup : peak * (0.1 + 0.9 * 0.5 * (1 + std::cos(kPi * progress))));
        epochLoss += value;
        ++epochCount;
        if (options.epochEnd && (step % epochSteps == 0 || step == steps)) {
            ++epoch;
            EpochEnd end{epoch, step, epochLoss / epochCount,
                         options.out / "checkpoints" / ("epoch-" + std::to_string(epoch))};
            std::error_code made;
            std::filesystem::create_directories(end.checkpoint, made);
            if (made) throw Error(end.checkpoint.string() + ": cannot create the checkpoint folder");
            save(w, config, symbols, {{"epoch", epoch}, {"step", step}, {"seed", options.seed}}, end.checkpoint);
            const auto before = std::chrono::steady_clock::now();
            if (distiller) end.kl = distiller->heldOutKl(w, config);
            options.epochEnd(end);
            monitoring += std::chrono::duration<double>(std::chrono::steady_clock::now() - before).count();
            at::set_num_threads(1);  // the callback may have run models on every core
            epochLoss = 0;
            epochCount = 0;
        }
        if (options.progress && (step % 25 == 0 || step == steps)) {
            if (!options.progress(TrainProgress{step, steps, windowLoss / windowCount, elapsed()})) throw Cancelled();
            windowLoss = 0;
            windowCount = 0;
        }
    }
    result.finalLoss = tailLoss / std::max(1, tailCount);
    result.seconds = elapsed();
    for (const auto& [name, t] : w) result.parameters += t.numel();

    const std::string taskArg = file ? options.taskFile.string() : std::string(taskName(task));
    nlohmann::json training = {{"command", std::string("attnscope-cli train --task ") + taskArg + " --attention " +
                                                   kindName(options.attention) + " --seed " +
                                                   std::to_string(options.seed) + " --steps " + std::to_string(steps)},
                               {"seed", options.seed},
                               {"steps", steps},
                               {"batch", options.batch},
                               {"learning_rate", peak},
                               {"final_loss", result.finalLoss}};
    if (distiller) {
        training["command"] = "attnscope-cli distil --teacher " + options.distillation.teacher.string() +
                              " --student-kind " + kindName(options.attention) + " --task " + taskArg + " --lambda " +
                              std::to_string(distiller->lambda) + " --seed " + std::to_string(options.seed) + " (" +
                              std::to_string(steps) + " steps)";
        result.finalKl = distiller->heldOutKl(w, config);
        training["distillation"] = {{"teacher", options.distillation.teacher.string()},
                                    {"lambda", distiller->lambda},
                                    {"held_out_kl", result.finalKl}};
    }
    save(w, config, symbols, training, options.out);
    int examples = options.evalExamples >= 0 ? options.evalExamples : defaultEvalExamples(task);
    if (file) examples = std::min<int>(examples, static_cast<int>(file->heldOut.size()));
    if (examples > 0) {
        result.heldOutAccuracy =
                file ? fileHeldOutAccuracy(options.out, *file, examples) : heldOutAccuracy(options.out, task, examples);
        result.heldOutExamples = examples;
        training["held_out_accuracy"] = result.heldOutAccuracy;
        training["held_out_examples"] = examples;
        writeFileAtomically(options.out / "config.json", builtin::configJson(config, training).dump(2) + "\n");
    }
    return result;
}

std::vector<std::pair<std::string, std::string>> heldOutExamples(const TrainOptions& options, int count) {
    std::vector<std::pair<std::string, std::string>> out;
    if (options.taskFile.empty()) {
        TaskData data(20261204, Split::HeldOut);  // fixed: the same probes for every run
        for (int i = 0; i < count; ++i) {
            if (options.task == BuiltinTask::Reverse) {
                const std::string s = data.reverseSource();
                out.emplace_back(s, std::string(s.rbegin(), s.rend()));
            } else {
                const SentimentExample ex = data.sentiment();
                out.emplace_back(ex.text, ex.positive ? "positive" : "negative");
            }
        }
        return out;
    }
    const builtin::FileTask file = builtin::readTaskFile(options.taskFile, options.vocabulary);
    for (const auto& ex : file.heldOut) {
        if (static_cast<int>(out.size()) == count) break;
        out.emplace_back(ex.input, expectedOutput(file, ex));
    }
    return out;
}

}  // namespace attnscope
