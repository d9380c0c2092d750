// The fitted feature maps of lab/hedgehog.h on disk: feature_maps.npy and feature_maps.json.
#include "attnscope/lab/hedgehog.h"

#include "attnscope/io/atomic_file.h"
#include "attnscope/io/input_file.h"
#include "attnscope/io/npy.h"
#include "attnscope/io/npy_file.h"
#include "attnscope/runtime/error.h"
#include "io/json_util.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <sstream>

namespace attnscope {

namespace {

nlohmann::json hedgehogChangeJson(const OutputChangeSummary& c) {
    return {{"kind", c.kind},
            {"mean_kl", c.meanKl},
            {"top1_agreement", c.top1Agreement},
            {"mean_magnitude", c.meanMagnitude},
            {"inputs", c.inputs}};
}

OutputChangeSummary hedgehogChangeFrom(const nlohmann::json& j) {
    OutputChangeSummary c;
    c.kind = j.at("kind").get<std::string>();
    c.meanKl = j.at("mean_kl").get<double>();
    c.top1Agreement = j.at("top1_agreement").get<double>();
    c.meanMagnitude = j.at("mean_magnitude").get<double>();
    c.inputs = j.at("inputs").get<int>();
    return c;
}

double hedgehogMean(const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? 0 : s / static_cast<double>(v.size());
}

std::string readHedgehogFile(const std::filesystem::path& file) {
    refuseNonRegularFile(file);  // the input rule: no FIFO that hangs, no /dev/zero read without end
    std::ifstream in(file, std::ios::binary);
    if (!in) throw Error(file.string() + ": cannot be read (a distil --per-head output folder has it)");
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::vector<double> hedgehogNpy(const std::filesystem::path& file, const std::vector<std::int64_t>& shape) {
    const auto npy = NpyFile::open(file);
    if (npy->shape() != shape || npy->dtype() != NpyDType::Float32)
        throw Error(file.string() + ": not a float32 array of the shape report.json gives");
    const float* v = static_cast<const float*>(npy->data());
    return std::vector<double>(v, v + npy->elements());
}

}  // namespace

void writeFeatureMaps(const std::filesystem::path& dir, const HedgehogResult& result) {
    const int d = result.dim;
    std::vector<float> values;
    values.reserve(result.fitted.size() * 2 * static_cast<std::size_t>(d) * (d + 1));
    for (const LinearHead& head : result.fitted)
        for (const LearnedFeatureMap* side : {&head.query, &head.key})
            for (int row = 0; row < d; ++row) {
                values.insert(values.end(), side->weight.begin() + static_cast<std::ptrdiff_t>(row) * d,
                              side->weight.begin() + static_cast<std::ptrdiff_t>(row + 1) * d);
                values.push_back(side->bias[static_cast<std::size_t>(row)]);
            }
    writeNpy(dir / "feature_maps.npy", {static_cast<std::int64_t>(result.layers.size()), result.heads, 2, d, d + 1},
             values);
    nlohmann::json meta = {{"block", result.block}, {"layers", result.layers}, {"heads", result.heads}, {"dim", d}};
    writeFileAtomically(dir / "feature_maps.json", meta.dump(2) + "\n");
}

std::vector<LinearHead> readFeatureMaps(const std::filesystem::path& dir) {
    const std::filesystem::path jsonFile = dir / "feature_maps.json", npyFile = dir / "feature_maps.npy";
    const nlohmann::json meta = parseJson(readHedgehogFile(jsonFile), jsonFile.string());
    std::string block;
    std::vector<int> layers;
    int heads = 0, d = 0;
    try {
        block = meta.at("block").get<std::string>();
        layers = meta.at("layers").get<std::vector<int>>();
        heads = meta.at("heads").get<int>();
        d = meta.at("dim").get<int>();
    } catch (const nlohmann::json::exception&) {
        throw Error(jsonFile.string() + ": needs \"block\" (a string), \"layers\" (integers), \"heads\" and \"dim\"");
    }
    if (heads < 1 || d < 1 || d > 4096 || layers.empty())
        throw Error(jsonFile.string() + ": heads, dim and the layer list must be positive and not empty");
    const auto file = NpyFile::open(npyFile);
    const std::vector<std::int64_t> shape = {static_cast<std::int64_t>(layers.size()), heads, 2, d, d + 1};
    if (file->shape() != shape || file->dtype() != NpyDType::Float32)
        throw Error(npyFile.string() + ": expected float32 [" + std::to_string(layers.size()) + ", " +
                    std::to_string(heads) + ", 2, " + std::to_string(d) + ", " + std::to_string(d + 1) +
                    "] as feature_maps.json describes");
    const float* v = static_cast<const float*>(file->data());
    for (std::uint64_t i = 0; i < file->elements(); ++i)
        if (!std::isfinite(v[i])) throw Error(npyFile.string() + ": element " + std::to_string(i) + " is not finite");
    std::vector<LinearHead> out;
    for (int layer : layers)
        for (int h = 0; h < heads; ++h) {
            LinearHead head;
            head.head = {block, layer, h};
            for (LearnedFeatureMap* side : {&head.query, &head.key}) {
                side->features = side->dim = d;
                for (int row = 0; row < d; ++row, v += d + 1) {
                    side->weight.insert(side->weight.end(), v, v + d);
                    side->bias.push_back(v[d]);
                }
            }
            out.push_back(std::move(head));
        }
    return out;
}

std::vector<std::string> hedgehogReportFiles() {
    return {"feature_maps.npy", "feature_maps.json", "kl.npy", "kl_train.npy", "loss.csv", "report.json"};
}

void writeHedgehogReport(const std::filesystem::path& dir, const HedgehogResult& r, const HedgehogOptions& o,
                         const std::string& teacher) {
    writeFeatureMaps(dir, r);
    std::vector<float> kl;
    for (const auto* v : {&r.klElu, &r.klInitial, &r.klFitted})
        for (double x : *v) kl.push_back(static_cast<float>(x));
    const auto layers = static_cast<std::int64_t>(r.layers.size());
    writeNpy(dir / "kl.npy", {3, layers, r.heads}, kl);
    writeNpy(dir / "kl_train.npy", {layers, r.heads}, std::vector<float>(r.trainKl.begin(), r.trainKl.end()));
    std::ostringstream loss;
    loss.precision(9);
    loss << "step,loss\n";
    for (std::size_t i = 0; i < r.lossHistory.size(); ++i) loss << i + 1 << ',' << r.lossHistory[i] << '\n';
    writeFileAtomically(dir / "loss.csv", loss.str());
    const nlohmann::json report = {
            {"teacher", teacher},
            {"block", r.block},
            {"layers", r.layers},
            {"heads", r.heads},
            {"head_dim", r.dim},
            {"feature_map", "phi(x) = [softmax(Wx+b), softmax(-(Wx+b))], W d x d, per head for queries and keys"},
            {"steps", o.steps},
            {"learning_rate", o.learningRate},
            {"batch", o.batch},
            {"seed", o.seed},
            {"train_inputs", r.trainInputs},
            {"eval_inputs", r.evalInputs},
            {"held_out", r.heldOut},
            {"kl_rows", {"elu+1", "untrained (W = I, b = 0)", "distilled"}},
            {"mean_kl",
             {{"elu+1", hedgehogMean(r.klElu)},
              {"untrained", hedgehogMean(r.klInitial)},
              {"distilled", hedgehogMean(r.klFitted)},
              {"distilled_train", hedgehogMean(r.trainKl)}}},
            {"output_change",
             {{"distilled", hedgehogChangeJson(r.changeFitted)}, {"untrained", hedgehogChangeJson(r.changeInitial)}}},
            {"train_seconds", r.trainSeconds},
            {"eval_seconds", r.evalSeconds}};
    writeFileAtomically(dir / "report.json", report.dump(2) + "\n");
}

HedgehogResult readHedgehogReport(const std::filesystem::path& dir) {
    const std::filesystem::path reportFile = dir / "report.json";
    const nlohmann::json j = parseJson(readHedgehogFile(reportFile), reportFile.string());
    HedgehogResult r;
    try {
        r.block = j.at("block").get<std::string>();
        r.layers = j.at("layers").get<std::vector<int>>();
        r.heads = j.at("heads").get<int>();
        r.dim = j.at("head_dim").get<int>();
        r.trainInputs = j.at("train_inputs").get<int>();
        r.evalInputs = j.at("eval_inputs").get<int>();
        r.heldOut = j.at("held_out").get<bool>();
        r.changeFitted = hedgehogChangeFrom(j.at("output_change").at("distilled"));
        r.changeInitial = hedgehogChangeFrom(j.at("output_change").at("untrained"));
        r.trainSeconds = j.at("train_seconds").get<double>();
        r.evalSeconds = j.at("eval_seconds").get<double>();
    } catch (const nlohmann::json::exception& e) {
        throw Error(reportFile.string() + ": not a distil --per-head report (" + e.what() + ")");
    }
    if (r.heads < 1 || r.layers.empty()) throw Error(reportFile.string() + ": no heads or no layers");
    const auto layers = static_cast<std::int64_t>(r.layers.size()), heads = static_cast<std::int64_t>(r.heads);
    const std::vector<double> kl = hedgehogNpy(dir / "kl.npy", {3, layers, heads});
    const auto part = [&](int row) {
        return std::vector<double>(kl.begin() + row * layers * heads, kl.begin() + (row + 1) * layers * heads);
    };
    r.klElu = part(0);
    r.klInitial = part(1);
    r.klFitted = part(2);
    r.trainKl = hedgehogNpy(dir / "kl_train.npy", {layers, heads});
    std::istringstream loss(readHedgehogFile(dir / "loss.csv"));
    std::string line;
    std::getline(loss, line);
    while (std::getline(loss, line)) {
        const auto comma = line.find(',');
        try {
            if (comma == std::string::npos) throw std::invalid_argument(line);
            r.lossHistory.push_back(std::stod(line.substr(comma + 1)));
        } catch (const std::exception&) {
            throw Error((dir / "loss.csv").string() + ": line " + std::to_string(r.lossHistory.size() + 2) +
                        " is not step,loss");
        }
    }
    r.fitted = readFeatureMaps(dir);
    return r;
}

}  // namespace attnscope
