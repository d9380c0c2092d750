#include "lab_output.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

namespace attnscope::cli {

namespace {

std::string cell(const TokenProbability& t) {
    std::ostringstream s;
    s << std::left << std::setw(14) << t.label << " " << std::fixed << std::setprecision(4) << t.probability;
    return s.str();
}

}  // namespace

void printOutputChange(std::ostream& out, const OutputChange& c, const std::string& what) {
    out << "output change (" << what << "):\n";
    if (c.kind == "next-token" || c.kind == "class")
        out << "  KL(original || changed) = " << std::setprecision(6) << c.kl << " nats; top "
            << (c.sameTop ? "unchanged" : "changed") << "\n";
    if (c.kind == "next-token") {
        out << "  rank  original                 changed\n";
        for (std::size_t r = 0; r < c.originalTop.size(); ++r)
            out << "  " << std::left << std::setw(4) << r + 1 << "  " << std::setw(24) << cell(c.originalTop[r]) << " "
                << cell(c.changedTop[r]) << "\n";
    } else if (c.kind == "class") {
        out << "  class           original  changed\n";
        for (std::size_t i = 0; i < c.classLabels.size(); ++i)
            out << "  " << std::left << std::setw(14) << c.classLabels[i] << "  " << std::fixed << std::setprecision(4)
                << c.originalProbabilities[i] << "    " << c.changedProbabilities[i] << "\n";
    } else if (c.kind == "sequence") {
        auto join = [](const std::vector<std::string>& t) {
            std::string s;
            for (const auto& x : t) s += (s.empty() ? "" : " ") + x;
            return s;
        };
        out << "  original: " << join(c.originalOutput) << "\n  changed:  " << join(c.changedOutput) << "\n  "
            << c.changedPositions << " output positions differ\n";
        if (!c.originalTargetLogProbs.empty()) {
            double before = 0, after = 0;
            for (std::size_t i = 0; i < c.originalTargetLogProbs.size(); ++i)
                before += c.originalTargetLogProbs[i], after += c.changedTargetLogProbs[i];
            out << "  target log-probability " << std::fixed << std::setprecision(4) << before << " -> " << after
                << " (mean |change| per token " << c.meanLogProbChange << ")\n";
        }
    } else if (c.kind == "hidden") {
        out << "  final hidden states, cosine distance 1 - cos(original, changed) per token:\n"
            << "  mean " << std::setprecision(6) << c.meanCosineDistance << ", max " << c.maxCosineDistance;
        if (c.mostChangedToken >= 0) out << " at token " << c.mostChangedToken << " '" << c.mostChangedLabel << "'";
        out << "\n";
    } else if (c.kind == "similarity") {
        out << "  image-text logit " << std::setprecision(6) << c.originalLogit << " -> " << c.changedLogit << "\n";
    } else {
        out << "  the model has no outputs to compare\n";
    }
}

nlohmann::json outputChangeJson(const OutputChange& c) {
    nlohmann::json j = {{"kind", c.kind}, {"kl", c.kl}, {"same_top", c.sameTop}};
    auto top = [](const std::vector<TokenProbability>& v) {
        nlohmann::json a = nlohmann::json::array();
        for (const auto& t : v) a.push_back({{"id", t.id}, {"token", t.label}, {"probability", t.probability}});
        return a;
    };
    if (c.kind == "next-token") {
        j["original_top"] = top(c.originalTop);
        j["changed_top"] = top(c.changedTop);
    } else if (c.kind == "class") {
        j["labels"] = c.classLabels;
        j["original_probabilities"] = c.originalProbabilities;
        j["changed_probabilities"] = c.changedProbabilities;
    } else if (c.kind == "sequence") {
        j["original_output"] = c.originalOutput;
        j["changed_output"] = c.changedOutput;
        j["changed_positions"] = c.changedPositions;
        if (!c.originalTargetLogProbs.empty()) {
            j["original_target_log_probs"] = c.originalTargetLogProbs;
            j["changed_target_log_probs"] = c.changedTargetLogProbs;
            j["mean_log_prob_change"] = c.meanLogProbChange;
        }
    } else if (c.kind == "hidden") {
        j["mean_cosine_distance"] = c.meanCosineDistance;
        j["max_cosine_distance"] = c.maxCosineDistance;
        j["most_changed_token"] = c.mostChangedToken;
        j["most_changed_label"] = c.mostChangedLabel;
        j["cosine_distances"] = c.cosineDistances;
    } else if (c.kind == "similarity") {
        j["original_logit"] = c.originalLogit;
        j["changed_logit"] = c.changedLogit;
    }
    return j;
}

std::vector<LinearHead> hedgehogHeads(const Args& args) {
    const bool hedgehog = args.value("variant") == std::optional<std::string>("hedgehog");
    if (!hedgehog) {
        if (args.value("feature-file")) throw UsageError("--feature-file needs --variant hedgehog");
        return {};
    }
    const auto dir = args.value("feature-file");
    if (!dir) throw UsageError("--variant hedgehog needs --feature-file DIR (a distil --per-head folder)");
    return readFeatureMaps(*dir);
}

const LinearHead* findLinearHead(const std::vector<LinearHead>& heads, const std::string& block, int layer, int head) {
    const LinearHead* found = nullptr;  // the last entry wins, as in the forward
    for (const LinearHead& h : heads)
        if ((h.head.block.empty() || h.head.block == block) && h.head.layer == layer && h.head.head == head) found = &h;
    return found;
}

}  // namespace attnscope::cli
