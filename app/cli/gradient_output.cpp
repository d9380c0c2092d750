#include "gradient_output.h"

#include "common.h"

#include "attnscope/analysis/gradient_sources.h"
#include "attnscope/io/atomic_file.h"
#include "attnscope/io/npy.h"
#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <iostream>

namespace attnscope::cli {

namespace {

constexpr long long kMaxTokenId = 1LL << 40;  // far above any vocabulary; the model checks its own range

// --target-class C: a class index (digits) or a label name.
void parseTargetClass(const std::string& text, GradientTarget& target) {
    const bool digits = !text.empty() && text.size() < 10 &&
                        std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); });
    if (digits)
        target.classIndex = std::stoi(text);
    else
        target.classLabel = text;
}

// The rows' labels: the vocabulary strings of the ids, or an image model's ([CLS], patches rRcC, …).
std::vector<std::string> tokenLabels(const Model& model, const GradientInput& in) {
    if (!in.image) return model.tokenLabels(in.text.ids);
    return imageTokenLabels(model.info());
}

}  // namespace

std::set<std::string> withGradientOptions(std::set<std::string> options) {
    options.insert({"target-token", "target-class"});
    return options;
}

void checkGradientOptions(const Args& args, MapSource source) {
    const bool token = args.value("target-token").has_value(), cls = args.value("target-class").has_value();
    if (!gradientSource(source)) {
        if (token || cls) throw UsageError("--target-token and --target-class need --source grad-weighted|relevance");
        return;
    }
    if (token && cls) throw UsageError("give either --target-token or --target-class, not both");
    for (const char* option : {"variant", "prune", "generate", "alignment", "capture-dtype"})
        if (args.value(option))
            throw UsageError(std::string("--") + option + " does not go with --source " + sourceName(source));
    args.integer("target-token", 0, kMaxTokenId);  // a malformed id fails before loading
}

GradientTarget parseGradientTarget(const Args& args, const Model& model) {
    const bool classes = !gradientClassLabels(model).empty();  // refuses a model the sources do not cover
    const std::string family = model.info().family;
    GradientTarget target;
    if (auto token = args.integer("target-token", 0, kMaxTokenId)) {
        if (classes)
            throw Error("--target-token is for decoder language models; " + family +
                        " explains a class (--target-class)");
        target.token = *token;
    }
    if (auto cls = args.value("target-class")) {
        if (!classes)
            throw Error("--target-class is for classifiers; " + family + " is a language model (--target-token)");
        parseTargetClass(*cls, target);
    }
    return target;
}

void addGradientTargetJson(nlohmann::json& j, const GradientMaps& maps, bool classes) {
    j["target_kind"] = classes ? "class" : "token";
    j["target"] = maps.target;
    j["target_label"] = maps.targetLabel;
    j["score"] = maps.score;
}

int writeGradientSource(const Args& args, const Model& model, const ModelInput& input, MapSource source,
                        const RunOptions& run, const std::string& outDir) {
    const GradientTarget target = parseGradientTarget(args, model);
    const bool classes = !gradientClassLabels(model).empty();
    const GradientInput in = input.gradientInput(model);
    const GradientMaps maps = gradientSources(model, in, target, run, run.progress);

    const std::filesystem::path out = prepareOutDir(outDir);
    StagedOutputs staged(out);
    const bool perHead = perHeadSource(source);
    const std::vector<std::int64_t> shape{maps.layers, perHead ? maps.heads : 1, maps.tokens, maps.tokens};
    NpyWriter npy(staged.path("attention.npy"), shape);
    const std::vector<float>& values = perHead ? maps.gradWeighted : maps.relevance;
    npy.append(values.data(), values.size());
    npy.finish();

    const std::vector<std::string> labels = tokenLabels(model, in);
    nlohmann::json tokens = {{"ids", in.image ? std::vector<std::int64_t>{} : in.text.ids},
                             {"tokens", labels},
                             {"map_source", sourceName(source)}};
    addGradientTargetJson(tokens, maps, classes);
    tokens["blocks"]["self"] = {{"kind", "dot"}, {"queries", labels}, {"keys", labels}};
    writeFileAtomically(staged.path("tokens.json"), tokens.dump(2) + "\n");
    staged.commit();
    std::cout << sourceName(source) << ": s = " << maps.score << ", the logit of " << (classes ? "class " : "token ")
              << maps.target << " (" << maps.targetLabel << ")\n";
    std::cerr << "wrote " << (out / "attention.npy").string() << " [" << shape[0] << ", " << shape[1] << ", "
              << shape[2] << ", " << shape[3] << "]\n";
    std::cerr << "wrote " << (out / "tokens.json").string() << "\n";
    return 0;
}

}  // namespace attnscope::cli
