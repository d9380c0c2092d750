#include "source_blocks.h"

#include "attnscope/analysis/alti.h"
#include "attnscope/analysis/value_norm.h"
#include "attnscope/runtime/error.h"

namespace attnscope::cli {

namespace {
bool altiSource(MapSource s) { return s == MapSource::Alti || s == MapSource::AltiRollout; }
}  // namespace

std::vector<int> sourceBlocks(const Trace& trace, MapSource source, const std::optional<std::string>& block) {
    const auto& blocks = trace.blocks();
    if (block) {
        std::string names;
        for (int b = 0; b < static_cast<int>(blocks.size()); ++b) {
            if (blocks[b].name == *block) return {b};
            names += (names.empty() ? "" : ", ") + blocks[b].name;
        }
        throw Error("--block '" + *block + "' is not a block of this model (its blocks: " + names + ")");
    }
    std::vector<int> all, mixed;
    for (int b = 0; b < static_cast<int>(blocks.size()); ++b) {
        all.push_back(b);
        if (blocks[b].name == "decoder" || blocks[b].name == "cross") mixed.push_back(b);
    }
    if (altiSource(source) && !mixed.empty()) {
        std::string names;
        for (int b : mixed) names += (names.empty() ? "'" : " and '") + blocks[b].name + "'";
        throw Error(std::string("--source ") + sourceName(source) + " is defined for one residual stream: this " +
                    "encoder-decoder's " + names + " blocks mix the decoder's and the encoder's; " +
                    "--block encoder gives the encoder's alone");
    }
    return all;
}

void requireSourceCovered(const Trace& trace, const ModelInfo& info, MapSource source, const std::vector<int>& blocks) {
    if (source == MapSource::Weights || gradientSource(source)) return;
    if (scoreTermSource(source)) {
        for (int b : blocks)
            if (b != 0)
                throw Error(std::string("--source ") + sourceName(source) + " covers the '" + trace.blocks()[0].name +
                            "' block only");
        return;
    }
    for (int b : blocks) {
        const bool covered = altiSource(source) ? hasAltiInputs(trace, b) : hasValues(trace, b);
        if (covered) continue;
        const std::string& name = trace.blocks()[b].name;
        if (altiSource(source) && (name == "decoder" || name == "cross"))
            throw Error(std::string("--source ") + sourceName(source) + " is defined for one residual stream: the '" +
                        name + "' block of this encoder-decoder mixes the decoder's and the encoder's");
        throw Error(std::string("--source ") + sourceName(source) + " is not available for " + info.family + " (its '" +
                    name + "' attention block records no value vectors" + (altiSource(source) ? " and residuals" : "") +
                    ")");
    }
}

}  // namespace attnscope::cli
