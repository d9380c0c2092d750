// Per-example outcomes and record files of corpus runs (see corpus_eval.h).
#include "corpus_eval.h"

#include "attnscope/attention/trace.h"
#include "attnscope/io/atomic_file.h"
#include "attnscope/io/input_file.h"
#include "attnscope/lab/interventions.h"
#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>

namespace attnscope {

namespace {

template <typename T>
long argmaxIndex(const std::vector<T>& v) {
    return static_cast<long>(std::max_element(v.begin(), v.end()) - v.begin());
}

}  // namespace

Originals runOriginals(const Model& model, const CorpusExample& example, int maxNewTokens) {
    Originals o;
    TextInput in = example.input;
    in.maxNewTokens = maxNewTokens;
    in.targetIds.clear();
    if (!example.targetIds.empty()) {
        TextInput forced = in;
        forced.targetIds = example.targetIds;
        o.main = model.forwardText(forced);
        o.greedy = model.forwardText(in);
    } else {
        o.main = model.forwardText(in);
    }
    return o;
}

std::string outputKind(const Trace& trace) {
    if (!trace.nextTokenLogits().empty()) return "next-token";
    if (!trace.classProbabilities().empty()) return "class";
    if (!trace.outputIds().empty() || !trace.targetLogProbs().empty()) return "sequence";
    if (trace.finalHiddenWidth() > 0) return "hidden";
    throw Error(
            "the model gives no output a corpus analysis can compare (no next-token logits, classes, sequence or hidden states)");
}

Outcome evaluate(const Model& model, const CorpusExample& example, const Originals& o,
                 const std::vector<HeadRef>& masked) {
    std::shared_ptr<const Trace> m = o.main, g = o.greedy;
    if (!masked.empty()) {
        RunOptions options;
        options.maskHeads = masked;
        m = rerun(model, *o.main, options, 1).trace;
        if (o.greedy) g = rerun(model, *o.greedy, options, 1).trace;
    }
    Outcome r;
    const OutputChange change = compareOutputs(*o.main, *m, 1);
    r.change = change.magnitude();
    const std::string kind = outputKind(*o.main);
    if (kind == "class") {
        const auto& p = m->classProbabilities();
        if (example.label >= 0) {
            r.labelProb = p.at(example.label);
            r.metric = argmaxIndex(p) == example.label ? 1.0 : 0.0;
        } else {
            r.metric = argmaxIndex(p) == argmaxIndex(o.main->classProbabilities()) ? 1.0 : 0.0;
        }
    } else if (kind == "sequence") {
        if (g) {  // exact match: the greedy output equals the target's decoder ids after the start token
            const std::vector<std::int64_t> want(example.targetIds.begin() + 1, example.targetIds.end());
            r.metric = g->outputIds() == want ? 1.0 : 0.0;
        } else {
            r.metric = m->outputIds() == o.main->outputIds() ? 1.0 : 0.0;
        }
    } else if (kind == "next-token") {
        r.metric = argmaxIndex(m->nextTokenLogits()) == argmaxIndex(o.main->nextTokenLogits()) ? 1.0 : 0.0;
    } else {
        r.metric = 1.0 - change.meanCosineDistance;
    }
    return r;
}

std::vector<HeadRef> traceHeads(const Trace& trace) {
    std::vector<HeadRef> heads;
    for (const BlockInfo& b : trace.blocks())
        for (int l = 0; l < b.layers; ++l)
            for (int h = 0; h < b.heads; ++h) heads.push_back({b.name, l, h});
    return heads;
}

RecordFile::RecordFile(std::filesystem::path path, std::string key) : path_(std::move(path)), key_(std::move(key)) {
    std::error_code ec;
    if (!std::filesystem::exists(path_, ec)) return;  // no records yet
    // The input rule (a link to /dev/zero or a FIFO is refused); records have no size bound of
    // their own, a regular file's size is its bound.
    const std::string all = readInputFile(path_, std::numeric_limits<std::uint64_t>::max(), "record file");
    std::size_t kept = 0, pos = 0;
    while (pos < all.size()) {
        const std::size_t end = all.find('\n', pos);
        if (end == std::string::npos) break;  // a half-written last line
        try {
            nlohmann::json j = nlohmann::json::parse(all.begin() + pos, all.begin() + end);
            const int key = j.at(key_).get<int>();  // before the move: json's operator= takes its argument by value
            records_[key] = std::move(j);
        } catch (const nlohmann::json::exception&) {
            break;  // a damaged record: it and what follows are computed again
        }
        pos = kept = end + 1;
    }
    if (kept != all.size()) {
        std::ostringstream s;
        for (const auto& [k, j] : records_) s << j.dump() << "\n";
        writeFileAtomically(path_, s.str());
    }
}

void RecordFile::append(const nlohmann::json& record) {
    std::ofstream out(path_, std::ios::binary | std::ios::app);
    out << record.dump() << "\n";
    out.flush();
    if (!out) throw Error(path_.string() + ": cannot be written");
    records_[record.at(key_).get<int>()] = record;
}

void RecordFile::writeAll(const std::filesystem::path& path, const std::map<int, nlohmann::json>& records) {
    std::ostringstream s;
    for (const auto& [k, j] : records) s << j.dump() << "\n";
    writeFileAtomically(path, s.str());
}

}  // namespace attnscope
