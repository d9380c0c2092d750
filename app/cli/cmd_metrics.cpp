#include "commands.h"
#include "common.h"
#include "gradient_output.h"
#include "json_stream.h"
#include "model_input.h"
#include "source_blocks.h"
#include "terms_output.h"

#include "attnscope/runtime/error.h"
#include "attnscope/io/atomic_file.h"
#include "attnscope/io/head_table.h"
#include "attnscope/analysis/head_metric_list.h"
#include "attnscope/analysis/source_metrics.h"
#include "attnscope/attention/map_rows.h"
#include "attnscope/lab/interventions.h"
#include "attnscope/lab/lab.h"
#include "attnscope/models/model.h"
#include "attnscope/attention/trace.h"
#include "attnscope/attention/attention_file.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <sys/resource.h>
#include <cmath>
#include <iostream>

namespace attnscope::cli {

namespace {

// NaN (a measure not defined for this head) as null.
nlohmann::json numberJson(double v) { return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v); }

nlohmann::json headJson(const HeadMetrics& m) {
    nlohmann::json j = {{"block", m.block},
                        {"layer", m.layer},
                        {"head", m.head},
                        {"entropy", m.entropy},
                        {"mean_distance", m.meanDistance},
                        {"first_token", m.firstToken},
                        {"sink", m.sink},
                        {"separator", m.separator},
                        {"pattern", patternName(m.pattern)},
                        {"scores",
                         {{"diagonal", m.scores.diagonal},
                          {"previous", m.scores.previous},
                          {"global", m.scores.global},
                          {"global_key", m.scores.globalKey},
                          {"local", m.scores.local},
                          {"sparse", m.scores.sparse}}},
                        {"kl_dot_linear", numberJson(m.klDotLinear)}};
    if (m.detectors.computed())
        for (const HeadMetricInfo& info : headMetricList())
            if (info.detector)
                j["detectors"][std::string(info.key).substr(4)] = info.value(m);  // "det_induction" -> "induction"
    return j;
}

// With detectors, their columns (det_previous_token, det_duplicate_token, det_induction,
// det_first_token) follow the others. "sink" comes after kl_dot_linear: the columns before it
// keep their places for scripts that read them by position. kl_dot_linear is empty where it is
// not defined.
std::string csvOf(const std::vector<HeadMetrics>& metrics, bool detectors) {
    std::vector<std::string> columns = {"entropy",  "mean_distance", "first_token", "separator",  "pattern",
                                        "diagonal", "previous",      "global",      "global_key", "local",
                                        "sparse",   "kl_dot_linear", "sink"};
    if (detectors)
        for (const HeadMetricInfo& info : headMetricList())
            if (info.detector) columns.push_back(info.key);
    HeadTable table(columns);
    const auto num = [](double v) { return numberText(v, 8); };
    for (const HeadMetrics& m : metrics) {
        std::vector<std::string> cells = {num(m.entropy),
                                          num(m.meanDistance),
                                          num(m.firstToken),
                                          num(m.separator),
                                          patternName(m.pattern),
                                          num(m.scores.diagonal),
                                          num(m.scores.previous),
                                          num(m.scores.global),
                                          std::to_string(m.scores.globalKey),
                                          num(m.scores.local),
                                          num(m.scores.sparse),
                                          std::isnan(m.klDotLinear) ? std::string() : num(m.klDotLinear),
                                          num(m.sink)};
        if (detectors)
            for (const HeadMetricInfo& info : headMetricList())
                if (info.detector) cells.push_back(num(info.value(m)));
        table.addRow(m.block, m.layer, m.head, std::move(cells));
    }
    return table.csv();
}

// metrics --source S: the head measures on that source's maps (source_metrics.h), heads only. The
// gradient sources run the model once more, forward and backward, for the explained output.
int runSourceMetrics(const Args& args, const ModelInput& input, MapSource source, const MetricsOptions& options,
                     const std::filesystem::path& out) {
    const auto model = loadModel(args);
    RunOptions run;
    applyRunFlags(args, run);
    const bool gradient = gradientSource(source);
    const GradientTarget target = gradient ? parseGradientTarget(args, *model) : GradientTarget{};
    run.captureValues = sourceNeedsValues(source);
    run.scoreTerms = sourceNeedsTerms(source);
    if (run.scoreTerms) requireScoreTerms(model->info(), std::string("--source ") + sourceName(source));
    const auto trace = input.run(*model, run);  // the gradient sources: the block, its tokens and separators
    const std::vector<int> blocks = sourceBlocks(*trace, source, args.value("block"));
    requireSourceCovered(*trace, model->info(), source, blocks);
    std::shared_ptr<const GradientMaps> gradients;
    if (gradient)
        gradients = std::make_shared<const GradientMaps>(
                gradientSources(*model, input.gradientInput(*model), target, run, run.progress));
    MetricsOptions o = options;
    if (args.flag("progress")) o.progress = stderrProgress(std::string("metrics (") + sourceName(source) + ")", "map");
    const std::vector<HeadMetrics> metrics = sourceHeadMetrics(
            *trace, source, gradient ? gradientMapProvider(gradients, source) : traceMapProvider(*trace, source),
            blocks, o);
    if (out.extension() == ".csv") {
        writeFileAtomically(out, csvOf(metrics, false));
    } else {
        nlohmann::json j = {{"ids", trace->ids()}, {"tokens", trace->tokens()}, {"map_source", sourceName(source)}};
        if (gradients) addGradientTargetJson(j, *gradients, !gradientClassLabels(*model).empty());
        const PatternThresholds& t = options.thresholds;
        j["pattern_thresholds"] = {{"diagonal", t.diagonal},     {"previous", t.previous},        {"global", t.global},
                                   {"local", t.local},           {"local_radius", t.localRadius}, {"sparse", t.sparse},
                                   {"sparse_keys", t.sparseKeys}};
        j["heads"] = nlohmann::json::array();
        for (const HeadMetrics& m : metrics) j["heads"].push_back(headJson(m));
        writeFileAtomically(out, j.dump(1) + "\n");
    }
    std::cerr << "wrote " << out.string() << " (" << metrics.size() << (perHeadSource(source) ? " heads" : " layers")
              << ", " << sourceName(source) << ")\n";
    return 0;
}

// --timing: each phase's wall and process CPU time and page faults (minor) on stderr (docs/benchmarks.md).
class PhaseTimer {
public:
    explicit PhaseTimer(bool on) : on_(on) {}
    void mark(const char* phase) {
        if (!on_) return;
        const auto wall = std::chrono::steady_clock::now();
        const std::clock_t cpu = std::clock();
        const long faults = minorFaults();
        std::cerr << "timing: " << phase << " " << std::chrono::duration<double>(wall - wall_).count() << " s wall, "
                  << static_cast<double>(cpu - cpu_) / CLOCKS_PER_SEC << " s CPU, " << faults - faults_
                  << " page faults\n";
        wall_ = wall, cpu_ = cpu, faults_ = faults;
    }

private:
    bool on_;
    std::chrono::steady_clock::time_point wall_ = std::chrono::steady_clock::now();
    std::clock_t cpu_ = std::clock();
    long faults_ = minorFaults();

    static long minorFaults() {
        rusage u{};
        return getrusage(RUSAGE_SELF, &u) == 0 ? u.ru_minflt : 0;
    }
};

// Why kl_dot_linear is empty for some heads, or "" when it is defined for all.
std::string undefinedKlNote(const Trace& trace, const std::vector<HeadMetrics>& metrics) {
    const auto undefined = std::count_if(metrics.begin(), metrics.end(),
                                         [](const HeadMetrics& m) { return std::isnan(m.klDotLinear); });
    if (undefined == 0) return "";
    std::string why;
    for (int b = 0; b < static_cast<int>(trace.blocks().size()) && why.empty(); ++b)
        for (int l = 0; l < trace.blocks()[b].layers && why.empty(); ++l) why = linearMapRefusal(trace, b, l);
    return "kl_dot_linear is empty (null) for " + std::to_string(undefined) + " of " + std::to_string(metrics.size()) +
           " heads: their logits add " + why + ", which linear attention has no place for";
}

int runMetrics(const std::vector<std::string>& argv) {
    Args args(argv,
              withGradientOptions(
                      withInputOptions({"out", "device", "temperature", "variant", "feature-map", "features", "seed",
                                        "separators", "flow-rows", "attention-file", "tokens", "probe-length",
                                        "probe-seed", "probe-first", "revision", "source", "block", "sink-threshold"})),
              {"flow", "detectors", "progress", "timing"});
    // --attention-file F.npy: the maps of a file (attention_file.h) instead of MODEL and an input.
    const std::optional<std::string> attentionFile = args.value("attention-file");
    args.expectPositionals(attentionFile ? 0 : 1);
    if (args.value("tokens") && !attentionFile) throw UsageError("--tokens needs --attention-file");
    if (attentionFile && (args.value("ids") || args.value("text") || args.value("image")))
        throw UsageError("--attention-file takes no --ids, --text or --image: the file holds the maps");
    if (attentionFile && args.flag("detectors"))
        throw UsageError("--detectors runs the model on its own probe: it needs MODEL, not --attention-file");
    const std::filesystem::path out = args.required("out");
    const std::string ext = out.extension().string();
    if (ext != ".json" && ext != ".csv")
        throw Error("--out " + out.string() + ": the file name must end in .json or .csv");
    if (args.value("source") && args.value("source") != std::optional<std::string>("weights"))
        for (const char* o : {"attention-file", "variant", "temperature", "feature-map", "features", "seed"})
            if (args.value(o))
                throw UsageError("--source " + *args.value("source") +
                                 " measures the model's own maps; it takes no --" + o);
    if (args.value("source") && args.value("source") != std::optional<std::string>("weights"))
        for (const char* f : {"flow", "detectors"})
            if (args.flag(f)) throw UsageError("--source " + *args.value("source") + " takes no --" + f);
    const std::optional<ModelInput> input = attentionFile ? std::nullopt : std::make_optional<ModelInput>(args);
    MetricsOptions options;
    options.map.temperature = args.number("temperature").value_or(1.0);
    if (!(options.map.temperature > 0) || !std::isfinite(options.map.temperature))
        throw Error("--temperature must be a finite number > 0");
    const std::string variant = args.value("variant").value_or("native");
    if (variant == "dot")
        options.map.variant = MapVariant::Dot;
    else if (variant == "linear")
        options.map.variant = MapVariant::Linear;
    else if (variant != "native")
        throw Error("--variant '" + variant + "' is not one of native, dot, linear");
    if (auto fm = args.value("feature-map")) {
        if (variant != "linear") throw UsageError("--feature-map needs --variant linear");
        if (*fm == "elu")
            options.map.featureMap = FeatureMap::Elu;
        else if (*fm == "relu")
            options.map.featureMap = FeatureMap::Relu;
        else if (*fm == "favor")
            options.map.featureMap = FeatureMap::Favor;
        else
            throw Error("--feature-map '" + *fm + "' is not one of elu, relu, favor");
    }
    if (args.value("features") && options.map.featureMap != FeatureMap::Favor)
        throw UsageError("--features needs --feature-map favor");
    if (auto m = args.integer("features", 1, 65536)) {
        options.map.features = static_cast<int>(*m);
    }
    if (auto seed = args.integer("seed", 0, kMaxSeed)) {
        options.map.seed = static_cast<std::uint64_t>(*seed);
    }
    if (auto sep = args.value("separators")) {
        options.separatorLabels.clear();
        std::istringstream in(*sep);
        for (std::string label; std::getline(in, label, ',');) options.separatorLabels.push_back(label);
    }
    const double sinkThreshold = args.number("sink-threshold").value_or(kSinkThreshold);
    if (!(sinkThreshold >= 0 && sinkThreshold < 1))
        throw Error("--sink-threshold must be in [0, 1) (a head is a sink when its score exceeds it), got " +
                    *args.value("sink-threshold"));
    if (args.value("flow-rows") && !args.flag("flow")) throw UsageError("--flow-rows needs --flow");
    FlowOptions flow;
    if (auto rows = args.value("flow-rows"))  // query positions, not layers
        for (std::int64_t r : parseIntegers(*rows, "--flow-rows", "row"))
            flow.rows.push_back(static_cast<int>(std::min<std::int64_t>(r, kMaxInt)));  // range-checked by the flow

    const bool detectors = args.flag("detectors");
    DetectorOptions detect;
    for (const char* o : {"probe-length", "probe-seed", "probe-first"})
        if (args.value(o) && !detectors) throw UsageError(std::string("--") + o + " needs --detectors");
    if (auto l = args.integer("probe-length", 2, 100000)) detect.repeatLength = static_cast<int>(*l);
    if (auto seed = args.integer("probe-seed", 0, kMaxSeed)) detect.seed = static_cast<std::uint64_t>(*seed);
    if (auto first = args.integer("probe-first", 0, kMaxInt)) detect.firstId = *first;
    detect.map = options.map;

    const MapSource source = parseMapSource(args.value("source").value_or("weights"));
    checkGradientOptions(args, source);
    if (source != MapSource::Weights) return runSourceMetrics(args, *input, source, options, out);
    if (args.value("block")) throw UsageError("--block needs --source (a source other than weights)");

    PhaseTimer timer(args.flag("timing"));
    std::shared_ptr<const Model> model;
    std::shared_ptr<const Trace> trace;
    if (attentionFile) {
        const std::string tokens = args.value("tokens").value_or(tokensBeside(*attentionFile).string());
        for (const std::string& in : {*attentionFile, tokens}) refuseOutputOverInput(out, in);
        trace = openAttentionFile(*attentionFile, tokens);
    } else {
        model = loadModel(args);
        timer.mark("open");
        trace = input->run(*model);
    }
    timer.mark("forward");
    // The .json file's similarity and rollout come from the same pass over the maps as the metrics.
    MetricsAndProducts all;
    if (ext == ".json") {
        ProductsAsked asked;
        asked.rollout = true;
        asked.layerMeans = args.flag("flow");  // the flow's graph is built from them
        all = headMetricsAndProducts(*trace, options, asked);
    } else {
        all.heads = headMetrics(*trace, options);
    }
    std::vector<HeadMetrics> metrics = std::move(all.heads);
    timer.mark(ext == ".json" ? "per-head metrics, similarity and rollout" : "per-head metrics");
    DetectorReport report;
    if (detectors) {
        report = headDetectors(*model, detect, {});
        attachDetectors(metrics, report.heads);
    }
    const std::string klNote = undefinedKlNote(*trace, metrics);
    if (ext == ".csv") {
        writeFileAtomically(out, csvOf(metrics, detectors));
    } else {
        nlohmann::json j = {{"ids", trace->ids()},
                            {"tokens", trace->tokens()},
                            {"variant", variant},
                            {"temperature", options.map.temperature}};
        const PatternThresholds& t = options.thresholds;
        j["pattern_thresholds"] = {{"diagonal", t.diagonal},     {"previous", t.previous},        {"global", t.global},
                                   {"local", t.local},           {"local_radius", t.localRadius}, {"sparse", t.sparse},
                                   {"sparse_keys", t.sparseKeys}};
        if (detectors) j["detector_probe"] = {{"ids", report.probe}, {"repeat_length", report.repeatLength}};
        const auto sinks = std::count_if(metrics.begin(), metrics.end(),
                                         [&](const HeadMetrics& m) { return m.sink > sinkThreshold; });
        j["sinks"] = {{"threshold", sinkThreshold},
                      {"rate", sinkRate(metrics, sinkThreshold)},
                      {"heads", static_cast<long long>(sinks)}};
        if (!klNote.empty()) j["notes"] = {klNote};
        j["heads"] = nlohmann::json::array();
        for (const HeadMetrics& m : metrics) j["heads"].push_back(headJson(m));
        // "blocks" first (the key order nlohmann writes), its matrices streamed; then the rest.
        JsonFileWriter file(out);
        file.raw("{\n \"blocks\": {");
        for (int b = 0; b < static_cast<int>(trace->blocks().size()); ++b) {
            const BlockInfo& info = trace->blocks()[b];
            std::vector<HeadMetrics> ofBlock;
            for (const HeadMetrics& m : metrics)
                if (m.block == info.name) ofBlock.push_back(m);
            BlockProducts& products = all.blocks[static_cast<std::size_t>(b)];
            const auto sim = cosineFromGram(products.gram);
            const int k = info.layers * info.heads;
            nlohmann::json similarity = nlohmann::json::array();
            for (int r = 0; r < k; ++r)
                similarity.push_back(std::vector<double>(sim.begin() + r * k, sim.begin() + (r + 1) * k));
            file.raw(std::string(b ? "," : "") + "\n  " + nlohmann::json(info.name).dump() + ": {");
            // rollout and flow need self-attention
            if (info.queryTokens.size() == info.keyTokens.size()) {
                if (args.flag("flow")) {
                    if (args.flag("progress")) flow.progress = stderrProgress("flow (" + info.name + ")", "pair");
                    file.raw("\n   \"flow\": ");
                    file.floatMatrix(attentionFlow(products.layerMeans, flow), 3);
                    file.raw(",");
                }
                file.raw("\n   \"rollout\": ");
                file.floatMatrix(products.rollout, 3);
                file.raw(",");
            }
            std::vector<HeadMap>().swap(products.layerMeans);  // layers·n² floats, not needed any more
            products.rollout = HeadMap{};
            file.raw("\n   \"similarity\": ");
            file.value(similarity, 3);
            file.raw(",\n   \"sink_rate\": ");
            file.value(sinkRate(ofBlock, sinkThreshold), 3);
            file.raw("\n  }");
        }
        file.raw("\n },");
        const std::string rest = j.dump(1);  // "{\n \"detector_probe\": ...": its keys sort after "blocks"
        file.raw(std::string_view(rest).substr(1));
        file.raw("\n");
        file.commit();
    }
    timer.mark("writing");
    if (!klNote.empty()) std::cerr << "note: " << klNote << "\n";
    std::cerr << "wrote " << out.string() << " (" << metrics.size() << " heads)\n";
    return 0;
}

}  // namespace

Command metricsCommand() {
    return {"metrics", "per-head attention metrics (.json or .csv)",
            "usage: attnscope-cli metrics MODEL (--ids 3,17,42 | --text STRING | --image FILE) --out FILE.json|FILE.csv\n"
            "                             [--type-ids 0,0,1,1] [--attend 1,1,1,0]\n"
            "                             [--device cpu|cuda|auto] [--temperature T] [--variant native|dot|linear]\n"
            "                             [--feature-map elu|relu|favor] [--features M] [--seed S]\n"
            "                             [--separators LABEL,LABEL] [--sink-threshold E]\n"
            "                             [--flow [--flow-rows 0,5] [--progress]] [--timing]\n"
            "                             [--detectors [--probe-length L] [--probe-seed S] [--probe-first ID]]\n"
            "                             [--source weights|value-norm|value-norm-layer|alti|alti-rollout [--block NAME]]\n"
            "                             [--source grad-weighted|relevance [--target-token ID | --target-class C]]\n"
            "       attnscope-cli metrics --attention-file MAPS.npy [--tokens TOKENS.json] --out FILE [options above]\n\n"
            "Per head of every block: entropy (nats), mean attention distance (tokens), attention to the first\n"
            "token (every row) and to separator tokens (labels, default [SEP], </s>, <|endoftext|>, <eos>,\n"
            "<sep>, [EOS]), the pattern class (diagonal, previous-token, global, local, sparse, mixed; rules\n"
            "and scores in core/include/attnscope/analysis/metrics.h), KL(dot || linear elu+1) and the sink\n"
            "score: the mean over queries i >= 1 of the attention on token 0. A head is a sink when its score\n"
            "exceeds E (--sink-threshold, in [0, 1), default 0.3); the .json file gives the share of sink heads\n"
            "(\"sinks\", and per block \"sink_rate\"). KL(dot || linear) is empty (null in .json) for the heads of\n"
            "layers whose logits add a soft-cap, ALiBi or a position bias (Gemma-2, BLOOM, Falcon with ALiBi,\n"
            "T5): linear attention has no place for them; a note says so. The .json file adds,\n"
            "per block, the head-to-head cosine similarity matrix (index layer·heads + head), the attention\n"
            "rollout and, with --flow, the attention flow (max-flow; all rows, or --flow-rows: query\n"
            "positions) of self-attention blocks, one row per line, each value a float32 in the shortest form\n"
            "that reads back as itself; --progress writes its progress, with the time left, on stderr.\n"
            "The .csv file has one row per head.\n"
            "--attention-file reads the maps from a .npy instead of running a model: [layers, heads, n, n],\n"
            "[heads, n, n] or [layers, 1, heads, n, n] probabilities (e.g. numpy.save of Hugging Face's\n"
            "torch.stack(outputs.attentions)), float16/32/64, with the tokens of --tokens (a JSON list, or\n"
            "the tokens.json 'attention' writes), else the tokens.json beside it, else positions. Such maps\n"
            "hold no Q/K: KL(dot || linear) is 0 and --variant linear is refused.\n"
            "--detectors adds TransformerLens's head detectors per head (previous token, duplicate token,\n"
            "induction, first token / sink), scored on a probe the detector builds and runs: one first id\n"
            "(--probe-first, default a random one), then L random ids (--probe-length, default\n"
            "min(50, (positions - 1) / 2); distinct, seeded by --probe-seed) and the same L ids again. Each\n"
            "score is the share of attention on the detection pattern over the rows that have a target\n"
            "(a perfect head scores 1; TransformerLens's detect_head divides by every row instead).\n"
            "JSON: \"detectors\" per head and \"detector_probe\"; CSV: det_* columns.\n"
            "--source S measures the maps of a map source instead of the weights (attention --help describes\n"
            "  them): per-head sources (value-norm) one row per head, per-layer sources (value-norm-layer,\n"
            "  alti, alti-rollout, relevance) one row per layer with head -1. Raw norms (value-norm,\n"
            "  value-norm-layer) and the signed grad-weighted are measured as shares: each row's |values|\n"
            "  divided by their sum. grad-weighted and relevance explain --target-token ID (decoder language\n"
            "  models) or --target-class C (classifiers, ViT), by default the model's argmax; the JSON names it\n"
            "  (target_kind, target, target_label, score). kl_dot_linear compares attention variants and\n"
            "  is left empty (CSV) / null (JSON) for a source; the JSON has \"map_source\" and the heads only (no\n"
            "  similarity, rollout or flow). Not with --attention-file, --variant, --temperature, --flow or\n"
            "  --detectors. --block NAME measures that block alone (an encoder-decoder's ALTI: --block encoder).\n"
            "--timing prints each phase's wall and CPU time on stderr.\n"
            "Invalid input exits with code 2 and one 'error: ...' line.\n",
            runMetrics};
}

}  // namespace attnscope::cli
