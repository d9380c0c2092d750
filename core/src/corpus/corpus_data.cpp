// Reading corpus files and preparing their lines for a model (see corpus_data.h).
#include "attnscope/corpus/corpus_data.h"

#include "attnscope/io/input_file.h"
#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <fstream>

namespace attnscope {

namespace {

bool isBlank(const std::string& s) {
    return std::all_of(s.begin(), s.end(), [](unsigned char c) { return c == ' ' || c == '\t' || c == '\r'; });
}

// One JSONL line -> CorpusLine; throws Error(reason) for a bad line.
CorpusLine parseJsonLine(const std::string& text, int number) {
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
        std::string what = e.what();
        const auto colon = what.rfind(": ");
        throw Error("not JSON (" + (colon == std::string::npos ? what : what.substr(colon + 2)) + ")");
    }
    if (!j.is_object()) throw Error("not a JSON object");
    CorpusLine line;
    line.line = number;
    const bool hasText = j.contains("text") && !j["text"].is_null();
    const bool hasIds = j.contains("ids") && !j["ids"].is_null();
    if (hasText == hasIds) throw Error(hasText ? "both \"text\" and \"ids\" (give one)" : "no \"text\" or \"ids\"");
    if (hasText) {
        if (!j["text"].is_string()) throw Error("\"text\" is not a string");
        line.text = j["text"].get<std::string>();
        if (isBlank(line.text)) throw Error("\"text\" is empty");
    } else {
        if (!j["ids"].is_array() || j["ids"].empty()) throw Error("\"ids\" is not a non-empty array of token ids");
        for (const auto& v : j["ids"]) {
            if (!v.is_number_integer() || v.get<std::int64_t>() < 0)
                throw Error("\"ids\" holds " + v.dump() + ", not a token id");
            line.ids.push_back(v.get<std::int64_t>());
        }
    }
    if (j.contains("label") && !j["label"].is_null()) {
        const auto& l = j["label"];
        if (l.is_string())
            line.label = l.get<std::string>();
        else if (l.is_number_integer() && l.get<std::int64_t>() >= 0)
            line.label = std::to_string(l.get<std::int64_t>());
        else
            throw Error("\"label\" is neither a class name nor a class index");
    }
    if (j.contains("target") && !j["target"].is_null()) {
        if (!j["target"].is_string()) throw Error("\"target\" is not a string");
        line.target = j["target"].get<std::string>();
    }
    return line;
}

void badLine(CorpusFile& file, BadLinePolicy policy, int line, const std::string& reason) {
    if (policy == BadLinePolicy::Refuse) throw Error(file.path.string() + ":" + std::to_string(line) + ": " + reason);
    file.bad.push_back({line, reason});
}

}  // namespace

CorpusFile readCorpus(const std::filesystem::path& path, const CorpusReadOptions& options) {
    refuseNonRegularFile(path);  // the input rule: no FIFO that hangs, no /dev/zero read without end
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(path.string() + ": cannot be read");
    CorpusFormat format = options.format;
    if (format == CorpusFormat::Auto) {
        const std::string ext = path.extension().string();
        format = ext == ".jsonl" || ext == ".json" ? CorpusFormat::Jsonl : CorpusFormat::Text;
    }
    CorpusFile file;
    file.path = path;
    std::string text;
    for (int number = 1; std::getline(in, text); ++number) {
        if (!text.empty() && text.back() == '\r') text.pop_back();
        if (isBlank(text)) continue;
        if (format == CorpusFormat::Text) {
            file.lines.push_back({number, text, {}, std::nullopt, std::nullopt});
            continue;
        }
        try {
            file.lines.push_back(parseJsonLine(text, number));
        } catch (const Error& e) {
            badLine(file, options.badLines, number, e.what());
        }
    }
    if (in.bad()) throw Error(path.string() + ": cannot be read");
    return file;
}

std::vector<CorpusExample> prepareCorpus(const Model& model, CorpusFile& file, const PrepareOptions& options) {
    const int maxTokens = options.maxTokens > 0 ? options.maxTokens : model.info().maxPositions;
    std::vector<CorpusExample> out;
    for (const CorpusLine& line : file.lines) {
        CorpusExample ex;
        ex.line = line.line;
        ex.text = line.text;
        try {
            ex.input.ids = line.ids.empty() ? model.encodeText(line.text) : line.ids;
            // Checked here, so that a bad id is a bad line like any other (skipped or refused
            // with its number), not a failure of the whole run at the example's forward.
            const std::int64_t vocab = model.info().vocabSize;
            for (std::int64_t id : line.ids)
                if (vocab > 0 && id >= vocab)
                    throw Error("token id " + std::to_string(id) + " is outside the vocabulary (0.." +
                                std::to_string(vocab - 1) + ")");
            const int n = static_cast<int>(ex.input.ids.size());
            if (maxTokens > 0 && n > maxTokens)
                throw Error(std::to_string(n) + " tokens, more than the maximum of " + std::to_string(maxTokens));
            if (line.label) {
                const auto& labels = options.classLabels;
                if (labels.empty()) throw Error("has a label, but the model is no classifier");
                auto it = std::find(labels.begin(), labels.end(), *line.label);
                if (it != labels.end()) {
                    ex.label = static_cast<int>(it - labels.begin());
                } else if (!line.label->empty() && std::all_of(line.label->begin(), line.label->end(), ::isdigit) &&
                           line.label->size() < 9 && std::stoi(*line.label) < static_cast<int>(labels.size())) {
                    ex.label = std::stoi(*line.label);
                } else {
                    std::string names;
                    for (const auto& l : labels) names += (names.empty() ? "" : ", ") + l;
                    throw Error("label '" + *line.label + "' is not one of " + names);
                }
            }
            if (line.target) {
                if (!model.info().encoderDecoder) throw Error("has a target, but the model is no encoder-decoder");
                ex.targetIds = model.encodeTarget(*line.target);
            }
        } catch (const Error& e) {
            badLine(file, options.badLines, line.line, e.what());
            continue;
        }
        ex.index = static_cast<int>(out.size());
        out.push_back(std::move(ex));
    }
    std::sort(file.bad.begin(), file.bad.end(), [](const BadLine& a, const BadLine& b) { return a.line < b.line; });
    return out;
}

}  // namespace attnscope
