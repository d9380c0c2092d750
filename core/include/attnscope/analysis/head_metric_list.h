// The per-head metrics core offers, as one list: every table, CSV/JSON writer and layer × head
// metric map reads its columns from here, so a metric added to HeadMetrics appears everywhere by
// adding one entry. The pattern class (text) is not in it; see patternName.
#pragma once

#include "attnscope/analysis/detectors.h"
#include "attnscope/analysis/trace_metrics.h"

#include <string>
#include <vector>

namespace attnscope {

struct HeadMetricInfo {
    const char* key;      // JSON / CSV name, e.g. "entropy", "induction"
    const char* title;    // short column title, e.g. "Entropy"
    const char* unit;     // "nats", "tokens", or "" for a share in [0, 1]
    const char* tooltip;  // one sentence: what the number means
    int decimals;         // for display
    bool detector;        // true for the head detectors (NaN until attachDetectors)
    double (*value)(const HeadMetrics&);
};

// Entropy, mean distance, first token, sink score, separator, the pattern scores (diagonal, previous,
// global, local, sparse), KL dot‖linear, then the detectors: previous token, duplicate token,
// induction, first token (sink).
const std::vector<HeadMetricInfo>& headMetricList();
// The entry with this key; throws attnscope::Error listing the keys when there is none.
const HeadMetricInfo& headMetric(const std::string& key);

// Copies each head's detector scores into the metrics of the same (block, layer, head); heads
// the report lacks keep NaN.
void attachDetectors(std::vector<HeadMetrics>& metrics, const std::vector<HeadDetectors>& detectors);

}  // namespace attnscope
