// The per-head metrics the views can show, order, colour or list (the model view's ordering and
// its layer × head map): one entry per number of HeadMetrics (trace_metrics.h). A metric added
// to HeadMetrics (a detector score, say) becomes visible in every such view by one entry here.
#pragma once

#include "attnscope/analysis/trace_metrics.h"

#include <functional>
#include <string>
#include <vector>

namespace attnscope {

struct HeadMetricInfo {
    std::string id;     // stable, for settings and files: "entropy", "mean_distance", ...
    std::string name;   // for display: "entropy", "mean attention distance", ...
    std::string unit;   // "nats", "tokens", "share" (of each row's attention, 0..1), "score" (0..1)
    std::function<double(const HeadMetrics&)> value;
};

// Every metric, in the order views list them.
const std::vector<HeadMetricInfo>& headMetricList();
// The entry with this id; throws attnscope::Error listing the ids when there is none.
const HeadMetricInfo& headMetric(const std::string& id);

}  // namespace attnscope
