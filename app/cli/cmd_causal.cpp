// `lens`, `dla` and `patch`: the logit lens, direct logit attribution and activation patching of
// a decoder-only language model (attnscope/analysis/logit_lens.h, patching.h).
#include "commands.h"
#include "common.h"

#include "attnscope/analysis/logit_lens.h"
#include "attnscope/analysis/patching.h"
#include "attnscope/io/atomic_file.h"
#include "attnscope/io/npy.h"
#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <functional>
#include <iomanip>
#include <iostream>

namespace attnscope::cli {

namespace {

const std::set<std::string> kRunOptions = {"ids", "text", "out", "device", "weights", "revision", "capture-dtype"};

// Encoder-decoders and image models are refused before the forward; encoders after it (their
// Trace has no readout: analysis/logit_lens.cpp says so).
void requireDecoder(const Model& model, const char* what) {
    const ModelInfo& info = model.info();
    if (info.encoderDecoder || info.imageInput)
        throw Error(std::string(what) + " needs a decoder-only language model; " + info.family + " is not one");
}

// A vocabulary id given as --NAME (required where called); the model checks it against its vocabulary.
std::int64_t tokenOption(const Args& args, const char* name) {
    args.required(name);
    return static_cast<std::int64_t>(*args.integer(name, 0, std::int64_t{1} << 40));
}

int runLens(const std::vector<std::string>& argv) {
    std::set<std::string> options = kRunOptions;
    options.insert({"top", "token"});
    Args args(argv, options, {"progress"});
    args.expectPositionals(1);
    const auto model = loadModel(args);
    requireDecoder(*model, "the logit lens");
    LensOptions lens;
    lens.topK = static_cast<int>(args.integer("top", 1, 1 << 20).value_or(5));
    if (args.value("token")) lens.token = tokenOption(args, "token");
    const std::string outArg = args.required("out");
    RunOptions run;
    applyRunFlags(args, run);
    run.recordResiduals = true;
    const auto trace = model->forward(inputIds(args, *model), run);
    const LogitLens result = logitLens(*trace, lens);

    const std::filesystem::path out = prepareOutDir(outArg);
    StagedOutputs staged(out);
    const std::vector<std::int64_t> shape = {result.rows, result.tokens, result.k};
    writeNpyInt64(staged.path("lens_top_ids.npy"), shape, result.topIds);
    writeNpy(staged.path("lens_top_logprobs.npy"), shape, result.topLogProbs);
    if (lens.token) writeNpy(staged.path("lens_token_logprob.npy"), {result.rows, result.tokens}, result.tokenLogProbs);
    writeFileAtomically(staged.path("tokens.json"),
                        nlohmann::json({{"ids", trace->ids()}, {"tokens", trace->tokens()}}).dump(2) + "\n");
    staged.commit();
    std::cout << "logit lens: " << result.rows << " rows (embeddings, then after each of " << result.rows - 1
              << " blocks) x " << result.tokens << " positions, top " << result.k << "; wrote "
              << (out / "lens_top_ids.npy").string() << ", lens_top_logprobs.npy"
              << (lens.token ? ", lens_token_logprob.npy" : "") << ", tokens.json\n";
    return 0;
}

int runDla(const std::vector<std::string>& argv) {
    std::set<std::string> options = kRunOptions;
    options.insert({"token", "minus", "position"});
    Args args(argv, options, {"progress"});
    args.expectPositionals(1);
    const auto model = loadModel(args);
    requireDecoder(*model, "direct logit attribution");
    const std::int64_t token = tokenOption(args, "token");
    std::optional<std::int64_t> minus;
    if (args.value("minus")) minus = tokenOption(args, "minus");
    const std::string outArg = args.required("out");
    const auto ids = inputIds(args, *model);
    const auto n = static_cast<long long>(ids.size());
    RunOptions run;
    applyRunFlags(args, run);
    run.attributionPosition = args.integer("position", 0, n - 1).value_or(n - 1);
    const auto trace = model->forward(ids, run);
    const LogitAttribution dla = directLogitAttribution(*trace, token, minus);

    const std::filesystem::path out = prepareOutDir(outArg);
    StagedOutputs staged(out);
    writeNpy(staged.path("dla_heads.npy"), {dla.layers, dla.heads},
             std::vector<float>(dla.perHead.begin(), dla.perHead.end()));
    nlohmann::json j = {{"token", token},
                        {"position", dla.position},
                        {"embed", dla.embed},
                        {"attn_bias", dla.attnBias},
                        {"mlp", dla.mlp},
                        {"final_bias", dla.finalBias},
                        {"logit_diff", dla.logitDiff},
                        {"sum", dla.sum},
                        {"note", "logits before any final soft-cap; sum = every part, final_bias included"}};
    if (minus) j["minus"] = *minus;
    writeFileAtomically(staged.path("dla.json"), j.dump(2) + "\n");
    staged.commit();
    std::cout << "direct logit attribution at position " << dla.position << ": logit difference " << dla.logitDiff
              << ", sum of the parts " << dla.sum << "; wrote " << (out / "dla_heads.npy").string() << " ["
              << dla.layers << ", " << dla.heads << "] and dla.json\n";
    return 0;
}

// --clean-ids / --clean-text (or the corrupt ones): one of the two, like --ids / --text.
std::vector<std::int64_t> sideIds(const Args& args, const Model& model, const std::string& side) {
    const auto ids = args.value(side + "-ids"), text = args.value(side + "-text");
    if (ids.has_value() == text.has_value())
        throw UsageError("give exactly one of --" + side + "-ids and --" + side + "-text");
    return ids ? parseIntegers(*ids, "--" + side + "-ids", "token id") : model.encodeText(*text);
}

// Wall and process CPU time (every thread) of one call, in ms: under load the wall time measures
// the wait for a core, the CPU time the work.
struct Timed {
    double wallMs = 0, cpuMs = 0;
};

template <class F>
Timed timed(F&& f) {
    const auto wall = std::chrono::steady_clock::now();
    const std::clock_t cpu = std::clock();
    f();
    return {std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - wall).count(),
            1000.0 * static_cast<double>(std::clock() - cpu) / CLOCKS_PER_SEC};
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// --timing (docs/benchmarks.md), after one warm-up forward of the corrupt input. Attribution
// patching, whose target is a number of forwards: 5 rounds of the job then one forward, the job
// in forwards the median of the rounds' ratios (a round's two ran in the same seconds, so a load
// that changes between rounds cancels). The exact job, once, against as many forwards (the
// median of 5) as it has patches.
void runPatchTiming(const Model& model, const std::vector<std::int64_t>& ids, const std::function<void()>& job,
                    const PatchResult& result, bool attribution) {
    const auto forward = [&] { model.forward(ids); };
    std::cout << std::fixed << std::setprecision(1);
    if (attribution) {
        std::vector<double> jobWall, jobCpu, oneWall, oneCpu, wallRatio, cpuRatio;
        for (int round = 0; round < 5; ++round) {
            const Timed j = timed(job), f = timed(forward);
            jobWall.push_back(j.wallMs), jobCpu.push_back(j.cpuMs), oneWall.push_back(f.wallMs);
            oneCpu.push_back(f.cpuMs), wallRatio.push_back(j.wallMs / f.wallMs), cpuRatio.push_back(j.cpuMs / f.cpuMs);
        }
        std::cout << "timing: attribution patching " << median(jobWall) << " ms wall, " << median(jobCpu)
                  << " ms CPU for " << result.rows * result.cols
                  << " scores (clean run, corrupt run with gradients, backward); one forward " << median(oneWall)
                  << " ms wall, " << median(oneCpu)
                  << " ms CPU (medians of 5 rounds); the job = " << std::setprecision(2) << median(wallRatio)
                  << " forwards (wall), " << median(cpuRatio) << " (CPU) (median of the rounds' ratios; wall "
                  << *std::min_element(wallRatio.begin(), wallRatio.end()) << ".."
                  << *std::max_element(wallRatio.begin(), wallRatio.end()) << ")\n";
        return;
    }
    const Timed j = timed(job);
    std::vector<double> wall, cpu;
    for (int r = 0; r < 5; ++r) {
        const Timed f = timed(forward);
        wall.push_back(f.wallMs), cpu.push_back(f.cpuMs);
    }
    const double patches = static_cast<double>(result.rows) * result.cols;
    std::cout << "timing: the patching job " << j.wallMs << " ms wall, " << j.cpuMs << " ms CPU for "
              << static_cast<long long>(patches) << " patches (2 recorded runs included); one forward " << median(wall)
              << " ms wall, " << median(cpu) << " ms CPU; ratio to " << static_cast<long long>(patches) << " forwards "
              << std::setprecision(2) << j.wallMs / (median(wall) * patches) << " (wall), "
              << j.cpuMs / (median(cpu) * patches) << " (CPU)\n";
}

PatchWhat parseWhat(const std::string& what) {
    if (what == "heads") return PatchWhat::Heads;
    if (what == "resid") return PatchWhat::Resid;
    if (what == "attn-out") return PatchWhat::AttnOut;
    if (what == "mlp-out") return PatchWhat::MlpOut;
    throw Error("--what '" + what + "' is not one of heads, resid, attn-out, mlp-out");
}

int runPatch(const std::vector<std::string>& argv) {
    Args args(argv,
              {"clean-ids", "clean-text", "corrupt-ids", "corrupt-text", "token", "minus", "position", "what", "out",
               "device", "weights", "revision", "approx"},
              {"progress", "timing"});
    args.expectPositionals(1);
    PatchRequest request;
    request.what = parseWhat(args.required("what"));
    if (auto approx = args.value("approx")) {
        if (*approx != "attribution") throw Error("--approx '" + *approx + "' is not attribution");
        request.attribution = true;
    }
    const std::string outArg = args.required("out");
    const auto model = loadModel(args);
    requireDecoder(*model, "activation patching");
    request.token = tokenOption(args, "token");
    if (args.value("minus")) request.minus = tokenOption(args, "minus");
    const auto clean = sideIds(args, *model, "clean"), corrupt = sideIds(args, *model, "corrupt");
    if (args.value("position"))
        request.position = *args.integer("position", 0, static_cast<long long>(clean.size()) - 1);
    if (args.flag("progress")) request.progress = stderrProgress("patching", "patch");
    PatchResult result;
    const std::function<void()> job = [&] { result = activationPatching(*model, clean, corrupt, request); };
    if (args.flag("timing")) {
        model->forward(corrupt);  // warm-up
        runPatchTiming(*model, corrupt, job, result, request.attribution);
    } else {
        job();
    }

    const std::filesystem::path out = prepareOutDir(outArg);
    StagedOutputs staged(out);
    writeNpy(staged.path("patch.npy"), {result.rows, result.cols}, result.scores);
    nlohmann::json j = {{"what", args.required("what")},
                        {"method", request.attribution ? "attribution (linear approximation)" : "exact"},
                        {"token", request.token},
                        {"position", result.position},
                        {"ld_clean", result.ldClean},
                        {"ld_corrupt", result.ldCorrupt},
                        {"rows", "layer"},
                        {"columns", request.what == PatchWhat::Heads ? "head" : "position"}};
    if (request.minus) j["minus"] = *request.minus;
    writeFileAtomically(staged.path("patch.json"), j.dump(2) + "\n");
    staged.commit();
    std::cout << "activation patching (" << args.required("what") << "): LD clean " << result.ldClean << ", corrupt "
              << result.ldCorrupt << "; wrote " << (out / "patch.npy").string() << " [" << result.rows << ", "
              << result.cols << "] and patch.json\n";
    return 0;
}

const char* const kInputHelp =
        "MODEL: a model folder, a file of one, builtin:NAME or a Hugging Face model id in the local cache\n"
        "(--revision); decoder-only language models (GPT-2, Llama, Mistral, Qwen, Gemma, ... 17 families).\n"
        "--ids \"3,17,42\" or --text TEXT (the model's tokenizer). --device cpu|cuda|auto, --weights, --progress.\n";

}  // namespace

Command lensCommand() {
    static const std::string usage =
            std::string("usage: attnscope-cli lens MODEL (--ids IDS | --text TEXT) --out DIR [--top K] [--token T]\n\n"
                        "The logit lens: for the residual stream entering each block (row 0: the embeddings and\n"
                        "positions) and the final one (row L), at every position, softmax(unembed(FinalNorm(h))) with\n"
                        "the model's own final norm and unembedding, before any final soft-cap. Row L is the model's\n"
                        "own next-token distribution.\n"
                        "  DIR/lens_top_ids.npy       int64   [L+1, n, K], most probable first (K: --top, default 5)\n"
                        "  DIR/lens_top_logprobs.npy  float32 [L+1, n, K], natural log\n"
                        "  DIR/lens_token_logprob.npy float32 [L+1, n], with --token T (a vocabulary id)\n"
                        "  DIR/tokens.json            the input ids and tokens\n") +
            kInputHelp;
    return {"lens", "logit lens: what each layer's residual stream predicts", usage.c_str(), runLens};
}

Command dlaCommand() {
    static const std::string usage =
            std::string(
                    "usage: attnscope-cli dla MODEL (--ids IDS | --text TEXT) --token T [--minus T2] [--position P]\n"
                    "                       --out DIR\n\n"
                    "Direct logit attribution of logit(T) - logit(T2) (or logit(T)) at position P (default the\n"
                    "last): the final residual there is split into the embeddings, each head's output through\n"
                    "W_O, each attention bias and each MLP output, and each part is read through the final norm\n"
                    "linearised at P and the unembedding. The parts sum to the model's logit difference.\n"
                    "Pre-norm decoders only (post-norm ones are refused).\n"
                    "  DIR/dla_heads.npy  float32 [L, H]\n"
                    "  DIR/dla.json       embed, attn_bias [L], mlp [L], final_bias, logit_diff, sum\n") +
            kInputHelp;
    return {"dla", "direct logit attribution per head, MLP and embedding", usage.c_str(), runDla};
}

Command patchCommand() {
    static const std::string usage =
            std::string(
                    "usage: attnscope-cli patch MODEL (--clean-ids IDS | --clean-text TEXT)\n"
                    "                         (--corrupt-ids IDS | --corrupt-text TEXT) --token T [--minus T2]\n"
                    "                         --what heads|resid|attn-out|mlp-out [--position P] [--approx attribution]\n"
                    "                         --out DIR\n\n"
                    "Activation patching: LD = logit(T) - logit(T2) (or logit(T)) at P (default the last), before\n"
                    "any final soft-cap. For each site, the corrupt run with that one activation taken from the\n"
                    "clean run; score = (LD_patched - LD_corrupt) / (LD_clean - LD_corrupt). The inputs must have\n"
                    "the same length. heads: head (l, h)'s output before W_O at every position; resid: the\n"
                    "residual entering block l at position p; attn-out / mlp-out: what layer l's attention / MLP\n"
                    "adds at p. A patch in layer l re-runs only layers l..L-1.\n"
                    "  DIR/patch.npy   float32 [L, H] (heads) or [L, n]\n"
                    "  DIR/patch.json  ld_clean, ld_corrupt, what, token, minus, position\n"
                    "--approx attribution: attribution patching, score ~ (a_clean - a_corrupt) . dLD/da at the\n"
                    "  corrupt run, one backward pass instead of a run per patch.\n"
                    "--timing also prints the job's wall and CPU time (after a warm-up forward) against as many\n"
                    "  full forwards as it has patches; for --approx attribution, in forwards (5 rounds of the job\n"
                    "  and one forward, the median of their ratios).\n") +
            kInputHelp;
    return {"patch", "activation patching on a clean/corrupt pair", usage.c_str(), runPatch};
}

}  // namespace attnscope::cli
