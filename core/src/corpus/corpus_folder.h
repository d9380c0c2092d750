// Corpus run folders on disk (private to core/src/corpus): creating one, and reading a shard's
// run.json and records with every field typed and range-checked, so that a damaged or edited
// folder is refused with a message naming the file (and line) instead of being merged.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <string>

namespace attnscope {

// Creates the run folder (and its parents). Throws attnscope::Error "DIR: not a folder ..." when
// the path is an existing file, or naming the folder when it cannot be created.
void createRunFolder(const std::filesystem::path& dir, const char* option);

// dir/run.json, checked completely: format, version, shard [K, N], model_spec, output, examples,
// heads, labelled, targets, bad_lines, stat_keys, settings and the optional order and
// prune_order. Throws attnscope::Error "DIR/run.json: 'FIELD' ..." for the first field that is
// missing, mistyped or out of range.
nlohmann::json readShardRun(const std::filesystem::path& dir);

// A shard's record file name ("stats.jsonl", "importance.jsonl", "pruning.jsonl") read strictly
// against its run.json: every line complete, a JSON object, its "i" an example of this shard,
// its values of the shape the run's heads and statistics give. A missing file has no records.
// Throws attnscope::Error "FILE:LINE: ..." naming the first bad line.
std::map<int, nlohmann::json> readShardRecords(const std::filesystem::path& dir, const std::string& name,
                                               const nlohmann::json& run);

}  // namespace attnscope
