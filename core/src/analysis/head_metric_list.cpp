#include "attnscope/analysis/head_metric_list.h"

#include "attnscope/runtime/error.h"

#include <map>
#include <tuple>

namespace attnscope {

const std::vector<HeadMetricInfo>& headMetricList() {
    static const std::vector<HeadMetricInfo> list = {
            {"entropy", "Entropy", "nats", "Mean over queries of the row entropy −Σ p log p, in nats (low = focused)",
             3, false, [](const HeadMetrics& m) { return m.entropy; }},
            {"mean_distance", "Distance", "tokens", "Mean over queries of Σ p·|query − key|, in tokens", 2, false,
             [](const HeadMetrics& m) { return m.meanDistance; }},
            {"first_token", "To first token", "",
             "Mean attention paid to the first token of this input (share of each row, 0–1)", 3, false,
             [](const HeadMetrics& m) { return m.firstToken; }},
            {"sink", "Sink score", "",
             "Mean attention on the first token over the queries after it (attention sink; a sink head scores > 0.3)",
             3, false, [](const HeadMetrics& m) { return m.sink; }},
            {"separator", "To separator", "",
             "Mean attention paid to separator tokens ([SEP], </s>, <|endoftext|> …), 0–1", 3, false,
             [](const HeadMetrics& m) { return m.separator; }},
            {"diagonal", "Diagonal score", "", "Mean attention of each query on itself (pattern score D)", 3, false,
             [](const HeadMetrics& m) { return m.scores.diagonal; }},
            {"previous", "Previous score", "",
             "Mean attention of each query on the key before it, on this input (pattern score P)", 3, false,
             [](const HeadMetrics& m) { return m.scores.previous; }},
            {"global", "Global score", "", "The largest mean attention one key column takes (pattern score G)", 3,
             false, [](const HeadMetrics& m) { return m.scores.global; }},
            {"local", "Local score", "", "Mean attention within the local radius of each query (pattern score W)", 3,
             false, [](const HeadMetrics& m) { return m.scores.local; }},
            {"sparse", "Sparse score", "", "Mean attention on each query's few largest keys (pattern score S)", 3,
             false, [](const HeadMetrics& m) { return m.scores.sparse; }},
            {"kl_dot_linear", "KL dot‖linear", "nats",
             "Mean row KL from the dot-product map to linear attention (elu+1 features), in nats; empty where the "
             "logits add a soft-cap, ALiBi or a position bias (linear attention has no place for them)",
             3, false, [](const HeadMetrics& m) { return m.klDotLinear; }},
            {"det_previous_token", "Previous-token det.", "",
             "Detector (TransformerLens): share of attention on the previous token, on the detector's repeated random probe",
             3, true, [](const HeadMetrics& m) { return m.detectors.previousToken; }},
            {"det_duplicate_token", "Duplicate-token det.", "",
             "Detector (TransformerLens): share of attention on an earlier copy of the same token (second half of the probe)",
             3, true, [](const HeadMetrics& m) { return m.detectors.duplicateToken; }},
            {"det_induction", "Induction det.", "",
             "Detector (TransformerLens): share of attention on the token after an earlier copy of the current token (probe's second half)",
             3, true, [](const HeadMetrics& m) { return m.detectors.induction; }},
            {"det_first_token", "Sink det.", "",
             "Detector: share of attention on the probe's first token (attention sink), rows after the first", 3, true,
             [](const HeadMetrics& m) { return m.detectors.firstToken; }},
    };
    return list;
}

const HeadMetricInfo& headMetric(const std::string& key) {
    std::string keys;
    for (const HeadMetricInfo& m : headMetricList()) {
        if (key == m.key) return m;
        keys += (keys.empty() ? "" : ", ") + std::string(m.key);
    }
    throw Error("unknown head metric '" + key + "' (known: " + keys + ")");
}

void attachDetectors(std::vector<HeadMetrics>& metrics, const std::vector<HeadDetectors>& detectors) {
    std::map<std::tuple<std::string, int, int>, DetectorScores> byHead;
    for (const HeadDetectors& d : detectors) byHead[{d.block, d.layer, d.head}] = d.scores;
    for (HeadMetrics& m : metrics) {
        const auto it = byHead.find({m.block, m.layer, m.head});
        m.detectors = it == byHead.end() ? DetectorScores{} : it->second;
    }
}

}  // namespace attnscope
