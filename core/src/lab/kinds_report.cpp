#include "attnscope/lab/kinds_report.h"

#include "attnscope/analysis/training_monitors.h"
#include "attnscope/io/atomic_file.h"
#include "attnscope/runtime/error.h"
#include "attention/attention_ops.h"
#include "attention/kinds.h"
#include "attention/linear_attention.h"
#include "attnscope/io/csv_table.h"
#include "runtime/memory.h"

#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <sstream>

namespace attnscope {

namespace {

// Freed heap memory goes back to the kernel first (the CLI keeps it resident for speed, see
// runtime/allocator.h), so that what a measured call touches shows as new resident memory.
void resetPeakRss() {
#ifdef __GLIBC__
    malloc_trim(0);
#endif
    std::ofstream("/proc/self/clear_refs") << "5";
}

// VmHWM (peak) or VmRSS (now) of this process in MiB, or -1 when /proc is not there.
double rssMiB(const char* field) {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind(field, 0) == 0) return std::stod(line.substr(std::string(field).size())) / 1024.0;
    return -1;
}

// The settings each kind is trained and measured with.
void applyKind(const std::string& kind, TrainOptions& o, std::string& description) {
    o.attention = parseAttentionKind(kind);
    o.sparse = SparseOptions{};
    switch (o.attention) {
        case AttentionKind::Local:
            o.sparse.window = 4, o.sparse.twoSided = true, description = "window 4 two-sided";
            break;
        case AttentionKind::TopK: o.sparse.keep = 4, description = "k 4"; break;
        case AttentionKind::Lsh: o.sparse.buckets = 4, o.sparse.rounds = 2, description = "4 buckets 2 rounds"; break;
        case AttentionKind::Additive: description = "width 16"; break;
        case AttentionKind::Linear: description = "elu+1"; break;
        case AttentionKind::Hybrid: description = "learned gate; width 16"; break;
        default: description = "scale 1/sqrt(d)";
    }
}

std::string written(const Trace& trace) {
    if (!trace.classLabels().empty()) {
        const auto& p = trace.classProbabilities();
        return trace.classLabels()[static_cast<std::size_t>(std::max_element(p.begin(), p.end()) - p.begin())];
    }
    std::string out;
    for (const auto& t : trace.outputTokens()) out += t;
    return out;
}

bool matches(const Trace& trace, const std::string& expected) {
    if (written(trace) == expected) return true;
    std::string spaced;  // word vocabularies
    for (const auto& t : trace.outputTokens()) spaced += (spaced.empty() ? "" : " ") + t;
    return trace.classLabels().empty() && spaced == expected;
}

int bucketOf(int len, int lo, int hi) { return std::min(2, hi > lo ? (len - lo) * 3 / (hi - lo + 1) : 0); }

struct RunScore {
    double accuracy = 0;
    double bucket[3] = {0, 0, 0};
};

// Accuracy overall and in three equal ranges of input length (tokens, [lo, hi]).
RunScore score(const Model& model, const std::vector<std::pair<std::string, std::string>>& examples, int lo, int hi) {
    RunScore s;
    int right[3] = {0, 0, 0}, count[3] = {0, 0, 0}, total = 0;
    for (const auto& [input, expected] : examples) {
        const auto ids = model.encodeText(input);
        const auto trace = model.forward(ids);
        const bool ok = matches(*trace, expected);
        const int len = static_cast<int>(ids.size());
        const int b = bucketOf(len, lo, hi);
        right[b] += ok, ++count[b], total += ok;
    }
    s.accuracy = static_cast<double>(total) / std::max<std::size_t>(1, examples.size());
    for (int b = 0; b < 3; ++b) s.bucket[b] = count[b] ? static_cast<double>(right[b]) / count[b] : -1;
    return s;
}

std::string number(double v) {
    char b[64];
    std::snprintf(b, sizeof b, "%.6g", v);
    return b;
}

void writeCsvs(const std::filesystem::path& out, const KindsReport& r) {
    std::ostringstream k;
    k << "kind,parameters,parameter_count,accuracy_mean,accuracy_spread,length_buckets,accuracy_short,"
         "accuracy_medium,accuracy_long,seconds_per_epoch,peak_rss_mib,mean_entropy\n";
    for (const KindRow& row : r.kinds)
        k << row.kind << "," << row.parameters << "," << row.parameterCount << "," << number(row.accuracyMean) << ","
          << number(row.accuracySpread) << "," << row.lengthBuckets << "," << number(row.accuracyShort) << ","
          << number(row.accuracyMedium) << "," << number(row.accuracyLong) << "," << number(row.secondsPerEpoch) << ","
          << number(row.peakRssMiB) << "," << number(row.meanEntropy) << "\n";
    writeFileAtomically(out / "kinds.csv", k.str());
    std::ostringstream s;
    s << "kind,n,seconds,peak_extra_mib,note\n";
    for (const ScalingRow& row : r.scaling)
        s << row.kind << "," << row.n << "," << number(row.seconds) << "," << number(row.peakExtraMiB) << ","
          << row.note << "\n";
    writeFileAtomically(out / "scaling.csv", s.str());
}

}  // namespace

std::uint64_t kindForwardBytes(const std::string& kind, int n) {
    const auto map = static_cast<std::uint64_t>(n) * static_cast<std::uint64_t>(n) * 4;  // one n x n float map
    // Measured peaks (docs/kinds.md, n = 4,096-16,384): additive 2.0 maps, local/topk/lsh 5.2-5.5,
    // hybrid 6.0; the blocked dot forward far less. Rounded up, so a refusal errs on the safe side.
    switch (parseAttentionKind(kind)) {
        case AttentionKind::Linear: return static_cast<std::uint64_t>(n) * 32 * 4 * 8;  // a few [n, d] features
        case AttentionKind::Dot: return 2 * map;
        case AttentionKind::Additive: return 3 * map;
        default: return 7 * map;  // logits, kept mask, weights, the softmax's temporaries (hybrid: both kinds)
    }
}

// A row measured, or -1s and the reason when the memory the call needs is not available.
ScalingRow scalingRow(const std::string& kind, int n) {
    const std::uint64_t need = kindForwardBytes(kind, n);
    const auto available = availableBytes(c10::Device(c10::kCPU));
    if (available && need > *available) {
        ScalingRow row;
        row.kind = kind;
        row.n = n;
        row.seconds = row.peakExtraMiB = -1;
        char note[160];
        std::snprintf(note, sizeof note, "not measured: needs ~%.1f GiB; %.1f GiB available", need / 1073741824.0,
                      *available / 1073741824.0);
        row.note = note;
        return row;
    }
    measureKindForward(kind, std::min(n, 64));  // warm-up: first-call costs out of the figures
    return measureKindForward(kind, n);
}

KindsReport readKindsReport(const std::filesystem::path& folder) {
    KindsReport r;
    const CsvTable k = CsvTable::read(folder / "kinds.csv");
    for (std::size_t i = 0; i < k.rows(); ++i) {
        KindRow row;
        row.kind = k.text(i, "kind");
        row.parameters = k.text(i, "parameters");
        row.parameterCount = static_cast<long long>(k.number(i, "parameter_count"));
        row.accuracyMean = k.number(i, "accuracy_mean");
        row.accuracySpread = k.number(i, "accuracy_spread");
        row.lengthBuckets = k.text(i, "length_buckets");
        row.accuracyShort = k.number(i, "accuracy_short");
        row.accuracyMedium = k.number(i, "accuracy_medium");
        row.accuracyLong = k.number(i, "accuracy_long");
        row.secondsPerEpoch = k.number(i, "seconds_per_epoch");
        row.peakRssMiB = k.number(i, "peak_rss_mib");
        row.meanEntropy = k.number(i, "mean_entropy");
        r.kinds.push_back(row);
    }
    std::error_code ec;
    if (!std::filesystem::exists(folder / "scaling.csv", ec)) return r;
    const CsvTable s = CsvTable::read(folder / "scaling.csv");
    const bool notes = std::find(s.header().begin(), s.header().end(), "note") != s.header().end();
    for (std::size_t i = 0; i < s.rows(); ++i) {
        ScalingRow row;
        row.kind = s.text(i, "kind");
        row.n = static_cast<int>(s.number(i, "n"));
        row.seconds = s.number(i, "seconds");
        row.peakExtraMiB = s.number(i, "peak_extra_mib");
        if (notes) row.note = s.text(i, "note");
        r.scaling.push_back(row);
    }
    return r;
}

ScalingRow measureKindForward(const std::string& kind, int n) {
    const AttentionKind k = parseAttentionKind(kind);
    c10::InferenceMode guard;
    const std::int64_t d = 32, w = 16;
    const at::Tensor q = at::randn({1, n, d}), key = at::randn({1, n, d}), v = at::randn({1, n, d});
    const at::Tensor wq = at::randn({d, w}) / std::sqrt(double(d)), wk = at::randn({d, w}) / std::sqrt(double(d));
    const at::Tensor av = at::randn({w}) / std::sqrt(double(w));
    ScoreSpec score;
    score.scale = 1 / std::sqrt(double(d));
    const MaskSpec mask;
    const double before = rssMiB("VmRSS:");
    resetPeakRss();
    const auto start = std::chrono::steady_clock::now();
    at::Tensor out;
    switch (k) {
        case AttentionKind::Dot: out = attendDot(q, key, v, mask, score, LayerRun{}); break;
        case AttentionKind::Additive:
            out = at::mm(additiveProbs(at::mm(q[0], wq), at::mm(key[0], wk), av, mask, 1.0), v[0]);
            break;
        case AttentionKind::Linear:
            out = linearAttention(featureMap(q, FeatureMap::Elu), featureMap(key, FeatureMap::Elu), v, mask);
            break;
        case AttentionKind::Hybrid: {
            const at::Tensor dot = headProbs(q[0], key[0], mask, score, 0, 1.0);
            const at::Tensor add = additiveProbs(at::mm(q[0], wq), at::mm(key[0], wk), av, mask, 1.0);
            const at::Tensor g = at::sigmoid(at::mv(q[0], av.repeat({2}))).unsqueeze(-1);
            out = at::mm(g * add + (1 - g) * dot, v[0]);
            break;
        }
        default: {
            SparseOptions o;
            o.window = 4, o.twoSided = true, o.keep = 4, o.buckets = 4, o.rounds = 2;
            const MapVariant variant = k == AttentionKind::Local  ? MapVariant::Local
                                       : k == AttentionKind::TopK ? MapVariant::TopK
                                                                  : MapVariant::Lsh;
            const at::Tensor logits = headLogits(q[0], key[0], mask, score, 0, 1.0);
            out = at::mm(softmaxKept(logits, sparseKeep(variant, o, logits, q[0], false)), v[0]);
        }
    }
    ScalingRow row;
    row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double peak = rssMiB("VmHWM:");
    row.peakExtraMiB = peak >= 0 && before >= 0 ? std::max(0.0, peak - before) : -1;
    row.kind = kind;
    row.n = n;
    return row;
}

KindsReport runKindsReport(const KindsReportOptions& options) {
    if (options.kinds.empty() || options.seeds.empty()) throw Error("kinds report: no kinds or no seeds");
    if (options.epochs < 1 || options.epochSteps < 1) throw Error("kinds report: epochs and epoch steps must be >= 1");
    for (const auto& kind : options.kinds) parseAttentionKind(kind);  // every name checked before any work
    const auto log = [&](const std::string& line) {
        if (options.log) options.log(line);
    };
    std::filesystem::create_directories(options.out);
    KindsReport report;
    const auto examples = heldOutExamples(options.base, options.evalExamples);
    for (const std::string& kind : options.kinds) {
        KindRow row;
        row.kind = kind;
        std::vector<double> accuracies;
        double buckets[3] = {0, 0, 0};
        int bucketRuns[3] = {0, 0, 0};
        for (std::uint64_t seed : options.seeds) {
            TrainOptions t = options.base;
            applyKind(kind, t, row.parameters);
            t.seed = seed;
            t.sparse.seed = seed;
            t.steps = options.epochs * options.epochSteps;
            t.epochSteps = options.epochSteps;
            t.evalExamples = 0;
            t.out = options.out / "runs" / (kind + "-" + std::to_string(seed));
            std::vector<EpochMonitor> epochs;
            resetPeakRss();
            const TrainResult r = trainMonitored(t, t.out / "monitors.csv", epochs);
            row.peakRssMiB = std::max(row.peakRssMiB, rssMiB("VmHWM:"));
            row.parameterCount = r.parameters;
            row.secondsPerEpoch += r.seconds / options.epochs / options.seeds.size();
            double entropy = 0;
            for (const HeadMonitor& h : epochs.back().heads) entropy += h.entropy;
            row.meanEntropy += entropy / std::max<std::size_t>(1, epochs.back().heads.size()) / options.seeds.size();
            LoadOptions load;
            load.device = DeviceChoice::Cpu;
            const auto model = Model::load(t.out, load);
            int lo = 1 << 30, hi = 0;
            for (const auto& ex : examples) {
                const int len = static_cast<int>(model->encodeText(ex.first).size());
                lo = std::min(lo, len), hi = std::max(hi, len);
            }
            const RunScore s = score(*model, examples, lo, hi);
            row.lengthBuckets.clear();
            for (int b = 0; b < 3; ++b) {  // the lengths score() puts in bucket b
                int first = -1, last = -1;
                for (int len = lo; len <= hi; ++len)
                    if (bucketOf(len, lo, hi) == b) last = len, first = first < 0 ? len : first;
                row.lengthBuckets += (b ? "|" : "") + (first < 0 ? std::string("none")
                                                                 : std::to_string(first) + "-" + std::to_string(last));
            }
            accuracies.push_back(s.accuracy);
            for (int b = 0; b < 3; ++b)
                if (s.bucket[b] >= 0) buckets[b] += s.bucket[b], ++bucketRuns[b];
            log(kind + " seed " + std::to_string(seed) + ": accuracy " + number(s.accuracy) + ", " +
                number(r.seconds / options.epochs) + " s per epoch");
        }
        double sum = 0;
        for (double a : accuracies) sum += a;
        row.accuracyMean = sum / accuracies.size();
        row.accuracySpread = *std::max_element(accuracies.begin(), accuracies.end()) -
                             *std::min_element(accuracies.begin(), accuracies.end());
        row.accuracyShort = bucketRuns[0] ? buckets[0] / bucketRuns[0] : -1;
        row.accuracyMedium = bucketRuns[1] ? buckets[1] / bucketRuns[1] : -1;
        row.accuracyLong = bucketRuns[2] ? buckets[2] / bucketRuns[2] : -1;
        report.kinds.push_back(row);
        writeCsvs(options.out, report);
    }
    for (const std::string& kind : options.kinds)
        for (int n : options.scalingLengths) {
            report.scaling.push_back(scalingRow(kind, n));
            const ScalingRow& row = report.scaling.back();
            log(kind + " n " + std::to_string(n) + ": " + (row.note.empty() ? number(row.seconds) + " s" : row.note));
            writeCsvs(options.out, report);
        }
    return report;
}

}  // namespace attnscope
