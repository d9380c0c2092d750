// Corpus run folders on disk: creation, and strict reading of shards for merges (see
// corpus_folder.h).
#include "corpus_folder.h"

#include "attnscope/corpus/corpus_result.h"
#include "attnscope/io/input_file.h"
#include "attnscope/runtime/error.h"
#include "io/json_util.h"

#include <limits>
#include <system_error>

namespace attnscope {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Far above any corpus (a record per example is kept in memory), far below what an int indexes.
constexpr std::int64_t kMaxExamples = 100'000'000;
constexpr std::int64_t kMaxHeads = 1'000'000;

// Field checks of one JSON object; every message names the file and the field.
struct Fields {
    const json& object;
    std::string where;  // "DIR/run.json" or "FILE:LINE"

    [[noreturn]] void fail(const std::string& key, const std::string& what) const {
        throw Error(where + ": '" + key + "' " + what);
    }
    const json& at(const std::string& key) const {
        const auto it = object.find(key);
        if (it == object.end()) fail(key, "is missing");
        return *it;
    }
    std::int64_t integer(const json& v, const std::string& key, std::int64_t min, std::int64_t max) const {
        if (!v.is_number_integer()) fail(key, "must be an integer, found " + jsonExcerpt(v));
        if (v.is_number_unsigned() ? v.get<std::uint64_t>() > static_cast<std::uint64_t>(max)
                                   : v.get<std::int64_t>() < min || v.get<std::int64_t>() > max)
            fail(key, "must be between " + std::to_string(min) + " and " + std::to_string(max) + ", found " +
                              jsonExcerpt(v));
        return v.get<std::int64_t>();
    }
    std::int64_t integer(const std::string& key, std::int64_t min, std::int64_t max) const {
        return integer(at(key), key, min, max);
    }
    const std::string& string(const std::string& key) const {
        const json& v = at(key);
        if (!v.is_string()) fail(key, "must be a string, found " + jsonExcerpt(v));
        return v.get_ref<const std::string&>();
    }
    bool boolean(const std::string& key) const {
        const json& v = at(key);
        if (!v.is_boolean()) fail(key, "must be true or false, found " + jsonExcerpt(v));
        return v.get<bool>();
    }
    const json& array(const std::string& key, std::size_t min, std::size_t max) const {
        const json& v = at(key);
        if (!v.is_array()) fail(key, "must be a list, found " + jsonExcerpt(v));
        if (v.size() < min || v.size() > max)
            fail(key, "must have " +
                              (min == max ? std::to_string(min) : std::to_string(min) + " to " + std::to_string(max)) +
                              " entries, found " + std::to_string(v.size()));
        return v;
    }
    double number(const json& v, const std::string& key) const {
        if (!v.is_number()) fail(key, "must be a number, found " + jsonExcerpt(v));
        return v.get<double>();
    }
    // A list of `rows` lists of `columns` numbers (null allowed where nullable).
    void table(const std::string& key, std::size_t rows, std::size_t columns, bool nullable = false) const {
        const json& t = array(key, rows, rows);
        for (const json& row : t) {
            if (!row.is_array() || row.size() != columns)
                fail(key, "must hold lists of " + std::to_string(columns) + " numbers, found " + jsonExcerpt(row));
            for (const json& x : row)
                if (!(nullable && x.is_null())) number(x, key);
        }
    }
};

// A head as run.json writes it: ["block", layer, head].
void checkHead(const Fields& f, const std::string& key, const json& h) {
    if (!h.is_array() || h.size() != 3 || !h[0].is_string())
        f.fail(key, "must hold heads [\"block\", layer, head], found " + jsonExcerpt(h));
    f.integer(h[1], key, 0, kMaxHeads);
    f.integer(h[2], key, 0, kMaxHeads);
}

}  // namespace

void createRunFolder(const fs::path& dir, const char* option) {
    std::error_code ec;
    if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
        throw Error(std::string(option) + " " + dir.string() + ": not a folder (" + option +
                    " names the run folder to create or resume)");
    fs::create_directories(dir, ec);
    if (ec) throw Error(std::string(option) + " " + dir.string() + ": cannot create the folder (" + ec.message() + ")");
}

json readShardRun(const fs::path& dir) {
    const fs::path file = dir / "run.json";
    json run = readJsonObject(file);
    const Fields f{run, file.string()};
    if (f.string("format") != "attnscope-corpus-run") f.fail("format", "must be \"attnscope-corpus-run\"");
    f.integer("version", 1, 1);
    if (!f.at("settings").is_object()) f.fail("settings", "must be an object, found " + jsonExcerpt(run["settings"]));
    const json& shard = f.array("shard", 2, 2);
    const std::int64_t shards = f.integer(shard[1], "shard", 1, kMaxExamples);
    f.integer(shard[0], "shard", 0, shards - 1);
    f.string("model_spec");
    const std::string& output = f.string("output");
    if (output != "class" && output != "sequence" && output != "next-token" && output != "hidden")
        f.fail("output", "must be one of class, sequence, next-token, hidden, found " + jsonExcerpt(run["output"]));
    f.integer("examples", 1, kMaxExamples);
    const json& heads = f.array("heads", 1, kMaxHeads);
    for (const json& h : heads) checkHead(f, "heads", h);
    f.boolean("labelled");
    f.boolean("targets");
    for (const json& b : f.array("bad_lines", 0, kMaxExamples)) {
        if (!b.is_array() || b.size() != 2 || !b[1].is_string())
            f.fail("bad_lines", "must hold [line, \"reason\"] pairs, found " + jsonExcerpt(b));
        f.integer(b[0], "bad_lines", 1, std::numeric_limits<int>::max());
    }
    if (run.contains("stat_keys"))  // absent only in a folder whose first save was interrupted
        for (const json& k : f.array("stat_keys", 0, 1000))
            if (!k.is_string()) f.fail("stat_keys", "must hold names, found " + jsonExcerpt(k));
    if (run.contains("order") && f.string("order") != "importance" && run["order"] != "greedy")
        f.fail("order", "must be \"importance\" or \"greedy\", found " + jsonExcerpt(run["order"]));
    if (run.contains("prune_order"))
        for (const json& h : f.array("prune_order", heads.size(), heads.size())) checkHead(f, "prune_order", h);
    return run;
}

std::map<int, json> readShardRecords(const fs::path& dir, const std::string& name, const json& run) {
    const fs::path file = dir / name;
    std::error_code ec;
    if (!fs::exists(file, ec)) return {};
    const std::string text = readInputFile(file, std::numeric_limits<std::uint64_t>::max(), "record file");
    const std::int64_t examples = run.at("examples").get<std::int64_t>();
    const std::int64_t shard = run.at("shard").at(0).get<std::int64_t>(), shards = run.at("shard").at(1).get<int>();
    const std::size_t heads = run.at("heads").size(), keys = run.value("stat_keys", json::array()).size();
    std::map<int, json> records;
    std::size_t at = 0;
    for (int number = 1; at < text.size(); ++number) {
        const std::size_t end = text.find('\n', at);
        const std::string where = file.string() + ":" + std::to_string(number);
        if (end == std::string::npos)
            throw Error(where + ": the last record is cut short (the shard did not finish writing it; run it again)");
        const json record = parseJson(std::string_view(text).substr(at, end - at), where);
        at = end + 1;
        if (!record.is_object()) throw Error(where + ": not a JSON object");
        const Fields f{record, where};
        const std::int64_t i = f.integer("i", 0, examples - 1);
        if (i % shards != shard)
            f.fail("i", "is example " + std::to_string(i) + ", which is not in shard " + std::to_string(shard) + "/" +
                                std::to_string(shards));
        if (records.count(static_cast<int>(i))) f.fail("i", "repeats example " + std::to_string(i));
        if (name == "stats.jsonl") {
            if (!record.contains("s"))
                throw Error(file.string() + ": example " + std::to_string(i) +
                            " has the statistics of an older AttnScope; run its shard again on the folder");
            f.number(f.at("b"), "b");
            f.table("s", heads, keys, true);
            for (const json& p : f.array("p", heads, heads)) f.integer(p, "p", 0, kPatternClasses - 1);
        } else if (name == "importance.jsonl") {
            f.number(f.at("b"), "b");
            f.number(f.at("bp"), "bp");
            f.table("imp", heads, 3);
        } else {
            f.table("v", heads + 1, 2);
        }
        records.emplace(static_cast<int>(i), record);
    }
    return records;
}

}  // namespace attnscope
