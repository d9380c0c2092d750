// Corpus runs: the run folder, the passes over the examples, resume, aggregation and merge
// (see corpus_run.h).
#include "attnscope/corpus/corpus_run.h"

#include "corpus_eval.h"
#include "corpus_folder.h"

#include "attnscope/analysis/head_metric_list.h"
#include "attnscope/attention/trace.h"
#include "attnscope/io/atomic_file.h"
#include "io/json_util.h"
#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <set>
#include <unordered_set>

namespace attnscope {

namespace {

using nlohmann::json;

json headJson(const HeadRef& h) { return json::array({h.block, h.layer, h.head}); }
HeadRef headOf(const json& j) { return {j.at(0).get<std::string>(), j.at(1).get<int>(), j.at(2).get<int>()}; }

std::uint64_t fileHash(const std::filesystem::path& path) {  // FNV-1a 64 of the bytes
    std::ifstream in(path, std::ios::binary);
    std::uint64_t h = 1469598103934665603ull;
    char buf[65536];
    while (in.read(buf, sizeof buf) || in.gcount() > 0) {
        for (std::streamsize i = 0; i < in.gcount(); ++i) {
            h ^= static_cast<unsigned char>(buf[i]);
            h *= 1099511628211ull;
        }
    }
    return h;
}

// What the values depend on; two folders with equal settings hold parts of one run.
json settingsOf(const Model& model, const std::filesystem::path& data, const CorpusOptions& o) {
    const ModelInfo& mi = model.info();
    json t = {o.thresholds.diagonal,    o.thresholds.previous, o.thresholds.global,    o.thresholds.local,
              o.thresholds.localRadius, o.thresholds.sparse,   o.thresholds.sparseKeys};
    return {{"model",
             {{"family", mi.family},
              {"name", mi.path.filename().string()},
              {"layers", mi.layers},
              {"heads", mi.heads},
              {"hidden", mi.hidden},
              {"parameters", mi.parameters}}},
            {"data",
             {{"name", data.filename().string()},
              {"bytes", std::filesystem::file_size(data)},
              {"fnv1a64", std::to_string(fileHash(data))}}},
            {"format", static_cast<int>(o.read.format)},
            {"skip_bad_lines", o.read.badLines == BadLinePolicy::Skip},
            {"max_tokens", o.maxTokens},
            {"subset", {o.subsetBegin, o.subsetEnd}},
            {"max_new_tokens", o.maxNewTokens},
            {"thresholds", t},
            {"separators", o.separatorLabels}};
}

// The first setting that differs, for the message.
std::string firstDifference(const json& a, const json& b) {
    for (auto it = a.begin(); it != a.end(); ++it)
        if (!b.contains(it.key()) || b[it.key()] != it.value()) return it.key();
    return "settings";
}

struct RunFolder {
    std::filesystem::path dir;
    json run;  // run.json
    void save() const { writeFileAtomically(dir / "run.json", run.dump(1) + "\n"); }
};

std::vector<HeadRef> headsOf(const json& run) {
    std::vector<HeadRef> heads;
    for (const json& h : run.at("heads")) heads.push_back(headOf(h));
    return heads;
}

const char* metricNameFor(const std::string& kind, bool labelled, bool targets) {
    if (kind == "class") return labelled ? "accuracy" : "agreement";
    if (kind == "sequence") return targets ? "exact match" : "agreement";
    if (kind == "next-token") return "top-1 agreement";
    return "hidden cosine";
}

std::string importanceNameFor(const std::string& kind, bool labelled, bool targets) {
    if (kind == "class") return labelled ? "p(true label) drop" : "output change (KL, nats)";
    if (kind == "sequence")
        return targets ? "output change (mean |delta log p| of the target)"
                       : "output change (changed positions / length)";
    if (kind == "next-token") return "output change (KL, nats)";
    return "output change (hidden cosine distance)";
}

// Aggregates a folder's records over the examples `indices` (index order) into the result.
CorpusResult aggregate(const json& run, const std::vector<int>& indices, const RecordFile* stats,
                       const RecordFile* importance, const RecordFile* pruning, const RecordFile* greedy) {
    CorpusResult r;
    r.model = run.at("model_spec").get<std::string>();
    r.outputKind = run.at("output").get<std::string>();
    const bool labelled = run.at("labelled").get<bool>(), targets = run.at("targets").get<bool>();
    r.metricName = metricNameFor(r.outputKind, labelled, targets);
    r.importanceName = importanceNameFor(r.outputKind, labelled, targets);
    r.examples = static_cast<int>(indices.size());
    for (const json& b : run.at("bad_lines")) r.badLines.push_back({b.at(0).get<int>(), b.at(1).get<std::string>()});
    const std::vector<HeadRef> heads = headsOf(run);
    const std::vector<std::string> keys = run.at("stat_keys").get<std::vector<std::string>>();
    const int H = static_cast<int>(heads.size());
    auto column = [&](const RecordFile& f, const char* field, int head, int item) {
        std::vector<double> v;
        for (int i : indices) v.push_back(f.records().at(i).at(field).at(head).at(item).get<double>());
        return v;
    };
    std::vector<double> base;
    for (const RecordFile* f : {stats, importance, pruning})
        if (f && base.empty())
            for (int i : indices)
                base.push_back(f == pruning ? f->records().at(i).at("v").at(0).at(0).get<double>()
                                            : f->records().at(i).at("b").get<double>());
    if (base.empty() && greedy) base = greedy->records().at(0).at("metric").get<std::vector<double>>();
    r.baseMetric = spreadOf(base).mean;
    for (int h = 0; h < H; ++h) {
        HeadSummary s;
        s.head = heads[h];
        if (stats) {
            s.hasStats = true;
            for (std::size_t k = 0; k < keys.size(); ++k) {
                std::vector<double> v;  // the examples in which the statistic exists, index order
                for (int i : indices) {
                    const json& x = stats->records().at(i).at("s").at(h).at(k);
                    if (!x.is_null()) v.push_back(x.get<double>());
                }
                s.stats[keys[k]] = {spreadOf(v), static_cast<int>(v.size())};
            }
            std::array<int, kPatternClasses> count{};
            for (int i : indices) ++count[stats->records().at(i).at("p").at(h).get<int>()];
            for (int c = 0; c < kPatternClasses; ++c)
                s.patternShare[c] = count[c] / static_cast<double>(indices.size());
        }
        if (importance) {
            s.hasImportance = true;
            const auto change = column(*importance, "imp", h, 0), prob = column(*importance, "imp", h, 1),
                       metric = column(*importance, "imp", h, 2);
            std::vector<double> drop;
            for (std::size_t e = 0; e < indices.size(); ++e)
                drop.push_back(importance->records().at(indices[e]).at("bp").get<double>() - prob[e]);
            s.change = spreadOf(change);
            s.labelProbDrop = labelled ? spreadOf(drop) : Spread{};
            s.importance = labelled && r.outputKind == "class" ? s.labelProbDrop : s.change;
            s.maskedMetric = spreadOf(metric).mean;
        }
        r.heads.push_back(s);
    }
    setSinkRate(r, kSinkThreshold);
    if (importance) {
        std::vector<int> order(H);
        for (int h = 0; h < H; ++h) order[h] = h;
        std::stable_sort(order.begin(), order.end(),
                         [&](int a, int b) { return r.heads[a].importance.mean < r.heads[b].importance.mean; });
        for (int h : order) r.pruneOrder.push_back(heads[h]);
    }
    // A folder can hold both curves; the result is the one its last pruning pass asked for.
    const std::string lastOrder = run.value("order", std::string());
    if (pruning && run.contains("prune_order") && lastOrder != "greedy") {
        r.orderKind = "importance";
        const json& order = run.at("prune_order");
        for (int k = 0; k <= H; ++k) {
            PruneStep s;
            s.k = k;
            if (k > 0) s.head = headOf(order.at(k - 1));
            std::vector<double> m, c;
            for (int i : indices) {
                m.push_back(pruning->records().at(i).at("v").at(k).at(0).get<double>());
                c.push_back(pruning->records().at(i).at("v").at(k).at(1).get<double>());
            }
            s.metric = spreadOf(m);
            s.change = spreadOf(c);
            r.pruning.push_back(s);
        }
    } else if (greedy && lastOrder != "importance") {
        r.orderKind = "greedy";
        for (const auto& [k, j] : greedy->records()) {
            PruneStep s;
            s.k = k;
            if (k > 0) s.head = heads.at(j.at("head").get<int>());
            s.metric = spreadOf(j.at("metric").get<std::vector<double>>());
            s.change = spreadOf(j.at("change").get<std::vector<double>>());
            r.pruning.push_back(s);
        }
    }
    return r;
}

// One example's statistics record: per head the values of `keys` (null where a statistic does not
// exist on this example) and the pattern class.
json statsRecord(const Model& model, const Trace& trace, const MetricsOptions& mopts,
                 const std::vector<std::string>& keys) {
    std::vector<HeadMetrics> metrics = headMetrics(trace, mopts);
    attachDetectors(metrics, traceDetectors(trace));
    // A detector pattern without a target scores 0 (detectionScore); here it is left out instead,
    // so a corpus mean is over the examples that can show the behaviour. Previous / first token
    // need two tokens; duplicate and induction a token with an earlier copy (both then have one).
    const std::vector<std::int64_t>& ids = trace.ids();
    std::unordered_set<std::int64_t> seen;
    bool repeated = false;
    for (std::int64_t id : ids) repeated |= !seen.insert(id).second;
    const bool two = ids.size() >= 2;
    json values = json::array(), patterns = json::array();
    for (const HeadMetrics& hm : metrics) {
        // Encoder-decoders: only the encoder's maps are over the input ids the patterns are made of.
        const bool idsBlock = !model.info().encoderDecoder || hm.block == "encoder";
        json v = json::array();
        for (const std::string& key : keys) {
            double x = headMetric(key).value(hm);
            if (key == "sink" && !two) x = std::numeric_limits<double>::quiet_NaN();  // no query after the first
            if (key.rfind("det_", 0) == 0) {
                const bool target = key == "det_duplicate_token" || key == "det_induction" ? repeated : two;
                if (!idsBlock || !target) x = std::numeric_limits<double>::quiet_NaN();
            }
            v.push_back(std::isfinite(x) ? json(x) : json(nullptr));
        }
        values.push_back(v);
        patterns.push_back(static_cast<int>(hm.pattern));
    }
    return {{"s", values}, {"p", patterns}};
}

std::vector<int> sliceOf(int total, const json& run) {
    const int shard = run.at("shard").at(0).get<int>(), shards = run.at("shard").at(1).get<int>();
    std::vector<int> out;
    for (int i = 0; i < total; ++i)
        if (i % shards == shard) out.push_back(i);
    return out;
}

void checkProgress(const CorpusOptions& o, const char* phase, long long done, long long total) {
    if (o.progress && !o.progress(phase, done, total)) throw Cancelled();
}

}  // namespace

CorpusRunSummary runCorpus(const Model& model, const std::filesystem::path& data, const std::filesystem::path& outDir,
                           const CorpusOptions& o) {
    if (o.shards < 1 || o.shard < 0 || o.shard >= o.shards)
        throw Error("--shard " + std::to_string(o.shard) + "/" + std::to_string(o.shards) + ": K must be in 0..N-1");
    if (o.pruning && o.order == PruneOrder::Greedy && o.shards > 1)
        throw Error("greedy pruning cannot be sharded: each step needs the whole corpus");
    if (o.pruning && o.order == PruneOrder::Importance && o.fixedOrder.empty() && (o.shards > 1 || !o.importance))
        throw Error(
                o.shards > 1
                        ? "pruning over shards needs the order of the merged importance run (--order DIR/heads.json)"
                        : "pruning needs the importance analysis or an order (--order DIR/heads.json)");
    CorpusFile file = readCorpus(data, o.read);
    if (file.lines.empty()) throw Error(data.string() + ": no examples");
    // A probe run of the first line: the class names labels are checked against, the heads.
    PrepareOptions prep{o.maxTokens, o.read.badLines, {}};
    {
        CorpusFile first = file;
        first.lines.resize(1);
        first.bad.clear();
        PrepareOptions probe = prep;
        probe.badLines = BadLinePolicy::Skip;
        for (CorpusLine& l : first.lines) l.label.reset(), l.target.reset();
        auto ex = prepareCorpus(model, first, probe);
        if (!ex.empty()) prep.classLabels = model.forwardText(ex[0].input)->classLabels();
    }
    std::vector<CorpusExample> all = prepareCorpus(model, file, prep);
    const int end =
            o.subsetEnd < 0 ? static_cast<int>(all.size()) : std::min<int>(o.subsetEnd, static_cast<int>(all.size()));
    if (o.subsetBegin >= end)
        throw Error("--subset selects no examples (the corpus has " + std::to_string(all.size()) + ")");
    std::vector<CorpusExample> examples(all.begin() + o.subsetBegin, all.begin() + end);
    for (std::size_t i = 0; i < examples.size(); ++i) examples[i].index = static_cast<int>(i);

    createRunFolder(outDir, "--out");
    RunFolder folder{outDir, {}};
    const json settings = settingsOf(model, data, o);
    const json shard = {o.shard, o.shards};
    if (std::filesystem::exists(outDir / "run.json")) {
        folder.run = readShardRun(outDir);
        if (folder.run.value("settings", json()) != settings)
            throw Error(outDir.string() + " holds a run with another " +
                        firstDifference(settings, folder.run.value("settings", json())) +
                        "; use another --out folder or delete it");
        if (folder.run.at("shard") != shard)
            throw Error(outDir.string() + " holds shard " + folder.run.at("shard").dump() + ", not " + shard.dump());
    } else {
        const Originals probe = runOriginals(model, examples[0], o.maxNewTokens);
        folder.run = {{"format", "attnscope-corpus-run"},
                      {"version", 1},
                      {"settings", settings},
                      {"shard", shard},
                      {"model_spec", model.info().path.string()},
                      {"output", outputKind(*probe.main)},
                      {"examples", examples.size()}};
        json heads = json::array();
        for (const HeadRef& h : traceHeads(*probe.main)) heads.push_back(headJson(h));
        folder.run["heads"] = heads;
        bool labelled = !examples.empty(), targets = !examples.empty();
        for (const auto& e : examples) labelled &= e.label >= 0, targets &= !e.targetIds.empty();
        folder.run["labelled"] = labelled;
        folder.run["targets"] = targets;
        json bad = json::array();
        for (const BadLine& b : file.bad) bad.push_back({b.line, b.reason});
        folder.run["bad_lines"] = bad;
        folder.save();
    }
    // The statistics the records hold (a folder of an older version has records without them:
    // those are computed again below).
    if (folder.run.value("stat_keys", json()) != json(corpusStatKeys())) {
        folder.run["stat_keys"] = corpusStatKeys();
        folder.save();
    }
    const std::vector<std::string> statKeys = corpusStatKeys();
    if (o.pruning) {
        folder.run["order"] = o.order == PruneOrder::Greedy ? "greedy" : "importance";
        folder.save();
    }
    const std::vector<HeadRef> heads = headsOf(folder.run);
    const std::vector<int> slice = sliceOf(static_cast<int>(examples.size()), folder.run);
    CorpusRunSummary summary;
    summary.examples = static_cast<int>(slice.size());

    MetricsOptions mopts;
    mopts.thresholds = o.thresholds;
    mopts.separatorLabels = o.separatorLabels;
    mopts.compareLinear = false;
    RecordFile stats(outDir / "stats.jsonl", "i"), importance(outDir / "importance.jsonl", "i");
    // A stats record counts when it holds this version's statistics ("s").
    const auto haveStatsOf = [&](int i) { return stats.has(i) && stats.records().at(i).contains("s"); };
    if (o.stats || o.importance) {
        const char* phase = o.importance ? "importance" : "stats";
        long long done = 0;
        for (int i : slice) {
            checkProgress(o, phase, done, static_cast<long long>(slice.size()));
            const bool needStats = o.stats && !haveStatsOf(i), needImportance = o.importance && !importance.has(i);
            if (needStats || needImportance) {
                const CorpusExample& ex = examples[i];
                const Originals orig = runOriginals(model, ex, o.maxNewTokens);
                const Outcome base = evaluate(model, ex, orig, {});
                if (needStats) {
                    json rec = {{"i", i}, {"line", ex.line}, {"n", ex.input.ids.size()}, {"b", base.metric}};
                    rec.update(statsRecord(model, *orig.main, mopts, statKeys));
                    stats.append(rec);
                }
                if (needImportance) {
                    json imp = json::array();
                    for (const HeadRef& h : heads) {
                        const Outcome out = evaluate(model, ex, orig, {h});
                        imp.push_back({out.change, out.labelProb, out.metric});
                    }
                    importance.append(
                            {{"i", i}, {"line", ex.line}, {"b", base.metric}, {"bp", base.labelProb}, {"imp", imp}});
                }
                ++summary.computed;
            } else {
                ++summary.resumed;
            }
            ++done;
        }
        checkProgress(o, phase, done, done);
    }
    const bool haveStats = !slice.empty() && std::all_of(slice.begin(), slice.end(), haveStatsOf);
    const bool haveImportance =
            !slice.empty() && std::all_of(slice.begin(), slice.end(), [&](int i) { return importance.has(i); });

    RecordFile pruning(outDir / "pruning.jsonl", "i"), greedy(outDir / "greedy.jsonl", "k");
    if (o.pruning && o.order == PruneOrder::Importance) {
        std::vector<HeadRef> order = o.fixedOrder;
        if (order.empty()) order = aggregate(folder.run, slice, nullptr, &importance, nullptr, nullptr).pruneOrder;
        if (order.size() != heads.size())
            throw Error("--order names " + std::to_string(order.size()) + " heads, the model has " +
                        std::to_string(heads.size()));
        json orderJson = json::array();
        for (const HeadRef& h : order) orderJson.push_back(headJson(h));
        if (folder.run.contains("prune_order") && folder.run["prune_order"] != orderJson)
            throw Error(outDir.string() +
                        "/pruning.jsonl was made with another pruning order; delete it or give the same --order");
        folder.run["prune_order"] = orderJson;
        folder.save();
        long long done = 0;
        for (int i : slice) {
            checkProgress(o, "pruning", done, static_cast<long long>(slice.size()));
            if (!pruning.has(i)) {
                const CorpusExample& ex = examples[i];
                const Originals orig = runOriginals(model, ex, o.maxNewTokens);
                json v = json::array();
                for (std::size_t k = 0; k <= order.size(); ++k) {
                    const Outcome out =
                            evaluate(model, ex, orig, std::vector<HeadRef>(order.begin(), order.begin() + k));
                    v.push_back({out.metric, out.change});
                }
                pruning.append({{"i", i}, {"line", ex.line}, {"v", v}});
                ++summary.computed;
            } else {
                ++summary.resumed;
            }
            ++done;
        }
        checkProgress(o, "pruning", done, done);
    } else if (o.pruning) {  // greedy: at each step mask the head whose loss of the metric is smallest
        std::vector<Originals> origs;
        for (int i : slice) origs.push_back(runOriginals(model, examples[i], o.maxNewTokens));
        if (!greedy.has(0)) {  // step 0: the unmasked model, so the curve starts at its metric
            std::vector<double> m, c;
            for (std::size_t e = 0; e < slice.size(); ++e) {
                m.push_back(evaluate(model, examples[slice[e]], origs[e], {}).metric);
                c.push_back(0.0);
            }
            greedy.append({{"k", 0}, {"head", -1}, {"metric", m}, {"change", c}});
        }
        std::vector<HeadRef> masked;
        std::vector<bool> used(heads.size(), false);
        for (const auto& [k, j] : greedy.records()) {
            if (k == 0) continue;
            masked.push_back(heads.at(j.at("head").get<int>()));
            used[j.at("head").get<int>()] = true;
        }
        const int H = static_cast<int>(heads.size());
        for (int k = static_cast<int>(masked.size()) + 1; k <= H; ++k) {
            checkProgress(o, "greedy", k - 1, H);
            int best = -1;
            double bestMetric = 0, bestChange = 0;
            std::vector<double> bestM, bestC;
            for (int h = 0; h < H; ++h) {
                if (used[h]) continue;
                std::vector<HeadRef> set = masked;
                set.push_back(heads[h]);
                std::vector<double> m, c;
                for (std::size_t e = 0; e < slice.size(); ++e) {
                    const Outcome out = evaluate(model, examples[slice[e]], origs[e], set);
                    m.push_back(out.metric);
                    c.push_back(out.change);
                }
                const double mm = spreadOf(m).mean, cm = spreadOf(c).mean;
                if (best < 0 || mm > bestMetric || (mm == bestMetric && cm < bestChange)) {
                    best = h, bestMetric = mm, bestChange = cm, bestM = m, bestC = c;
                }
            }
            used[best] = true;
            masked.push_back(heads[best]);
            greedy.append({{"k", k}, {"head", best}, {"metric", bestM}, {"change", bestC}});
            ++summary.computed;
        }
        checkProgress(o, "greedy", H, H);
    }
    const bool havePruning =
            !slice.empty() && std::all_of(slice.begin(), slice.end(), [&](int i) { return pruning.has(i); });
    const bool haveGreedy = static_cast<int>(greedy.records().size()) == static_cast<int>(heads.size()) + 1;
    summary.result = aggregate(folder.run, slice, haveStats ? &stats : nullptr, haveImportance ? &importance : nullptr,
                               havePruning ? &pruning : nullptr, haveGreedy ? &greedy : nullptr);
    writeCorpusResult(summary.result, outDir);
    return summary;
}

CorpusResult mergeCorpus(const std::vector<std::filesystem::path>& dirs, const std::filesystem::path& outDir) {
    if (dirs.empty()) throw Error("corpus-merge needs the shard folders");
    // Merging onto a shard would rewrite the records it is read from.
    for (const auto& d : dirs) refuseOutputOverInput(outDir, d);
    std::vector<json> runs;
    for (const auto& d : dirs) runs.push_back(readShardRun(d));
    const json& first = runs[0];
    const int shards = first.at("shard").at(1).get<int>();
    std::set<int> seen;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const json& r = runs[i];
        if (r.at("settings") != first.at("settings"))
            throw Error(dirs[i].string() + ": another " + firstDifference(first.at("settings"), r.at("settings")) +
                        " than " + dirs[0].string());
        if (r.at("shard").at(1).get<int>() != shards)
            throw Error(dirs[i].string() + ": shard of " + r.at("shard").at(1).dump() + ", not of " +
                        std::to_string(shards));
        if (!seen.insert(r.at("shard").at(0).get<int>()).second)
            throw Error(dirs[i].string() + ": shard " + r.at("shard").at(0).dump() + " given twice");
        if (r.value("prune_order", json()) != first.value("prune_order", json()))
            throw Error(dirs[i].string() + ": another pruning order than " + dirs[0].string());
        for (const char* key : {"examples", "heads", "output", "labelled", "targets", "model_spec", "bad_lines"})
            if (r.at(key) != first.at(key))
                throw Error((dirs[i] / "run.json").string() + ": '" + key + "' differs from " +
                            (dirs[0] / "run.json").string());
        if (r.value("stat_keys", json()) != json(corpusStatKeys()))
            throw Error(
                    dirs[i].string() +
                    " was made by an older AttnScope (other statistics); run its shard again on the folder to update it");
    }
    for (int k = 0; k < shards; ++k)
        if (!seen.count(k)) throw Error("shard " + std::to_string(k) + "/" + std::to_string(shards) + " is missing");
    json run = first;
    run["shard"] = {0, 1};
    const int total = run.at("examples").get<int>();
    std::vector<int> indices(total);
    for (int i = 0; i < total; ++i) indices[i] = i;
    createRunFolder(outDir, "--out");
    std::vector<std::unique_ptr<RecordFile>> merged;
    const char* names[] = {"stats.jsonl", "importance.jsonl", "pruning.jsonl"};
    std::vector<bool> complete;
    for (const char* name : names) {
        std::map<int, json> all;
        for (std::size_t i = 0; i < dirs.size(); ++i)
            for (auto& [k, j] : readShardRecords(dirs[i], name, runs[i])) all[k] = std::move(j);
        const bool full = static_cast<int>(all.size()) == total;
        if (!all.empty() && !full)
            throw Error(std::string(name) + ": the shards hold " + std::to_string(all.size()) + " of " +
                        std::to_string(total) + " examples (a shard did not finish)");
        if (full)
            RecordFile::writeAll(outDir / name, all);
        else
            std::filesystem::remove(outDir / name);
        complete.push_back(full);
        merged.push_back(std::make_unique<RecordFile>(outDir / name, "i"));
    }
    writeFileAtomically(outDir / "run.json", run.dump(1) + "\n");
    CorpusResult result =
            aggregate(run, indices, complete[0] ? merged[0].get() : nullptr, complete[1] ? merged[1].get() : nullptr,
                      complete[2] ? merged[2].get() : nullptr, nullptr);
    writeCorpusResult(result, outDir);
    return result;
}

}  // namespace attnscope
