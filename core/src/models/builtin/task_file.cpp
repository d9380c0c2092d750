#include "task_file.h"

#include "attnscope/io/input_file.h"
#include "attnscope/runtime/error.h"
#include "io/json_util.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <set>
#include <sstream>

namespace attnscope::builtin {

std::vector<std::string> splitUnits(const std::string& text, bool perCharacter) {
    std::vector<std::string> out;
    if (perCharacter) {
        for (std::size_t i = 0; i < text.size();) {
            std::size_t len = 1;
            while (i + len < text.size() && (static_cast<unsigned char>(text[i + len]) & 0xC0) == 0x80) ++len;
            out.push_back(text.substr(i, len));
            i += len;
        }
        return out;
    }
    std::string cleaned;
    for (char c : text) {
        if (std::string(".,!?;:\"").find(c) != std::string::npos) c = ' ';
        cleaned += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    }
    std::istringstream words(cleaned);
    std::string word;
    while (words >> word) out.push_back(word);
    return out;
}

namespace {

std::string field(const nlohmann::json& j, const char* key, const std::string& where, bool integerOk) {
    const auto it = j.find(key);
    if (it == j.end()) throw Error(where + ": no \"" + key + "\"");
    if (integerOk && it->is_number_integer()) return std::to_string(it->get<long long>());
    if (!it->is_string()) throw Error(where + ": \"" + key + "\" must be a string, found " + jsonExcerpt(*it));
    const std::string value = it->get<std::string>();
    if (value.empty()) throw Error(where + ": \"" + key + "\" is empty");
    return value;
}

}  // namespace

FileTask readTaskFile(const std::filesystem::path& file, const std::string& vocabulary) {
    if (vocabulary != "auto" && vocabulary != "char" && vocabulary != "word")
        throw Error("vocabulary '" + vocabulary + "' is not one of auto, char, word");
    refuseNonRegularFile(file);  // the input rule: no FIFO that hangs, no /dev/zero read without end
    std::ifstream in(file, std::ios::binary);
    if (!in) throw Error(file.string() + ": cannot open the task file");
    FileTask task;
    std::vector<FileExample> all;
    int kind = 0;  // 1 classification, 2 seq2seq
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.find_first_not_of(" \t") == std::string::npos) continue;
        const std::string where = file.string() + ":" + std::to_string(number);
        nlohmann::json j;
        try {
            j = nlohmann::json::parse(line);
        } catch (const nlohmann::json::exception&) {
            throw Error(where + ": not a JSON object (each line is {\"text\", \"label\"} or {\"source\", \"target\"})");
        }
        if (!j.is_object()) throw Error(where + ": not a JSON object, found " + jsonExcerpt(j));
        const int lineKind = j.contains("text") || j.contains("label")      ? 1
                             : j.contains("source") || j.contains("target") ? 2
                                                                            : 0;
        if (lineKind == 0) throw Error(where + ": has neither \"text\"/\"label\" nor \"source\"/\"target\"");
        if (kind != 0 && lineKind != kind)
            throw Error(where + ": mixes " + (lineKind == 1 ? "classification" : "sequence-to-sequence") +
                        " with the " + (kind == 1 ? "classification" : "sequence-to-sequence") +
                        " lines before it; a file holds one kind");
        kind = lineKind;
        FileExample ex;
        ex.line = number;
        ex.input = field(j, kind == 1 ? "text" : "source", where, false);
        ex.output = field(j, kind == 1 ? "label" : "target", where, kind == 1);
        all.push_back(ex);
    }
    if (all.size() < 2) throw Error(file.string() + ": needs at least 2 examples, found " + std::to_string(all.size()));
    task.seq2seq = kind == 2;
    task.perCharacter = vocabulary == "char" || (vocabulary == "auto" && task.seq2seq);
    std::set<std::string> seen, labels;
    const auto addUnits = [&](const FileExample& ex, const std::string& text, const char* what) {
        const auto units = splitUnits(text, task.perCharacter);
        if (units.empty())
            throw Error(file.string() + ":" + std::to_string(ex.line) + ": the " + what + " has no " +
                        (task.perCharacter ? "characters" : "words"));
        for (const auto& u : units)
            if (seen.insert(u).second) task.symbols.push_back(u);
    };
    for (const FileExample& ex : all) {
        addUnits(ex, ex.input, task.seq2seq ? "source" : "text");
        if (task.seq2seq)
            addUnits(ex, ex.output, "target");
        else if (labels.insert(ex.output).second)
            task.labels.push_back(ex.output);
        (isHeldOut(ex.input) ? task.heldOut : task.train).push_back(ex);
    }
    if (task.heldOut.empty()) {  // a small file: its last example is held out
        task.heldOut.push_back(task.train.back());
        task.train.pop_back();
    }
    if (task.train.empty()) throw Error(file.string() + ": every example is held out; add more examples");
    if (!task.seq2seq && task.labels.size() < 2)
        throw Error(file.string() + ": classification needs at least 2 distinct labels, found only '" +
                    task.labels.front() + "'");
    return task;
}

}  // namespace attnscope::builtin
