#include "figure/headfigure.h"

#include "figure/imagefile.h"
#include "figure/labels.h"
#include "figure/sourceview.h"

#include "attnscope/analysis/gradient_sources.h"
#include "attnscope/attention/trace.h"
#include "attnscope/lab/interventions.h"
#include "attnscope/models/generation.h"
#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"
#include "attnscope/tokenizer/token_ids.h"

#include <QFileInfo>

#include <algorithm>
#include <cmath>

QString modelDisplayName(const QString& spec) {
    if (spec.startsWith(QLatin1String("builtin:"))) return spec.mid(8);
    return QFileInfo(spec).fileName();
}

QStringList axisLabels(const attnscope::Trace& trace, const attnscope::BlockInfo& block, bool queries, bool raw) {
    const auto& labels = queries ? block.queryTokens : block.keyTokens;
    if (raw && labels == trace.displayTokens() && trace.tokens().size() == labels.size())
        return toQtStrings(trace.tokens());
    return toQtStrings(labels);
}

QString labMapTitle(const attnscope::Trace& trace, int block, int layer, int head, const attnscope::VariantSpec& spec,
                    bool fitted, const std::optional<RerunNote>& rerun) {
    using attnscope::LabVariant;
    const auto& info = trace.blocks().at(std::size_t(block));
    const bool usesT = info.kind != attnscope::AttentionKind::Linear && spec.variant != LabVariant::Linear;
    QString title = mapTitle(QString(), trace.blocks().size() > 1 ? QString::fromStdString(info.name) : QString(),
                             layer, head, usesT ? spec.map.temperature : 1.0);
    // Short, so the title fits above the map; the Lab dock and the output panel say it in full.
    switch (spec.variant) {
        case LabVariant::Native: break;
        case LabVariant::Dot: title += QStringLiteral(" · dot"); break;
        case LabVariant::Linear:
            title += spec.map.featureMap == attnscope::FeatureMap::Favor
                             ? QStringLiteral(" · FAVOR+ M=%1").arg(spec.map.features)
                     : spec.map.featureMap == attnscope::FeatureMap::Relu ? QStringLiteral(" · linear relu")
                     : spec.map.featureMap == attnscope::FeatureMap::Cos  ? QStringLiteral(" · linear cos")
                                                                          : QStringLiteral(" · linear elu+1");
            break;
        case LabVariant::Additive:
            title += fitted ? QStringLiteral(" · additive fit") : QStringLiteral(" · additive");
            break;
        case LabVariant::Hybrid: title += QStringLiteral(" · hybrid g=%1").arg(spec.gate, 0, 'f', 2); break;
        case LabVariant::Local: title += QStringLiteral(" · local"); break;
        case LabVariant::TopK: title += QStringLiteral(" · top-k"); break;
        case LabVariant::Lsh: title += QStringLiteral(" · LSH"); break;
    }
    if (rerun) {
        if (rerun->insideModel) title += QStringLiteral(" · T=%1 inside").arg(rerun->temperature, 0, 'g', 3);
        if (rerun->masked > 0) title += QStringLiteral(" · %1 masked").arg(rerun->masked);
    }
    return title;
}

// As MapZoom::rowBegin() and friends: the cells at least partly inside the range.
CellRange zoomCells(const Workspace::View::Zoom& z, int rows, int cols) {
    const auto first = [](double lower) { return std::max(0, int(std::floor(lower + 0.5))); };
    const auto end = [](double upper, int n) { return std::min(n, int(std::ceil(upper + 0.5))); };
    CellRange r{first(z.queryLower), end(z.queryUpper, rows), first(z.keyLower), end(z.keyUpper, cols)};
    if (r.rowBegin >= r.rowEnd || r.colBegin >= r.colEnd) r = {0, rows, 0, cols};  // outside the map: all of it
    return r;
}

Figure headFigure(const QString& modelName, const attnscope::HeadMap& map, const QStringList& queryLabels,
                  const QStringList& keyLabels, const QString& title, const std::optional<Workspace::View::Zoom>& zoom,
                  Colormap colormap, ColorScaleType scale) {
    Figure f;
    f.colormap = colormap;
    f.scale.type = scale;
    if (map.rows <= 0 || map.cols <= 0) return f;
    const CellRange r = zoom ? zoomCells(*zoom, map.rows, map.cols) : CellRange{0, map.rows, 0, map.cols};
    FigurePanel panel;
    panel.map.rows = r.rowEnd - r.rowBegin;
    panel.map.cols = r.colEnd - r.colBegin;
    panel.map.values.reserve(std::size_t(panel.map.rows) * std::size_t(panel.map.cols));
    for (int q = r.rowBegin; q < r.rowEnd; ++q)
        for (int k = r.colBegin; k < r.colEnd; ++k) panel.map.values.push_back(map.at(q, k));
    // Missing labels show as the cell's index in the whole map, as in the view.
    for (int q = r.rowBegin; q < r.rowEnd; ++q)
        panel.queryLabels << (q < queryLabels.size() ? queryLabels[q] : QString::number(q));
    for (int k = r.colBegin; k < r.colEnd; ++k)
        panel.keyLabels << (k < keyLabels.size() ? keyLabels[k] : QString::number(k));
    f.panels.push_back(std::move(panel));
    f.title = modelName + QStringLiteral(" \u00b7 ") + title;
    return f;
}

std::vector<std::int64_t> workspaceTypedIds(const QString& text, int vocabSize, const char* what) {
    const QString spaced = text.simplified();
    if (spaced.isEmpty()) throw attnscope::Error(std::string("workspace: the ") + what + " has no token ids");
    std::vector<std::int64_t> ids = attnscope::parseTokenIds(spaced.toStdString());
    for (auto id : ids)
        if (vocabSize > 0 && id >= vocabSize)
            throw attnscope::Error(std::string("workspace: ") + what + ": token id " + std::to_string(id) +
                                   " is outside the vocabulary (" + std::to_string(vocabSize) + " tokens)");
    return ids;
}

namespace {

int blockOf(const attnscope::Trace& trace, const QString& name) {
    if (!name.isEmpty()) return trace.blockIndex(name.toStdString());  // names the unknown block
    int block = 0;
    for (int b = 0; b < int(trace.blocks().size()); ++b)
        if (trace.blocks()[std::size_t(b)].name == "cross") block = b;  // as the window starts
    return block;
}

}  // namespace

std::shared_ptr<const attnscope::Trace> workspaceTrace(const attnscope::Model& model, const Workspace& w) {
    std::shared_ptr<const attnscope::Trace> trace;
    attnscope::RunOptions run;  // the value sources need the value vectors recorded, as the window's run
    run.captureValues = sourceNeedsValues(w.source.source);
    run.scoreTerms = sourceNeedsTerms(w.source.source);
    const Workspace::GenerationState& g = w.generation;
    if (!g.generated.empty()) {
        if (model.info().encoderDecoder || model.info().imageInput)  // as the window's Generate refuses it
            throw attnscope::Error("workspace: generation: a generation needs a decoder-only language model; " +
                                   model.info().path.filename().string() + " (" + model.info().family + ") is not one");
        // A generation step: one forward over prompt + generated ids is the generation's trace
        // (Generation::trace), and the step's maps are its prefix, as the window shows them.
        std::vector<std::int64_t> ids = g.prompt;
        ids.insert(ids.end(), g.generated.begin(), g.generated.end());
        trace = model.forward(ids, run);
    } else if (model.info().imageInput) {
        if (w.input.image.isEmpty())
            throw attnscope::Error("workspace: this model looks at images, and input.image names none");
        trace = model.forwardImage(decodeRgbImageFile(w.input.image), run);
    } else {
        // As the window's Session::runInput: ids as typed, or the text through the tokenizer.
        const int vocab = model.info().vocabSize;
        std::vector<std::int64_t> ids =
                w.input.idsMode ? workspaceTypedIds(w.input.text, vocab, "input") : std::vector<std::int64_t>{};
        if (!w.input.idsMode) {
            if (w.input.text.trimmed().isEmpty()) throw attnscope::Error("workspace: input.text is empty");
            ids = model.encodeText(w.input.text.toStdString());
        }
        if (w.input.target.trimmed().isEmpty() || !model.info().encoderDecoder) {
            trace = model.forward(ids, run);
        } else {
            attnscope::TextInput input;
            input.ids = ids;
            input.targetIds = w.input.idsMode ? workspaceTypedIds(w.input.target, vocab, "target")
                                              : model.encodeTarget(w.input.target.toStdString());
            trace = model.forwardText(input, run);
        }
    }
    if (w.inside.enabled || !w.masked.empty()) {
        attnscope::RunOptions options;  // as the lab's Intervention::runOptions
        options.captureValues = run.captureValues;
        options.scoreTerms = run.scoreTerms;
        if (w.inside.enabled) {
            options.temperature = w.temperature;
            options.temperatureLayers = w.inside.layers;
        }
        options.maskHeads = w.masked;
        trace = attnscope::rerun(model, *trace, options).trace;
    }
    if (g.generated.empty()) return trace;
    return attnscope::prefixTrace(*trace, int(g.prompt.size()) + g.step,
                                  g.queryRowOnly);  // as GenerateController::showStep
}

attnscope::HeadMap workspaceSourceMap(const attnscope::Model& model, const attnscope::Trace& trace, const Workspace& w,
                                      int block) {
    const attnscope::MapSource source = w.source.source;
    if (!attnscope::gradientSource(source))
        return attnscope::sourceMap(trace, source, block, w.selection.layer, w.selection.head);
    attnscope::GradientInput input;  // the trace's own input, as the window's gradient job
    input.text.ids = trace.ids();
    if (model.info().imageInput) input.image = decodeRgbImageFile(w.input.image);
    attnscope::RunOptions options;  // the workspace's interventions, as its trace's re-run
    if (w.inside.enabled) {
        options.temperature = w.temperature;
        options.temperatureLayers = w.inside.layers;
    }
    options.maskHeads = w.masked;
    const attnscope::GradientMaps g =
            attnscope::gradientSources(model, input, gradientTarget(trace, w.source.target), options);
    return g.map(source, w.selection.layer, w.selection.head);
}

Figure workspaceFigure(const attnscope::Model& model, const Workspace& w) {
    const auto trace = workspaceTrace(model, w);
    if (trace->blocks().empty()) throw attnscope::Error("workspace: this model recorded no attention");
    const int block = blockOf(*trace, w.selection.block);
    const auto& info = trace->blocks()[std::size_t(block)];
    if (w.selection.layer >= info.layers || w.selection.head >= info.heads)
        throw attnscope::Error("workspace: selection layer " + std::to_string(w.selection.layer) + " head " +
                               std::to_string(w.selection.head) + " is outside the " + info.name + " block (" +
                               std::to_string(info.layers) + " layers x " + std::to_string(info.heads) + " heads)");
    attnscope::VariantSpec spec;  // as LabController::variantSpec
    spec.variant = w.lab.variant;
    spec.map.temperature = w.inside.enabled ? 1.0 : w.temperature;
    spec.map.featureMap = w.lab.featureMap;
    spec.map.features = w.lab.features;
    spec.gate = w.lab.gate;
    std::optional<attnscope::AdditiveFit> fit;
    const auto& f = w.lab.fit;
    if (attnscope::variantNeedsFit(info, spec.variant) && f && f->block == QString::fromStdString(info.name) &&
        f->layer == w.selection.layer && f->head == w.selection.head) {
        attnscope::AdditiveFitOptions o;  // as LabController::fitAdditive (same seed: the same fit)
        o.width = w.lab.fitWidth;
        o.steps = w.lab.fitSteps;
        o.temperature = f->temperature;
        fit = attnscope::fitAdditive(*trace, block, w.selection.layer, w.selection.head, o);
    }
    const attnscope::MapSource source = w.source.source;
    std::optional<RerunNote> note;
    if (w.inside.enabled || !w.masked.empty()) note = RerunNote{w.inside.enabled, w.temperature, int(w.masked.size())};
    if (source != attnscope::MapSource::Weights) spec = attnscope::VariantSpec{};  // sources weight the model's maps
    QString title = labMapTitle(*trace, block, w.selection.layer, w.selection.head, spec, fit.has_value(), note);
    attnscope::HeadMap map;
    if (source == attnscope::MapSource::Weights) {
        map = attnscope::labMap(*trace, block, w.selection.layer, w.selection.head, spec, fit ? &*fit : nullptr).map;
    } else {
        map = workspaceSourceMap(model, *trace, w, block);
        if (!attnscope::perHeadSource(source))  // one map per layer: no head in the title
            title = labMapTitle(*trace, block, w.selection.layer, -1, spec, false, note);
        title += sourceTitleSuffix(source);
    }
    const SourceColors colors = sourceColors(source, w.colormap, w.scale, map.values);
    Figure figure =
            headFigure(modelDisplayName(w.model), map, axisLabels(*trace, info, true, w.view.rawTokens),
                       axisLabels(*trace, info, false, w.view.rawTokens), title, w.view.zoom, colors.colormap, w.scale);
    figure.scale = colors.scale;
    if (source != attnscope::MapSource::Weights) figure.colorbarLabel = sourceValueName(source);
    figure.widthIn = w.figure.widthIn;
    // MoE decoders: the router strip under the map, over the keys it shows (as the window exports it).
    if (auto strip = routerStripFigure(*trace, w.selection.layer); strip && strip->router.tokens == map.cols) {
        const CellRange keys =
                w.view.zoom ? zoomCells(*w.view.zoom, map.rows, map.cols) : CellRange{0, map.rows, 0, map.cols};
        strip->firstToken = keys.colBegin;
        strip->tokenCount = keys.colEnd - keys.colBegin;
        figure.routerStrip = std::move(strip);
    }
    return figure;
}
