#include "attnscope/analysis/training_monitors.h"

#include "attnscope/analysis/metrics.h"
#include "attnscope/io/atomic_file.h"
#include "attnscope/io/csv_table.h"
#include "attnscope/runtime/error.h"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace attnscope {

std::vector<ProbeExample> builtinProbes(BuiltinTask task, int count) {
    TrainOptions options;
    options.task = task;
    std::vector<ProbeExample> out;
    for (auto& [input, expected] : heldOutExamples(options, count)) out.push_back({input, expected});
    return out;
}

namespace {

double monitorCosine(const std::vector<float>& a, const std::vector<float>& b) {
    double ab = 0, aa = 0, bb = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        ab += double(a[i]) * b[i], aa += double(a[i]) * a[i], bb += double(b[i]) * b[i];
    return aa > 0 && bb > 0 ? ab / std::sqrt(aa * bb) : 0.0;
}

// Mean over rows that see a key of log(number of keys seen); "seen" = a non-zero probability for
// softmax rows is every allowed key, so the count of the row's non-zero entries is used.
double monitorMaxEntropy(const HeadMap& map) {
    double sum = 0;
    int rows = 0;
    for (int i = 0; i < map.rows; ++i) {
        int seen = 0;
        for (int j = 0; j < map.cols; ++j) seen += map.at(i, j) > 0;
        if (seen == 0) continue;
        sum += std::log(static_cast<double>(seen));
        ++rows;
    }
    return rows ? sum / rows : 0.0;
}

bool probeCorrect(const Trace& trace, const ProbeExample& p) {
    if (!trace.classLabels().empty()) {
        const auto& probs = trace.classProbabilities();
        std::size_t best = 0;
        for (std::size_t i = 1; i < probs.size(); ++i)
            if (probs[i] > probs[best]) best = i;
        return trace.classLabels()[best] == p.expected;
    }
    std::string joined, spaced;  // character vocabularies join units as they are, word vocabularies by spaces
    for (const auto& t : trace.outputTokens()) joined += t, spaced += (spaced.empty() ? "" : " ") + t;
    return joined == p.expected || spaced == p.expected;
}

void monitorFlags(HeadMonitor& h) {
    std::string flags;
    if (h.entropy < 0.05 * h.maxEntropy + 0.01)
        flags = "collapsed-peaked";
    else if (h.entropy > 0.95 * h.maxEntropy)
        flags = "collapsed-uniform";
    if (h.maxSimilarity > 0.95) flags += std::string(flags.empty() ? "" : "+") + "duplicated";
    h.flags = flags;
}

}  // namespace

EpochMonitor measureModel(const Model& model, const std::vector<ProbeExample>& probes) {
    if (probes.empty()) throw Error("training monitors: no probe examples");
    EpochMonitor out;
    int right = 0;
    for (std::size_t p = 0; p < probes.size(); ++p) {
        const auto trace = model.forward(model.encodeText(probes[p].input));
        right += probeCorrect(*trace, probes[p]);
        std::size_t index = 0;
        for (int b = 0; b < static_cast<int>(trace->blocks().size()); ++b) {
            const BlockInfo& info = trace->blocks()[b];
            for (int l = 0; l < info.layers; ++l) {
                std::vector<HeadMap> maps;
                for (int h = 0; h < info.heads; ++h) maps.push_back(trace->map(b, l, h));
                double layerSum = 0;
                int pairs = 0;
                std::vector<double> sim(info.heads, 0.0), maxSim(info.heads, -1.0);
                for (int h = 0; h < info.heads; ++h)
                    for (int o = h + 1; o < info.heads; ++o) {
                        const double c = monitorCosine(maps[h].values, maps[o].values);
                        sim[h] += c, sim[o] += c;
                        maxSim[h] = std::max(maxSim[h], c), maxSim[o] = std::max(maxSim[o], c);
                        layerSum += c;
                        ++pairs;
                    }
                for (int h = 0; h < info.heads; ++h, ++index) {
                    if (p == 0) {
                        HeadMonitor head;
                        head.block = info.name;
                        head.layer = l;
                        head.head = h;
                        out.heads.push_back(head);
                    }
                    HeadMonitor& m = out.heads[index];
                    m.entropy += meanRowEntropy(maps[h]);
                    m.maxEntropy += monitorMaxEntropy(maps[h]);
                    m.distance += meanAttentionDistance(maps[h]);
                    m.similarity += info.heads > 1 ? sim[h] / (info.heads - 1) : 0.0;
                    m.maxSimilarity += info.heads > 1 ? maxSim[h] : 0.0;
                    m.layerSimilarity += pairs ? layerSum / pairs : 0.0;
                }
            }
        }
    }
    const double n = static_cast<double>(probes.size());
    for (HeadMonitor& m : out.heads) {
        m.entropy /= n, m.maxEntropy /= n, m.distance /= n;
        m.similarity /= n, m.maxSimilarity /= n, m.layerSimilarity /= n;
        monitorFlags(m);
    }
    out.accuracy = right / n;
    return out;
}

void writeMonitorCsv(const std::filesystem::path& file, const std::vector<EpochMonitor>& epochs) {
    std::ostringstream csv;
    csv << "epoch,step,loss,accuracy,block,layer,head,entropy,max_entropy,distance,similarity,max_similarity,"
           "layer_similarity,flags\n";
    char line[512];
    for (const EpochMonitor& e : epochs)
        for (const HeadMonitor& h : e.heads) {
            std::snprintf(line, sizeof line, "%d,%d,%.9g,%.9g,%s,%d,%d,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%s\n", e.epoch,
                          e.step, e.loss, e.accuracy, h.block.c_str(), h.layer, h.head, h.entropy, h.maxEntropy,
                          h.distance, h.similarity, h.maxSimilarity, h.layerSimilarity, h.flags.c_str());
            csv << line;
        }
    writeFileAtomically(file, csv.str());
}

std::vector<EpochMonitor> readMonitorCsv(const std::filesystem::path& file) {
    const CsvTable t = CsvTable::read(file);
    std::vector<EpochMonitor> out;
    for (std::size_t r = 0; r < t.rows(); ++r) {
        const int epoch = static_cast<int>(t.number(r, "epoch"));
        if (out.empty() || out.back().epoch != epoch) {
            EpochMonitor e;
            e.epoch = epoch;
            e.step = static_cast<int>(t.number(r, "step"));
            e.loss = t.number(r, "loss");
            e.accuracy = t.number(r, "accuracy");
            out.push_back(e);
        }
        HeadMonitor h;
        h.block = t.text(r, "block");
        h.layer = static_cast<int>(t.number(r, "layer"));
        h.head = static_cast<int>(t.number(r, "head"));
        h.entropy = t.number(r, "entropy");
        h.maxEntropy = t.number(r, "max_entropy");
        h.distance = t.number(r, "distance");
        h.similarity = t.number(r, "similarity");
        h.maxSimilarity = t.number(r, "max_similarity");
        h.layerSimilarity = t.number(r, "layer_similarity");
        h.flags = t.text(r, "flags");
        out.back().heads.push_back(h);
    }
    if (out.empty()) throw Error(file.string() + ": no epochs");
    return out;
}

TrainResult trainMonitored(TrainOptions options, const std::filesystem::path& csv, std::vector<EpochMonitor>& epochs,
                           std::vector<ProbeExample> probes, const std::function<void(const EpochMonitor&)>& onEpoch) {
    if (probes.empty())
        for (auto& [input, expected] : heldOutExamples(options, 32)) probes.push_back({input, expected});
    epochs.clear();
    options.epochEnd = [&](const EpochEnd& end) {
        LoadOptions load;
        load.device = DeviceChoice::Cpu;
        const auto model = Model::load(end.checkpoint, load);
        EpochMonitor m = measureModel(*model, probes);
        m.epoch = end.epoch;
        m.step = end.step;
        m.loss = end.loss;
        m.kl = end.kl;
        epochs.push_back(m);
        writeMonitorCsv(csv, epochs);
        if (onEpoch) onEpoch(m);
    };
    return trainBuiltin(options);
}

}  // namespace attnscope
