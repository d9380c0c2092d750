// MapPresenter (mappresenter.h): the detail heat map of the selected head (from MapService, or
// from the lab when it shows a variant or an intervention) and the overview's thumbnails of the
// selected block, of the variant the lab shows, or of the map source the Show selector picked
// (SourceController). All are computed by core on workers.
#include "window/mappresenter.h"

#include "controllers/causalcontroller.h"
#include "controllers/generatecontroller.h"
#include "controllers/imagecontroller.h"
#include "controllers/labcontroller.h"
#include "controllers/longcontroller.h"
#include "controllers/modelviewcontroller.h"
#include "panels/longpanel.h"
#include "controllers/sourcecontroller.h"
#include "controllers/viewscontroller.h"
#include "figure/figure.h"
#include "figure/headfigure.h"
#include "figure/labels.h"
#include "figure/sourceview.h"
#include "panels/causalpanel.h"
#include "panels/comparepanel.h"
#include "services/comparesession.h"
#include "panels/controlpanel.h"
#include "panels/corpuspanel.h"
#include "panels/devicecombo.h"
#include "panels/imageoverlaypanel.h"
#include "panels/metricspanel.h"
#include "panels/modelviewpanel.h"
#include "panels/outputpanel.h"
#include "panels/sourcepicker.h"
#include "services/session.h"
#include "state/viewstate.h"
#include "views/heatmapview.h"
#include "views/routerstripview.h"
#include "views/overviewgrid.h"
#include "views/temperatureslider.h"
#include "window/modelinputs.h"
#include "window/windowparts.h"

#include "attnscope/attention/trace.h"
#include "attnscope/attention/window_padding.h"

#include <QAction>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QStatusBar>
#include <QTabWidget>

#include <utility>

namespace {

QString tokenCount(std::size_t n) { return n == 1 ? QStringLiteral("1 token") : QStringLiteral("%1 tokens").arg(n); }

}  // namespace

MapPresenter::MapPresenter(WindowParts& parts, QObject* parent) : QObject(parent), p_(parts) {
    connect(p_.session, &Session::traceReady, this, &MapPresenter::onTraceReady);
    connect(p_.maps, &MapService::detailReady, this, &MapPresenter::onDetail);
    connect(p_.maps, &MapService::thumbnailsReady, this, &MapPresenter::onThumbnails);
    // A long map's level of detail (HeatmapView asks for each zoom) and the pooling the
    // thumbnails follow too.
    connect(p_.heatmap, &HeatmapView::levelOfDetailWanted, this, &MapPresenter::askLevelOfDetail);
    connect(p_.maps, &MapService::levelOfDetailReady, this, [this](const LevelOfDetailResult& r) {
        if (r.error.isEmpty() && r.trace == shownDetail_.trace && r.key == shownDetail_.key &&
            r.temperature == shownDetail_.temperature)
            p_.heatmap->setLevelOfDetail(r.pooled, r.request);
    });
    connect(p_.heatmap, &HeatmapView::poolingChanged, this, [this] { requestThumbnails(); });
}

// The views follow the state's signals and the lab's maps. Connected once the controllers
// exist: on the state's signals the window's views are asked after the controllers' own.
void MapPresenter::bindState() {
    connect(p_.tabs, &QTabWidget::currentChanged, p_.state, [this] { p_.state->setTab(tabName()); });
    LabController* lab = p_.lab;
    connect(p_.rawTokensAction, &QAction::toggled, this, &MapPresenter::onRawTokensToggled);  // after the state's

    ViewState* state = p_.state;
    connect(state, &ViewState::selectionChanged, this, &MapPresenter::onSelectionChanged);
    connect(state, &ViewState::selectionChanged, p_.router, [this] { p_.router->setLayer(p_.state->layer()); });
    connect(state, &ViewState::temperatureChanged, this, &MapPresenter::onTemperatureChanged);
    connect(state, &ViewState::temperatureChanged, lab, &LabController::onTemperatureChanged);
    connect(state, &ViewState::colorsChanged, this, [this] {
        const ColorScale scale{p_.state->scale()};
        p_.heatmap->setColoring(p_.state->colormap(), scale);
        applyDetailColors();  // a map source's own range or diverging colours
        p_.compare->setColoring(p_.state->colormap(), scale);
        // Every map follows the colour map: the Metrics tab's block view and the Corpus tab's too.
        p_.lab->metrics()->setColoring(p_.state->colormap(), scale);
        p_.corpus->setColoring(p_.state->colormap(), scale);
        requestThumbnails();
    });
    connect(state, &ViewState::viewChanged, this, [this] {
        syncTab();
        updateCompare(true);
        updateTemperatureApplicability();
        p_.lab->onTabChanged();
    });
}

QString MapPresenter::compareTask() const {
    const QString task = p_.state->view().compareTask;
    return task.isEmpty() ? QStringLiteral("reverse") : task;
}

void MapPresenter::onTraceReady(const std::shared_ptr<const attnscope::Trace>& trace) {
    const auto& blocks = trace->blocks();
    p_.router->setTrace(trace, p_.state->layer());
    if (!p_.session->model())
        p_.controls->outputs()->clear();                                   // maps from an attention file
    else if (!p_.generate->showStepOutput(trace, p_.controls->outputs()))  // a generation step: its own output
        p_.controls->outputs()->showOutputs(*trace, *p_.session->model(), p_.session->tokenizer().get(),
                                            !p_.controls->targetText().trimmed().isEmpty());
    if (blocks.empty()) {
        p_.heatmap->clear(tr("This model recorded no attention."));
        return;
    }
    QStringList names;
    std::vector<ViewState::BlockShape> shapes;
    for (const auto& b : blocks) {
        names << QString::fromStdString(b.name);
        shapes.push_back({names.back(), b.layers, b.heads});
    }
    p_.statusBar->showMessage(
            tr("Ran %1 on %2.").arg(tokenCount(trace->ids().size()), QString::fromStdString(trace->device())), 5000);
    // The state keeps the block by name (or starts on cross-attention) and clamps the head.
    shownBlock_ = -1;  // a new trace: the overview and its maps are set up again
    p_.state->setBlocks(std::move(shapes));
    p_.controls->setBlocks(names, p_.state->blockName());
    syncSelectionWidgets();
    if (shownBlock_ < 0) onBlockChanged();
}

// New block (or trace): the overview's shape, then fresh maps.
void MapPresenter::onBlockChanged() {
    const auto trace = p_.session->trace();
    const int b = p_.state->block();
    if (!trace || b < 0 || b >= int(trace->blocks().size())) return;
    shownBlock_ = b;
    const auto& block = trace->blocks()[std::size_t(b)];
    p_.overview->setShape(block.layers, block.heads);
    p_.overview->setLayerWindows({block.layerWindows.begin(), block.layerWindows.end()});
    p_.overview->setSelected(p_.state->layer(), p_.state->head());
    updateTemperatureApplicability();
    requestDetail();
    requestThumbnails();
    updateCompare(false);
    p_.lab->onBlockChanged();
}

void MapPresenter::onSelectionChanged() {
    syncSelectionWidgets();
    if (p_.state->block() < 0) return;
    if (p_.state->block() != shownBlock_) return onBlockChanged();
    p_.overview->setSelected(p_.state->layer(), p_.state->head());
    requestDetail();
    updateCompare(false);
}

// The state's block, layer and head in the boxes (without echoing back), then the maps.
void MapPresenter::syncSelectionWidgets() {
    QComboBox* blocks = p_.controls->blockCombo();
    QSpinBox* layer = p_.controls->layerSpin();
    QSpinBox* head = p_.controls->headSpin();
    const QSignalBlocker b0(blocks), b1(layer), b2(head);
    const bool shown = p_.state->block() >= 0 && p_.state->block() < int(p_.state->blocks().size());
    if (shown) {
        const ViewState::BlockShape& s = p_.state->blocks()[std::size_t(p_.state->block())];
        blocks->setCurrentIndex(p_.state->block());
        layer->setRange(0, std::max(0, s.layers - 1));
        head->setRange(0, std::max(0, s.heads - 1));
    }
    layer->setEnabled(shown);
    // A per-layer map source (value-weighted (layer), ALTI, relevance) has one map per layer.
    const bool perHead = attnscope::perHeadSource(p_.state->mapSource());
    head->setEnabled(shown && perHead);  // its tooltip says why (updateHeadGroup)
    layer->setValue(p_.state->layer());
    head->setValue(p_.state->head());
}

void MapPresenter::onTemperatureChanged() {
    // With the temperature inside the model the maps are drawn at T = 1: they change only with
    // the lab's re-run (LabController::onTemperature), which redraws them when it arrives.
    if (!p_.lab->temperatureInside()) refreshMaps();
    updateCompare(false);
}

void MapPresenter::updateTemperatureApplicability() {
    const auto trace = p_.session->trace();
    const bool compare = p_.tabs->currentWidget() == p_.compare;
    const int block = currentKey().block;
    const bool linear = !compare && trace && block >= 0 &&
                        trace->blocks()[std::size_t(block)].kind == attnscope::AttentionKind::Linear;
    // A map source weights the maps the model used: the display temperature does not apply to it.
    const attnscope::MapSource source = compare ? attnscope::MapSource::Weights : p_.state->mapSource();
    p_.controls->temperature()->setApplicable(
            !linear && source == attnscope::MapSource::Weights,
            linear ? tr("Linear attention has no softmax, so the temperature does not change its maps.")
            : source != attnscope::MapSource::Weights
                    ? tr("%1 uses the maps the model ran with: the display T does not apply (Inside the model "
                         "does).")
                              .arg(QString::fromUtf8(attnscope::sourceLabel(source)))
                    : QString());
}

// The comparison follows the window's input and selection while its tab is shown.
void MapPresenter::updateCompare(bool runIfNeeded) {
    if (p_.tabs->currentWidget() != p_.compare) return;
    if (runIfNeeded) {
        // The window's input when its model belongs to the task; else the task's example text
        // (token ids carry over, since they need no tokenizer).
        const auto ownTask = compareTaskOf(p_.session->modelSpec());
        const QString task = compareTask();
        QString text = p_.controls->input()->text();
        if (ownTask != task && !p_.controls->idsMode())
            text = ModelInputs::exampleInput(QStringLiteral("builtin:") + task, true, 0, 0);
        // The window's target too (forced on all three decoders) when the input is the window's.
        p_.compare->setInput(task, text, p_.controls->idsMode(), p_.controls->device()->choice(),
                             ownTask == task ? p_.controls->targetText() : QString());
    }
    p_.compare->setSource(p_.state->mapSource());  // each kind shows it where core computes it
    p_.compare->setSelection(currentBlockName(), p_.state->layer(), p_.state->head(), p_.state->temperature());
}

// The state's tab on screen (the lab's "show in Explore" sets it there).
void MapPresenter::syncTab() {
    if (tabName() == p_.state->view().tab) return;
    QWidget* const byName[] = {p_.tabs->widget(0),    p_.compare, p_.lab->metrics(),  p_.modelView->panel(),
                               p_.imageView->panel(), p_.corpus,  p_.causal->panel(), p_.longContext->panel()};
    const QStringList names = {QStringLiteral("explore"), QStringLiteral("compare"), QStringLiteral("metrics"),
                               QStringLiteral("model"),   QStringLiteral("image"),   QStringLiteral("corpus"),
                               QStringLiteral("causal"),  QStringLiteral("long")};
    const int i = int(names.indexOf(p_.state->view().tab));
    if (i >= 0) p_.tabs->setCurrentWidget(byName[i]);
}

QString MapPresenter::tabName() const {
    QWidget* w = p_.tabs->currentWidget();
    return w == p_.compare                ? QStringLiteral("compare")
           : w == p_.lab->metrics()       ? QStringLiteral("metrics")
           : w == p_.modelView->panel()   ? QStringLiteral("model")
           : w == p_.imageView->panel()   ? QStringLiteral("image")
           : w == p_.corpus               ? QStringLiteral("corpus")
           : w == p_.causal->panel()      ? QStringLiteral("causal")
           : w == p_.longContext->panel() ? QStringLiteral("long")
                                          : QStringLiteral("explore");
}

MapKey MapPresenter::currentKey() const { return {p_.state->block(), p_.state->layer(), p_.state->head()}; }

QString MapPresenter::currentBlockName() const {
    const QString block = p_.state->blockName();
    return block.isEmpty() ? QStringLiteral("self") : block;
}

void MapPresenter::refreshMaps() {
    requestDetail();
    requestThumbnails();
}

void MapPresenter::requestDetail() {
    updateHeadGroup();
    if (std::exchange(detailQueued_, true)) return;
    QMetaObject::invokeMethod(this, &MapPresenter::sendDetailRequest, Qt::QueuedConnection);
}

void MapPresenter::buildSources() {
    p_.sources = new SourceController(p_.state, p_.session, p_.controls->sourcePicker(), this);
    connect(p_.sources, &SourceController::shownChanged, this, [this] {
        syncSelectionWidgets();  // the head applies to per-head sources only
        updateTemperatureApplicability();
        if (p_.sources->shown().weights() && !shownDetail_.source.weights()) {
            shownDetail_.source = {};  // back to the weights' colours, whoever draws them next
            applyDetailColors();
        }
        refreshMaps();
        p_.views->setSource(p_.sources->shown());
        p_.imageView->setSource(p_.sources->shown());
        p_.lab->setSource(p_.sources->shown());  // the Metrics tab's table
        p_.modelView->setSource(p_.sources->shown());
        updateCompare(false);
    });
    p_.sourceTabNote = new QLabel;
    p_.sourceTabNote->setObjectName(QStringLiteral("sourceTabNote"));
    p_.sourceTabNote->setVisible(false);
    p_.tabs->setCornerWidget(p_.sourceTabNote, Qt::TopRightCorner);
    connect(p_.state, &ViewState::viewChanged, this, &MapPresenter::updateSourceTabNote);
    connect(p_.sources, &SourceController::shownChanged, this, &MapPresenter::updateSourceTabNote);
    connect(p_.sources, &SourceController::rerunWanted, this, [this] {
        if (p_.session->model() && !p_.session->isBusy()) p_.inputs->runInput();  // now recording the values
    });
    // A gradient job shows in the progress bar and the Cancel button stops it, as a model run.
    connect(p_.sources, &SourceController::gradientsBusy, this, [this](bool busy) {
        p_.inputs->onBusyChanged(busy || p_.session->isBusy());
        if (busy) p_.progressBar->setFormat(tr("Gradients\u2026"));
    });
    connect(p_.sources->service(), &SourceService::progress, p_.inputs, &ModelInputs::onProgress);
    connect(p_.cancelButton, &QPushButton::clicked, p_.sources, &SourceController::cancelGradients);
}

void MapPresenter::updateSourceTabNote() {
    const attnscope::MapSource source = p_.state->mapSource();
    const QString tab = p_.state->view().tab;
    QString why;
    // Compare's built-in models show the value and ALTI sources (where a block has one stream);
    // the gradient sources do not cover them, which each kind's place says too.
    if (attnscope::gradientSource(source) && tab == QLatin1String("compare"))
        why = tr("Compare runs the built-in dot, additive and linear models, which the gradient sources do not "
                 "cover: each kind's map place says why, and %1 needs a pretrained model.")
                      .arg(QString::fromUtf8(attnscope::sourceLabel(source)));
    p_.sourceTabNote->setText(
            why.isEmpty() ? QString()
                          : tr("\u24d8 no %1 here  ").arg(QString::fromUtf8(attnscope::sourceLabel(source))));
    p_.sourceTabNote->setToolTip(why);
    p_.sourceTabNote->setVisible(!why.isEmpty());
}

std::shared_ptr<const attnscope::Trace> MapPresenter::sourceTrace(const ShownSource& source) const {
    return attnscope::gradientSource(source.source) ? p_.session->trace() : p_.lab->shownTrace();
}

// A map source's map of the selection (not the weights): the lab's variants do not apply.
void MapPresenter::requestSourceDetail(const ShownSource& source) {
    const auto trace = sourceTrace(source);
    if (!trace || currentKey().block < 0) return;
    if (attnscope::gradientSource(source.source) && !source.gradients) {
        shownDetail_ = {};
        const QString waiting = p_.sources->waitingMessage();
        p_.heatmap->clear(waiting.isEmpty() ? tr("Computing the gradients…") : waiting);
        return;
    }
    p_.maps->requestDetail(trace, currentKey(), 1.0, 0, source);
}

void MapPresenter::applyDetailColors() {
    const ShownSource& source = shownDetail_.source;
    HeatmapView::AxisNames names = p_.heatmap->axisNames();
    names.values = sourceValueName(source.source);
    p_.heatmap->setAxisNames(names);
    if (source.weights()) return p_.heatmap->setColoring(p_.state->colormap(), ColorScale{p_.state->scale()});
    const SourceColors c =
            sourceColors(source.source, p_.state->colormap(), p_.state->scale(), shownDetail_.map.values);
    p_.heatmap->setColoring(c.colormap, c.scale);
}

void MapPresenter::sendDetailRequest() {
    detailQueued_ = false;
    if (const ShownSource source = p_.sources->shown(); !source.weights()) return requestSourceDetail(source);
    if (p_.lab->takesDetail()) return p_.lab->requestDetail(currentKey());  // a variant or an intervention
    if (const auto trace = p_.session->trace(); trace && currentKey().block >= 0)
        p_.maps->requestDetail(trace, currentKey(), p_.state->temperature(), HeatmapView::kLodSide);
}

void MapPresenter::askLevelOfDetail(const attnscope::PoolRequest& request) {
    levelOfDetailWanted_ = request;
    if (std::exchange(levelOfDetailQueued_, true)) return;
    QMetaObject::invokeMethod(
            this,
            [this] {
                levelOfDetailQueued_ = false;
                if (shownDetail_.trace && !p_.lab->takesDetail() && shownDetail_.source.weights())
                    p_.maps->requestLevelOfDetail(shownDetail_.trace, shownDetail_.key, shownDetail_.temperature,
                                                  levelOfDetailWanted_);
            },
            Qt::QueuedConnection);
}

void MapPresenter::requestThumbnails() {
    const ShownSource source = p_.sources->shown();
    const auto trace = sourceTrace(source);  // the lab's re-run when there is one
    if (!trace || currentKey().block < 0) return;
    const int block = currentKey().block;
    const auto& info = trace->blocks()[std::size_t(block)];
    if (!source.weights()) {
        ShownVariant variant;  // a map source weights the model's own maps
        variant.source = source;
        p_.overview->setCaption(
                tr("%1 block · %2 layers × %3 heads · %4%5")
                        .arg(QString::fromStdString(info.name))
                        .arg(info.layers)
                        .arg(info.heads)
                        .arg(QString::fromUtf8(attnscope::sourceLabel(source.source)))
                        .arg(attnscope::perHeadSource(source.source) ? QString() : tr(" (one map per layer)")));
        if (attnscope::gradientSource(source.source) && !source.gradients) return p_.overview->setImages({});
        return p_.maps->requestThumbnails(trace, block, variant, p_.state->colormap(), ColorScale{p_.state->scale()},
                                          48, p_.heatmap->pooling());
    }
    const ShownVariant variant = p_.lab->shownVariant();  // the model's own maps unless the lab shows a variant
    p_.overview->setCaption(
            tr("%1 block · %2 layers × %3 heads · %4%5")
                    .arg(QString::fromStdString(info.name))
                    .arg(info.layers)
                    .arg(info.heads)
                    .arg(shownKindCaption(info, block, variant))
                    .arg(shownKindUsesTemperature(info, variant)
                                 ? QStringLiteral(" · T = %1").arg(variant.spec.map.temperature, 0, 'g', 3)
                                 : QString()));
    p_.maps->requestThumbnails(trace, block, variant, p_.state->colormap(), ColorScale{p_.state->scale()}, 48,
                               p_.heatmap->pooling());
}

void MapPresenter::onDetail(const DetailResult& r) {
    if (const ShownSource source = p_.sources->shown(); !source.weights() || !r.source.weights()) {
        if (r.source != source || r.trace != sourceTrace(source)) return;  // another source, run or target since
    } else if (r.trace != p_.session->trace() || p_.lab->takesDetail()) {
        return;  // from the previous run, or the lab draws
    }
    if (!r.error.isEmpty()) {
        shownDetail_ = {};
        p_.heatmap->clear(r.error);
        return;
    }
    // A long map's image was drawn from its shape already; these are its exact weights, which
    // the heat map takes without drawing, labelling or pooling again.
    const bool valuesOnly = !r.pending && shownDetail_.pending && shownDetail_.trace == r.trace &&
                            shownDetail_.key == r.key && shownDetail_.temperature == r.temperature &&
                            p_.heatmap->setValues(r.map);
    shownDetail_ = r;
    if (!valuesOnly) showDetail(r);
    if (!r.pending)
        p_.statusBar->showMessage((valuesOnly ? tr("Exact weights (hover, export) ready in %1") : tr("Map ready in %1"))
                                          .arg(formatDuration(p_.maps->lastDetailLatencyMs())),
                                  3000);
}

void MapPresenter::showDetail(const DetailResult& r) {
    const auto& info = r.trace->blocks()[std::size_t(r.key.block)];
    const bool linear = info.kind == attnscope::AttentionKind::Linear;
    const bool raw = p_.rawTokensAction->isChecked();
    p_.heatmap->setRawLabels(axisLabels(*r.trace, info, true, true), axisLabels(*r.trace, info, false, true));
    p_.heatmap->setLevelOfDetailEnabled(r.source.weights());  // a source's map is exact and whole
    applyDetailColors();
    const attnscope::MapSource source = r.source.source;
    // Swin: the layer's windows (core's), outlined on the map; the padding's keys named.
    std::vector<int> windows = attnscope::keyWindows(*r.trace, r.key.block, r.key.layer);
    QString windowNote;
    if (!windows.empty()) {
        const int padding = attnscope::paddingKeys(info);
        windowNote =
                tr(" · windows outlined (zoom in)") +
                (padding > 0 ? tr(" · last %1 keys: window padding, rows there sum to < 1 over the tokens").arg(padding)
                             : QString());
    }
    p_.heatmap->setMap(r.map, axisLabels(*r.trace, info, true, raw), axisLabels(*r.trace, info, false, raw),
                       mapTitle(QString(), r.trace->blocks().size() > 1 ? QString::fromStdString(info.name) : QString(),
                                r.key.layer, attnscope::perHeadSource(source) ? r.key.head : -1,
                                linear || !r.source.weights() ? 1.0 : r.temperature) +
                               sourceTitleSuffix(source) + windowNote);
    if (windows.size() >= info.queryTokens.size() && !windows.empty())
        p_.heatmap->setWindows(
                std::vector<int>(windows.begin(), windows.begin() + std::ptrdiff_t(info.queryTokens.size())), windows);
}

void MapPresenter::onThumbnails(const ThumbnailResult& r) {
    const ShownSource source = p_.sources->shown();
    if (r.trace != sourceTrace(source) || r.block != currentKey().block || r.variant.source != source) return;
    p_.overview->setImages(r.images);
}

// View > Raw Tokens: only the labels change, so the map on screen is drawn again with them
// rather than computed again (unless the lab draws it, or another map is on its way).
void MapPresenter::onRawTokensToggled() {
    const bool current = shownDetail_.trace && shownDetail_.trace == p_.session->trace() &&
                         shownDetail_.key == currentKey() && shownDetail_.temperature == p_.state->temperature();
    if (current && !p_.lab->takesDetail())
        showDetail(shownDetail_);
    else
        requestDetail();
}

void MapPresenter::updateHeadGroup() {
    QLabel* label = p_.controls->headGroupLabel();
    QSpinBox* headSpin = p_.controls->headSpin();
    if (const attnscope::MapSource source = p_.state->mapSource(); !attnscope::perHeadSource(source)) {
        label->setVisible(false);  // a per-layer map source: no head, so no key/value group either
        headSpin->setToolTip(tr("%1 is one map per layer (its heads combined): the head does not apply.")
                                     .arg(QString::fromUtf8(attnscope::sourceLabel(source))));
        return;
    }
    const auto trace = p_.session->trace();
    const int b = p_.state->block();
    if (!trace || b < 0 || std::size_t(b) >= trace->blocks().size()) {
        label->setVisible(false);
        return;
    }
    const auto& block = trace->blocks()[std::size_t(b)];
    if (block.kvHeads <= 0 || block.kvHeads >= block.heads) {
        label->setVisible(false);
        headSpin->setToolTip(tr("Arrow keys on the maps: left/right = head, up/down = layer"));
        return;
    }
    const int head = p_.state->head();
    const int group = block.kvGroup(head);
    const int perGroup = block.heads / block.kvHeads;
    const QString text = tr("Head %1 shares key/value group %2 of %3 with heads %4–%5 (grouped-query attention).")
                                 .arg(head)
                                 .arg(group)
                                 .arg(block.kvHeads)
                                 .arg(group * perGroup)
                                 .arg(group * perGroup + perGroup - 1);
    label->setText(text);
    label->setVisible(true);
    headSpin->setToolTip(text);
}
