// Helpers shared by the attnscope-cli commands.
#pragma once

#include "args.h"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "attnscope/attention/run_options.h"

namespace attnscope {
class Model;
struct TrainOptions;
}  // namespace attnscope

namespace attnscope::cli {

// Loads positional 0 (a model folder, a file of one, builtin:NAME, or a model id in the Hugging
// Face cache at --revision; io/model_location.h) on --device (default auto), with
// --weights auto|convert|stream, --revision and --progress where the command declares them.
// `index` picks another positional (compare-models takes two models).
std::shared_ptr<const Model> loadModel(const Args& args, std::size_t index = 0);
// The same for a model named by `spec` instead of a positional (distil --teacher).
std::shared_ptr<const Model> loadModelAt(const Args& args, const std::string& spec);

// --capture-dtype compute|float16|bfloat16 and --progress (where declared) into options; `what`
// names the run on the progress line ("forward", "re-run").
void applyRunFlags(const Args& args, RunOptions& options, const std::string& what = "forward");

// --progress: one line on stderr, rewritten in place ("forward: layer 12/32, 18 s left"), ended
// with a newline when the job completes.
Progress stderrProgress(const std::string& what, const std::string& unit);

// --ids "3,17,42" (or "3 17 42") -> ids by attnscope::parseTokenIds's rules; throws
// attnscope::Error "--ids: ..." naming the bad entry.
std::vector<std::int64_t> parseIds(const std::string& text);
// The same for any option's list of whole numbers >= 0; messages name the option and what an
// entry is ("token type").
std::vector<std::int64_t> parseIntegers(const std::string& text, const std::string& option, const std::string& what);

// The model's input from --ids or --text (exactly one of them); throws UsageError otherwise.
std::vector<std::int64_t> inputIds(const Args& args, const Model& model);

// train and distil: --window/--two-sided, --keep, --buckets/--rounds/--seed, --positions
// [--relative-clip] into o (o.attention set first); each flag only where its kind uses it.
void parseKindFlags(const Args& args, TrainOptions& o);

// Creates --out DIR if needed and checks it is a writable folder.
std::filesystem::path prepareOutDir(const std::string& dir);

// A command's several output files, all or none: each is written into a staging folder inside
// DIR (same file system, so the moves are renames) and commit() moves them into place once every
// one is complete and no target is a folder. Destroyed without commit(), the staging folder goes
// and DIR's old files stay as they were.
class StagedOutputs {
public:
    explicit StagedOutputs(std::filesystem::path dir);  // dir exists (prepareOutDir)
    ~StagedOutputs();
    StagedOutputs(const StagedOutputs&) = delete;
    StagedOutputs& operator=(const StagedOutputs&) = delete;

    // Where to write output `name` (a plain file name) for now.
    std::filesystem::path path(const std::string& name);
    // Moves every output into DIR; throws attnscope::Error naming the file that cannot be placed.
    void commit();

private:
    std::filesystem::path dir_, staging_;
    std::vector<std::string> names_;
    bool committed_ = false;
};

}  // namespace attnscope::cli
