// The list of per-head metrics (metric_list.h).
#include "attnscope/analysis/metric_list.h"

#include "attnscope/runtime/error.h"

namespace attnscope {

const std::vector<HeadMetricInfo>& headMetricList() {
    static const std::vector<HeadMetricInfo> list = {
        {"entropy", "entropy", "nats", [](const HeadMetrics& m) { return m.entropy; }},
        {"mean_distance", "mean attention distance", "tokens", [](const HeadMetrics& m) { return m.meanDistance; }},
        {"first_token", "attention to the first token", "share", [](const HeadMetrics& m) { return m.firstToken; }},
        {"separator", "attention to separators", "share", [](const HeadMetrics& m) { return m.separator; }},
        {"diagonal", "diagonal score", "score", [](const HeadMetrics& m) { return m.scores.diagonal; }},
        {"previous", "previous-token score", "score", [](const HeadMetrics& m) { return m.scores.previous; }},
        {"global", "global score", "score", [](const HeadMetrics& m) { return m.scores.global; }},
        {"local", "local score", "score", [](const HeadMetrics& m) { return m.scores.local; }},
        {"sparse", "sparse score", "score", [](const HeadMetrics& m) { return m.scores.sparse; }},
        {"kl_dot_linear", "KL dot ‖ linear", "nats", [](const HeadMetrics& m) { return m.klDotLinear; }},
    };
    return list;
}

const HeadMetricInfo& headMetric(const std::string& id) {
    std::string ids;
    for (const HeadMetricInfo& m : headMetricList()) {
        if (m.id == id) return m;
        ids += (ids.empty() ? "" : ", ") + m.id;
    }
    throw Error("unknown head metric '" + id + "' (known: " + ids + ")");
}

}  // namespace attnscope
