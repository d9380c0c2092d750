#include "attnscope/analysis/map_source.h"

#include "attnscope/analysis/alti.h"
#include "attnscope/analysis/value_norm.h"
#include "attnscope/attention/score_terms.h"
#include "attnscope/runtime/error.h"

namespace attnscope {

const char* sourceName(MapSource source) {
    switch (source) {
        case MapSource::Weights: return "weights";
        case MapSource::ValueNorm: return "value-norm";
        case MapSource::ValueNormLayer: return "value-norm-layer";
        case MapSource::Alti: return "alti";
        case MapSource::AltiRollout: return "alti-rollout";
        case MapSource::GradWeighted: return "grad-weighted";
        case MapSource::Relevance: return "relevance";
        case MapSource::ScoreC2C: return "score-c2c";
        case MapSource::ScoreC2P: return "score-c2p";
        case MapSource::ScoreP2C: return "score-p2c";
    }
    return "?";
}

const char* sourceLabel(MapSource source) {
    switch (source) {
        case MapSource::Weights: return "Weights";
        case MapSource::ValueNorm: return "Value-weighted";
        case MapSource::ValueNormLayer: return "Value-weighted (layer)";
        case MapSource::Alti: return "ALTI";
        case MapSource::AltiRollout: return "ALTI rollout";
        case MapSource::GradWeighted: return "Gradient \u00d7 attention";
        case MapSource::Relevance: return "Relevance";
        case MapSource::ScoreC2C: return "Score: content \u2192 content (c2c)";
        case MapSource::ScoreC2P: return "Score: content \u2192 position (c2p)";
        case MapSource::ScoreP2C: return "Score: position \u2192 content (p2c)";
    }
    return "?";
}

MapSource parseMapSource(const std::string& name) {
    std::string accepted;
    for (MapSource s : kMapSources) {
        if (name == sourceName(s)) return s;
        accepted += (accepted.empty() ? "" : ", ") + std::string(sourceName(s));
    }
    throw Error("unknown map source '" + name + "' (accepted: " + accepted + ")");
}

HeadMap sourceMap(const Trace& trace, MapSource source, int block, int layer, int head) {
    switch (source) {
        case MapSource::Weights: return trace.map(block, layer, head);
        case MapSource::ValueNorm: return valueNormMap(trace, block, layer, head);
        case MapSource::ValueNormLayer: return valueNormLayerMap(trace, block, layer);
        case MapSource::Alti: return altiMap(trace, block, layer);
        case MapSource::AltiRollout: return altiRolloutMap(trace, block, layer);
        case MapSource::ScoreC2C:
        case MapSource::ScoreC2P:
        case MapSource::ScoreP2C: return scoreTermMap(trace, scoreTermOf(source), block, layer, head);
        case MapSource::GradWeighted:
        case MapSource::Relevance: break;
    }
    throw Error(std::string(sourceName(source)) +
                " needs a backward pass through the model for a target token or class; it is not computed from a "
                "recorded forward (analysis/gradient_sources.h)");
}

}  // namespace attnscope
