#include "distillation.h"

#include "attnscope/runtime/error.h"
#include "io/json_util.h"
#include "io/weights.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <algorithm>
#include <string>

namespace attnscope::builtin {

int mappedLayer(int layer, int studentLayers, int teacherLayers) {
    return std::max(0, (layer + 1) * teacherLayers / studentLayers - 1);
}

std::pair<int, int> mappedHeads(int head, int studentHeads, int teacherHeads) {
    const int first = head * teacherHeads / studentHeads;
    return {first, std::max(first + 1, (head + 1) * teacherHeads / studentHeads)};
}

at::Tensor mapKl(const at::Tensor& teacher, const at::Tensor& student, const at::Tensor& rows) {
    // t = 0 terms: 0 · (finite) = 0, the 0 · log 0 = 0 convention, without NaN in the graph.
    const at::Tensor logT = teacher.clamp_min(1e-30).log();
    const at::Tensor perRow = (teacher * (logT - student.clamp_min(kKlFloor).log())).sum(-1);  // [B, H, n]
    if (!rows.defined()) return perRow.mean();
    const at::Tensor keep = rows.view({rows.size(0), 1, rows.size(1)}).expand_as(perRow);
    const at::Tensor count = keep.sum().clamp_min(1).to(perRow.scalar_type());
    return at::where(keep, perRow, at::zeros_like(perRow)).sum() / count;
}

namespace {

std::string modelKind(const Config& c) { return c.seq2seq ? "an encoder-decoder" : "a classifier"; }

void checkVocabulary(const std::filesystem::path& folder, const Config& t, const Config& s, const Symbols& symbols) {
    const Symbols teacher = Symbols::read(folder, t.task, t.vocabSize, t.fileTask, t.perCharacter);
    if (teacher.size() != symbols.size())
        throw Error("teacher " + folder.string() + ": its vocabulary has " + std::to_string(teacher.size()) +
                    " symbols, the student's task has " + std::to_string(symbols.size()));
    for (int id = 0; id < symbols.size(); ++id)
        if (teacher.label(id) != symbols.label(id))
            throw Error("teacher " + folder.string() + ": vocabulary differs from the student's task at id " +
                        std::to_string(id) + " ('" + teacher.label(id) + "' against '" + symbols.label(id) + "')");
    if (t.maxSource < s.maxSource || (s.seq2seq && t.maxTarget < s.maxTarget))
        throw Error("teacher " + folder.string() + ": its positions are fewer than the student's task inputs need");
}

// Layers of a block: the encoder's ("encoder", "self") or the decoder's ("decoder", "cross").
int blockLayers(const Config& c, const std::string& block) {
    return block == "decoder" || block == "cross" ? c.decoderLayers : c.encoderLayers;
}

}  // namespace

Teacher loadTeacher(const std::filesystem::path& folder, const Config& student, const Symbols& studentSymbols) {
    const std::filesystem::path file = folder / "config.json";
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec))
        throw Error("teacher " + folder.string() + ": no config.json (expected a built-in model folder)");
    const JsonConfig json(readJsonObject(file), file);
    const std::string type = json.string("model_type", "");
    if (type != kSeq2seqType && type != kClassifierType)
        throw Error("teacher " + folder.string() + ": model_type '" + type +
                    "' is not a built-in model (attnscope-seq2seq or attnscope-classifier)");
    Teacher t;
    t.config = parseConfig(json);
    if (t.config.seq2seq != student.seq2seq)
        throw Error("teacher " + folder.string() + " is " + modelKind(t.config) + ", the student's task needs " +
                    modelKind(student));
    checkVocabulary(folder, t.config, student, studentSymbols);
    at::NoGradGuard noGrad;
    WeightStore store(folder, c10::Device(c10::kCPU));
    for (const auto& [name, shape] : parameterShapes(t.config))
        t.weights[name] = store.get(name, shape).to(at::kFloat).clone();
    return t;
}

at::Tensor distillationKl(const Teacher& teacher, const Config& student, const std::vector<SiteMap>& studentMaps,
                          const Batch& batch) {
    std::vector<SiteMap> teacherMaps;
    {
        at::NoGradGuard noGrad;
        taskLoss(teacher.weights, teacher.config, batch, &teacherMaps);
    }
    const at::Tensor targetRows = student.seq2seq ? batch.targetIn.ne(kPad) : at::Tensor();
    at::Tensor total;
    for (const SiteMap& s : studentMaps) {
        const int layer = mappedLayer(s.layer, blockLayers(student, s.block), blockLayers(teacher.config, s.block));
        const auto t = std::find_if(teacherMaps.begin(), teacherMaps.end(),
                                    [&](const SiteMap& m) { return m.block == s.block && m.layer == layer; });
        if (t == teacherMaps.end())
            throw Error("distillation: the teacher has no " + s.block + " layer " + std::to_string(layer));
        std::vector<at::Tensor> heads;
        for (int h = 0; h < student.heads; ++h) {
            const auto [first, last] = mappedHeads(h, student.heads, teacher.config.heads);
            heads.push_back(t->probs.narrow(1, first, last - first).mean(1));
        }
        const at::Tensor rows = s.block == "decoder" || s.block == "cross" ? targetRows : batch.sourceAllowed;
        const at::Tensor kl = mapKl(at::stack(heads, 1), s.probs, rows);
        total = total.defined() ? total + kl : kl;
    }
    return total / static_cast<double>(studentMaps.size());
}

}  // namespace attnscope::builtin
