#include "common.h"

#include "attnscope/io/atomic_file.h"
#include "attnscope/runtime/error.h"
#include "attnscope/io/model_location.h"
#include "attnscope/models/model.h"
#include "attnscope/tokenizer/token_ids.h"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <sstream>
#include <unistd.h>

namespace attnscope::cli {

std::shared_ptr<const Model> loadModel(const Args& args, std::size_t index) {
    return loadModelAt(args,
                       args.positional(index, "MODEL (a model folder, a file in one, builtin:NAME or a model id)"));
}

std::shared_ptr<const Model> loadModelAt(const Args& args, const std::string& spec) {
    LoadOptions options;
    options.device = parseDeviceChoice(args.value("device").value_or("auto"));
    if (const auto w = args.value("weights")) {
        if (*w == "auto")
            options.weights = WeightPlan::Auto;
        else if (*w == "convert")
            options.weights = WeightPlan::Convert;
        else if (*w == "stream")
            options.weights = WeightPlan::Stream;
        else
            throw Error("--weights '" + *w + "' is not one of auto, convert, stream");
    }
    if (args.flag("progress")) options.progress = stderrProgress("loading", "tensors");
    return Model::load(resolveModelLocation(spec, args.value("revision").value_or("")), options);
}

void applyRunFlags(const Args& args, RunOptions& options, const std::string& what) {
    if (const auto c = args.value("capture-dtype")) {
        if (*c == "compute")
            options.captureDtype = CaptureDtype::Compute;
        else if (*c == "float16")
            options.captureDtype = CaptureDtype::Float16;
        else if (*c == "bfloat16")
            options.captureDtype = CaptureDtype::BFloat16;
        else
            throw Error("--capture-dtype '" + *c + "' is not one of compute, float16, bfloat16");
    }
    if (args.flag("progress")) options.progress = stderrProgress(what, "layer");
}

Progress stderrProgress(const std::string& what, const std::string& unit) {
    struct State {
        ProgressClock clock;
        std::chrono::steady_clock::time_point last;
        long long lastDone = -1;
    };
    auto state = std::make_shared<State>();
    return [what, unit, state](long long done, long long total) {
        const auto now = std::chrono::steady_clock::now();
        const double left = state->clock.secondsLeft(done, total);
        const bool end = total > 0 && done >= total;
        // At most ten lines a second; every step of a slow job, and the last one, always.
        if (done == state->lastDone || (!end && now - state->last < std::chrono::milliseconds(100))) return true;
        state->last = now;
        state->lastDone = done;
        std::cerr << "\r" << what << ": " << unit << " " << done << "/" << total
                  << (left >= 0 && !end ? ", " + ProgressClock::format(left) + " left" : std::string()) << "   "
                  << (end ? "\n" : "") << std::flush;
        return true;
    };
}

std::vector<std::int64_t> parseIds(const std::string& text) { return parseIntegers(text, "--ids", "token id"); }

std::vector<std::int64_t> parseIntegers(const std::string& text, const std::string& option, const std::string& what) {
    try {
        return parseNumberList(text, what);  // core's rules, one parser for the CLI and the ui
    } catch (const Error& e) {
        throw Error(option + ": " + e.what());
    }
}

std::filesystem::path prepareOutDir(const std::string& dir) {
    std::filesystem::path out(dir);
    std::error_code ec;
    if (std::filesystem::exists(out, ec) && !std::filesystem::is_directory(out, ec))
        throw Error("--out " + dir + ": exists and is not a folder");
    std::filesystem::create_directories(out, ec);
    if (ec) throw Error("--out " + dir + ": cannot create the folder: " + ec.message());
    if (::access(out.c_str(), W_OK) != 0) throw Error("--out " + dir + ": the folder is not writable");
    return out;
}

StagedOutputs::StagedOutputs(std::filesystem::path dir) : dir_(std::move(dir)) {
    staging_ = dir_ / (".attnscope-staging-" + std::to_string(::getpid()));
    std::error_code ec;
    std::filesystem::remove_all(staging_, ec);  // a leftover of a killed run with the same pid
    if (!std::filesystem::create_directory(staging_, ec))
        throw Error("--out " + dir_.string() + ": cannot create a staging folder: " + ec.message());
}

StagedOutputs::~StagedOutputs() {
    std::error_code ec;
    std::filesystem::remove_all(staging_, ec);
}

std::filesystem::path StagedOutputs::path(const std::string& name) {
    names_.push_back(name);
    return staging_ / name;
}

void StagedOutputs::commit() {
    // Everything that can be checked is checked before the first move, so a refusal leaves the
    // folder as it was; a rename within one folder then fails only on a vanished folder.
    for (const auto& name : names_) {
        std::error_code ec;
        if (std::filesystem::is_directory(dir_ / name, ec))
            throw Error("--out " + (dir_ / name).string() + ": is a folder; nothing was written");
        if (!std::filesystem::is_regular_file(staging_ / name, ec))
            throw Error("--out " + (dir_ / name).string() + ": was not written; nothing was written");
        outputTarget(dir_ / name);  // the output rule: a FIFO or device there is refused
    }
    for (const auto& name : names_) {
        std::error_code ec;
        std::filesystem::rename(staging_ / name, outputTarget(dir_ / name), ec);  // a link's target
        if (ec) throw Error("--out " + (dir_ / name).string() + ": cannot be replaced: " + ec.message());
    }
    committed_ = true;
}

std::vector<std::int64_t> inputIds(const Args& args, const Model& model) {
    const auto ids = args.value("ids");
    const auto text = args.value("text");
    if (ids && text) throw UsageError("give either --ids or --text, not both");
    if (ids) return parseIds(*ids);
    if (text) return model.encodeText(*text);
    throw UsageError("missing input: --ids 3,17,42 or --text STRING");
}

}  // namespace attnscope::cli
