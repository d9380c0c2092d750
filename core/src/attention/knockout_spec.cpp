#include "attnscope/attention/knockout_spec.h"

#include "attnscope/runtime/error.h"
#include "attnscope/tokenizer/token_ids.h"

#include <algorithm>
#include <sstream>

namespace attnscope {

namespace {

int clampedLayer(std::int64_t layer) { return static_cast<int>(std::min<std::int64_t>(layer, 1 << 30)); }

std::string joined(const std::vector<std::int64_t>& values) {
    std::string out;
    for (std::size_t i = 0; i < values.size(); ++i) out += (i ? "," : "") + std::to_string(values[i]);
    return out;
}

}  // namespace

std::vector<Knockout> parseKnockouts(const std::string& spec) {
    std::vector<Knockout> out;
    std::stringstream all(spec);
    std::string one;
    while (std::getline(all, one, ';')) {
        if (one.find_first_not_of(" \t") == std::string::npos && !out.empty()) continue;  // a trailing ';'
        const auto colon = one.find(':'), at = one.find('@');
        if (colon == std::string::npos || at == std::string::npos || at < colon)
            throw Error("'" + one + "' is not QUERIES:KEYS@LAYERS (e.g. 5:0,1@2-4)");
        Knockout k;
        k.queries = parseNumberList(one.substr(0, colon), "query position");
        k.keys = parseNumberList(one.substr(colon + 1, at - colon - 1), "key position");
        const std::string layers = one.substr(at + 1);
        const auto dash = layers.find('-');
        const auto range = parseNumberList(
                dash == std::string::npos ? layers : layers.substr(0, dash) + "," + layers.substr(dash + 1), "layer");
        if (range.empty() || range.size() > 2) throw Error("'" + one + "': layers are A or A-B");
        k.firstLayer = clampedLayer(range.front());
        k.lastLayer = clampedLayer(range.back());
        out.push_back(std::move(k));
    }
    if (out.empty()) throw Error("no knockout given (QUERIES:KEYS@LAYERS, e.g. 5:0,1@2-4)");
    return out;
}

std::string formatKnockouts(const std::vector<Knockout>& knockouts) {
    std::string out;
    for (std::size_t i = 0; i < knockouts.size(); ++i) {
        const Knockout& k = knockouts[i];
        out += (i ? ";" : "") + joined(k.queries) + ":" + joined(k.keys) + "@" + std::to_string(k.firstLayer);
        if (k.lastLayer != k.firstLayer) out += "-" + std::to_string(k.lastLayer);
    }
    return out;
}

}  // namespace attnscope
