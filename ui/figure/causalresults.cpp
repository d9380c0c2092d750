#include "figure/causalresults.h"

#include "figure/headfigure.h"
#include "figure/labels.h"

#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"
#include "attnscope/tokenizer/tokenizer.h"

#include <QObject>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace {

QStringList numbered(int count) {
    QStringList out;
    for (int i = 0; i < count; ++i) out << QString::number(i);
    return out;
}

// "logit(' Paris') − logit(' London')" for titles.
QString ldName(const QString& answer, const QString& wrong) {
    return wrong.isEmpty() ? QObject::tr("logit(%1)").arg(answer)
                           : QObject::tr("logit(%1) − logit(%2)").arg(answer, wrong);
}

const QStringList kWhatKeys = {QStringLiteral("heads"), QStringLiteral("resid"), QStringLiteral("attn_out"),
                               QStringLiteral("mlp_out")};  // attnscope::PatchWhat's order

}  // namespace

QString patchWhatName(attnscope::PatchWhat what) {
    switch (what) {
        case attnscope::PatchWhat::Heads: return QObject::tr("heads");
        case attnscope::PatchWhat::Resid: return QObject::tr("residual stream");
        case attnscope::PatchWhat::AttnOut: return QObject::tr("attention out");
        case attnscope::PatchWhat::MlpOut: return QObject::tr("MLP out");
    }
    return {};
}

QStringList vocabularyLabels(const attnscope::Model& model, const std::vector<std::int64_t>& ids) {
    QStringList out;
    const attnscope::Tokenizer* tokenizer = model.tokenizer();
    for (std::int64_t id : ids)
        out << (tokenizer ? QString::fromStdString(tokenizer->displayToken(id)) : QStringLiteral("#%1").arg(id));
    return out;
}

std::vector<std::int64_t> lensPredictions(const attnscope::LogitLens& lens, std::int64_t position) {
    std::vector<std::int64_t> ids;
    for (int k = 0; k < lens.k; ++k)
        ids.push_back(lens.topIds[std::size_t(((lens.rows - 1) * std::int64_t(lens.tokens) + position) * lens.k + k)]);
    return ids;
}

LensFigure lensFigure(const attnscope::LogitLens& lens, const QStringList& topTexts, const QStringList& tokens,
                      const QString& modelName, Colormap colormap) {
    LensFigure f;
    f.rows = lens.rows;
    f.cols = lens.tokens;
    f.k = lens.k;
    for (int row = 0; row < lens.rows; ++row)
        f.rowLabels << (row == 0               ? QObject::tr("0 embed")
                        : row == lens.rows - 1 ? QObject::tr("%1 final").arg(row)
                                               : QString::number(row));
    f.colLabels = tokens;
    f.topText = topTexts;
    for (float lp : lens.topLogProbs) f.topProb.push_back(std::exp(lp));
    f.colormap = colormap;
    f.title = QObject::tr("Logit lens · %1 · top next token per layer (before any final soft-cap)").arg(modelName);
    return f;
}

SignedMapFigure dlaFigure(const attnscope::LogitAttribution& d, const QString& answer, const QString& wrong) {
    SignedMapFigure f;
    f.rows = d.layers;
    f.cols = d.heads;
    f.values = d.perHead;
    f.rowLabels = numbered(d.layers);
    f.colLabels = numbered(d.heads);
    f.title = QObject::tr("DLA of %1 at P = %2").arg(ldName(answer, wrong)).arg(d.position);
    f.notes << QObject::tr("Σ parts %1 = logit difference %2 (final bias %3 included; before any soft-cap)")
                       .arg(causalNumber(d.sum), causalNumber(d.logitDiff), causalNumber(d.finalBias));
    f.bars.emplace_back(QObject::tr("embed"), d.embed);
    const bool biases = std::any_of(d.attnBias.begin(), d.attnBias.end(), [](double b) { return b != 0; });
    for (int l = 0; l < d.layers; ++l) {
        if (biases) f.bars.emplace_back(QObject::tr("attn bias %1").arg(l), d.attnBias[std::size_t(l)]);
        f.bars.emplace_back(QObject::tr("MLP %1").arg(l), d.mlp[std::size_t(l)]);
    }
    f.barsTitle = biases ? QObject::tr("embeddings, attention biases and MLPs")
                         : QObject::tr("embeddings and MLPs (no attention biases)");
    return f;
}

SignedMapFigure patchFigure(const attnscope::PatchResult& p, attnscope::PatchWhat what, bool attribution,
                            const QStringList& tokens) {
    SignedMapFigure f;
    f.rows = p.rows;
    f.cols = p.cols;
    f.values.assign(p.scores.begin(), p.scores.end());
    f.rowLabels = numbered(p.rows);
    const bool heads = what == attnscope::PatchWhat::Heads;
    f.colLabels = heads ? numbered(p.cols) : tokens;
    f.colAxis = heads ? QObject::tr("head") : QObject::tr("position");
    f.title = QObject::tr("Patching %1 (%2) at P = %3")
                      .arg(patchWhatName(what), attribution ? QObject::tr("attribution") : QObject::tr("exact"))
                      .arg(p.position);
    f.notes << QObject::tr("LD clean %1 · LD corrupt %2 (score 1: as clean, 0: as corrupt)")
                       .arg(causalNumber(p.ldClean), causalNumber(p.ldCorrupt));
    return f;
}

PaintedFigure paintedLens(LensFigure f) {
    if (f.empty()) return {};
    f.fontSize = 7;
    f.focusRow = f.focusCol = -1;
    const QString title = f.title.isEmpty() ? QStringLiteral("Logit lens") : f.title;
    return {[f](double width) { return lensFigureSize(f, width); },
            [f](QPainter& p, const QSizeF& s) { paintLensFigure(p, f, QRectF(QPointF(0, 0), s)); }, title};
}

PaintedFigure paintedSignedMap(SignedMapFigure f) {
    if (f.empty()) return {};
    f.fontSize = 7;
    f.focusRow = f.focusCol = -1;
    const QString title = f.title.isEmpty() ? QStringLiteral("Causal map") : f.title;
    return {[f](double width) { return signedMapFigureSize(f, width); },
            [f](QPainter& p, const QSizeF& s) { paintSignedMapFigure(p, f, QRectF(QPointF(0, 0), s)); }, title};
}

CausalLensRun runCausalLens(const attnscope::Model& model, const std::vector<std::int64_t>& ids, std::int64_t position,
                            const attnscope::Progress& progress) {
    const auto n = static_cast<std::int64_t>(ids.size());
    if (position >= n)
        throw attnscope::Error("position " + std::to_string(position) + " is outside the clean input (0.." +
                               std::to_string(n - 1) + ")");
    attnscope::RunOptions run;
    run.recordResiduals = true;
    run.attributionPosition = position < 0 ? n - 1 : position;
    run.progress = progress;
    CausalLensRun r;
    r.position = run.attributionPosition;
    try {
        r.trace = model.forward(ids, run);
    } catch (const attnscope::Error& e) {
        // DLA's refusal (post-norm decoders): the lens still applies.
        r.dlaRefusal = QString::fromUtf8(e.what());
        run.attributionPosition = -1;
        r.trace = model.forward(ids, run);
    }
    attnscope::LensOptions options;
    options.topK = std::min<int>(kLensTopK, model.info().vocabSize);
    r.lens = attnscope::logitLens(*r.trace, options);
    r.topTexts = vocabularyLabels(model, r.lens.topIds);
    return r;
}

QStringList readableTokens(const attnscope::Model& model, const std::vector<std::int64_t>& ids) {
    QStringList out;
    if (const auto* tokenizer = model.tokenizer()) return toQtStrings(tokenizer->displayTokens(ids));
    for (std::int64_t id : ids) out << QString::number(id);
    return out;
}

namespace {

// The Causal tab's refusal from the model's info (CausalController::onModelLoaded's reasons).
void requireCausalModel(const attnscope::Model& model) {
    const attnscope::ModelInfo& info = model.info();
    if (!info.task.empty())
        throw attnscope::Error("workspace: the built-in models are not language models: the Causal figures need a "
                               "decoder-only language model");
    if (info.encoderDecoder || info.imageInput)
        throw attnscope::Error("workspace: " + info.family + " is " +
                               (info.encoderDecoder ? "an encoder-decoder" : "an image model") +
                               ": the Causal figures need a decoder-only language model");
}

// One of the tab's inputs as the tab reads it: token ids when ticked (or without a tokenizer),
// else the text through the tokenizer.
std::vector<std::int64_t> causalIds(const attnscope::Model& model, const QString& text, bool ids, const char* what) {
    if (ids || !model.tokenizer()) return workspaceTypedIds(text, model.info().vocabSize, what);
    if (text.trimmed().isEmpty()) throw attnscope::Error(std::string("workspace: causal.") + what + " is empty");
    return model.encodeText(text.toStdString());
}

}  // namespace

PaintedFigure workspaceCausalFigure(const attnscope::Model& model, const Workspace& w, CausalFigureKind kind,
                                    const QString& title) {
    requireCausalModel(model);
    const Workspace::Causal& c = w.causal;
    // An empty clean box: the main input as the window ran it.
    const std::vector<std::int64_t> clean =
            c.clean.trimmed().isEmpty() ? workspaceTrace(model, w)->ids() : causalIds(model, c.clean, c.ids, "clean");
    const CausalLensRun lens = runCausalLens(model, clean, c.position);
    const std::vector<std::int64_t> offered = lensPredictions(lens.lens, lens.position);
    // T and T2 as the tab picks them: the workspace's, else the top two predictions at P.
    const std::optional<std::int64_t> answer = c.answer ? c.answer : std::optional<std::int64_t>(offered.at(0));
    const std::optional<std::int64_t> wrong = c.wrong              ? c.wrong
                                              : offered.size() > 1 ? std::optional<std::int64_t>(offered[1])
                                                                   : std::nullopt;
    const auto titled = [&](auto figure) {
        if (!title.isEmpty()) figure.title = title;
        return figure;
    };
    switch (kind) {
        case CausalFigureKind::Lens:
            return paintedLens(titled(lensFigure(lens.lens, lens.topTexts, toQtStrings(lens.trace->displayTokens()),
                                                 modelDisplayName(w.model), w.colormap)));
        case CausalFigureKind::Dla: {
            if (!lens.dlaRefusal.isEmpty()) throw attnscope::Error(lens.dlaRefusal.toStdString());
            const attnscope::LogitAttribution dla = attnscope::directLogitAttribution(*lens.trace, *answer, wrong);
            return paintedSignedMap(titled(dlaFigure(dla, vocabularyLabels(model, {*answer}).value(0),
                                                     wrong ? vocabularyLabels(model, {*wrong}).value(0) : QString())));
        }
        case CausalFigureKind::Patch: break;
    }
    if (c.corrupt.trimmed().isEmpty())
        throw attnscope::Error("workspace: causal.corrupt is empty: patching needs a corrupt input");
    attnscope::PatchRequest q;
    q.what = attnscope::PatchWhat(std::max(0, int(kWhatKeys.indexOf(c.what))));
    q.token = *answer;
    q.minus = wrong;
    q.position = c.position;
    q.attribution = c.attribution;
    const attnscope::PatchResult result =
            attnscope::activationPatching(model, clean, causalIds(model, c.corrupt, c.ids, "corrupt"), q);
    return paintedSignedMap(titled(patchFigure(result, q.what, q.attribution, readableTokens(model, clean))));
}
