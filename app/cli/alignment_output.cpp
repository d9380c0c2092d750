#include "alignment_output.h"

#include "attnscope/attention/trace.h"
#include "attnscope/io/atomic_file.h"
#include "attnscope/runtime/error.h"

#include <sstream>

namespace attnscope::cli {

namespace {

int parseIndex(const std::string& text, const std::string& whole) {
    std::size_t used = 0;
    int value = -1;
    try {
        value = std::stoi(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (text.empty() || used != text.size() || value < 0 || text[0] == '+' || text[0] == '-')
        throw Error("--alignment-heads '" + whole + "': '" + text +
                    "' is not a layer or head index (a whole number >= 0)");
    return value;
}

}  // namespace

std::set<std::string> withAlignmentOptions(std::set<std::string> options) {
    options.insert({"alignment", "alignment-units", "alignment-heads", "alignment-rows"});
    return options;
}

std::optional<AlignmentRequest> parseAlignmentRequest(const Args& args) {
    const auto file = args.value("alignment");
    if (!file) {
        for (const char* o : {"alignment-units", "alignment-heads", "alignment-rows"})
            if (args.value(o)) throw UsageError(std::string("--") + o + " needs --alignment FILE");
        return std::nullopt;
    }
    AlignmentRequest r;
    r.file = *file;
    if (r.file.empty()) throw Error("--alignment: give a file name");
    if (auto u = args.value("alignment-units")) {
        if (*u == "words")
            r.options.units = AlignmentUnits::Words;
        else if (*u == "tokens")
            r.options.units = AlignmentUnits::Tokens;
        else
            throw Error("--alignment-units '" + *u + "' is not one of words, tokens");
    }
    if (auto rows = args.value("alignment-rows")) {
        if (*rows == "input")
            r.options.rows = AlignmentRows::Input;
        else if (*rows == "predicted")
            r.options.rows = AlignmentRows::Predicted;
        else
            throw Error("--alignment-rows '" + *rows + "' is not one of input, predicted");
    }
    if (auto h = args.value("alignment-heads")) {
        if (*h == "all") {
            r.heads = AlignmentRequest::Heads::All;
        } else if (h->rfind("layer:", 0) == 0) {
            r.heads = AlignmentRequest::Heads::Layer;
            r.layer = parseIndex(h->substr(6), *h);
        } else {
            r.heads = AlignmentRequest::Heads::List;
            std::stringstream items(*h);
            std::string item;
            while (std::getline(items, item, ',')) {
                const auto colon = item.find(':');
                if (colon == std::string::npos)
                    throw Error("--alignment-heads '" + *h + "': '" + item +
                                "' is not LAYER:HEAD (or give all, layer:L)");
                r.options.heads.push_back(
                        {parseIndex(item.substr(0, colon), *h), parseIndex(item.substr(colon + 1), *h)});
            }
            if (r.options.heads.empty() || h->back() == ',')
                throw Error("--alignment-heads '" + *h +
                            "': give LAYER:HEAD pairs separated by commas, all, or layer:L");
        }
    }
    return r;
}

Alignment computeAlignment(const Trace& trace, const AlignmentRequest& request) {
    const BlockInfo* cross = nullptr;
    for (const auto& b : trace.blocks())
        if (b.name == "cross") cross = &b;
    if (!cross) throw Error("--alignment needs an encoder-decoder model; this one has no cross-attention");
    AlignmentOptions options = request.options;
    if (request.heads == AlignmentRequest::Heads::All || request.heads == AlignmentRequest::Heads::Layer) {
        if (request.heads == AlignmentRequest::Heads::Layer && request.layer >= cross->layers)
            throw Error("--alignment-heads layer:" + std::to_string(request.layer) + ": the cross block has layers 0-" +
                        std::to_string(cross->layers - 1));
        for (int l = 0; l < cross->layers; ++l)
            if (request.heads == AlignmentRequest::Heads::All || l == request.layer)
                for (int h = 0; h < cross->heads; ++h) options.heads.push_back({l, h});
    }
    try {
        Alignment a = alignTrace(trace, options);
        if (request.heads == AlignmentRequest::Heads::All) a.heads = "every head of every layer";
        if (request.heads == AlignmentRequest::Heads::Layer)
            a.heads = "every head of layer " + std::to_string(request.layer);
        return a;
    } catch (const Error& e) {
        throw Error(std::string("--alignment-heads: ") + e.what());
    }
}

void writeAlignmentFile(const AlignmentRequest& request, const Alignment& alignment) {
    writeFileAtomically(request.file, pharaohLine(alignment) + "\n");
}

}  // namespace attnscope::cli
