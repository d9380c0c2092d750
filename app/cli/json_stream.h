// JSON files too large to hold as one nlohmann::json: `metrics --out F.json` at 4,096 tokens
// carries an n×n rollout (and flow) per block, 16.8 million numbers. As nlohmann values and one
// dumped string that was 322 MB of text made in memory first, one number per line, each float
// written as its 17-digit double expansion: 3.1 s of a 23 s run (docs/benchmarks.md). Here the
// small parts are still nlohmann values; the matrices go to the file row by row, each value in
// the shortest form that reads back as the same float32.
#pragma once

#include "attnscope/io/atomic_file.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <string_view>

namespace attnscope {
struct HeadMap;
}

namespace attnscope::cli {

// Appends v as JSON: the shortest decimal that reads back as v (std::to_chars), with ".0" added
// to whole numbers so that every value reads as a floating-point number; NaN and ±inf, which
// JSON has no words for, as null (as nlohmann::json writes them).
void appendFloatJson(std::string& out, float v);

// A JSON file written in pieces through AtomicFile (all or nothing, attnscope::Error naming the
// file on a write error), buffered.
class JsonFileWriter {
public:
    explicit JsonFileWriter(const std::filesystem::path& path);
    void raw(std::string_view text);
    // value.dump(indent), its lines after the first indented by `depth` spaces more, so that it
    // nests where raw() left off.
    void value(const nlohmann::json& value, int depth);
    // m as an array of rows, one row per line at `depth` spaces (appendFloatJson's numbers).
    void floatMatrix(const HeadMap& m, int depth);
    void commit();

private:
    void flushIfFull();

    AtomicFile file_;
    std::string buffer_;
    std::string zeros_;  // ",0.0" repeated, for floatMatrix's trailing zeros
};

}  // namespace attnscope::cli
