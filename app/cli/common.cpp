#include "common.h"

#include "attnscope/runtime/error.h"
#include "attnscope/models/model.h"
#include "attnscope/tokenizer/token_ids.h"

#include <sstream>
#include <unistd.h>

namespace attnscope::cli {

std::shared_ptr<const Model> loadModel(const Args& args) {
    LoadOptions options;
    options.device = parseDeviceChoice(args.value("device").value_or("auto"));
    return Model::load(args.positional(0, "MODEL (a model folder or builtin:NAME)"), options);
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
    }
    for (const auto& name : names_) {
        std::error_code ec;
        std::filesystem::rename(staging_ / name, dir_ / name, ec);
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
