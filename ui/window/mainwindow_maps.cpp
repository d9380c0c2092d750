// MainWindow's two map requests and their results: the detail heat map of the selected head
// (from MapService, or from the lab when it shows a variant or an intervention) and the
// overview's thumbnails of the selected block, of the variant the lab shows, or of the map
// source the Show selector picked (SourceController). All are computed by core on workers.
#include "window/mainwindow.h"

#include "figure/figure.h"
#include "figure/headfigure.h"
#include "figure/labels.h"
#include "panels/controlpanel.h"
#include "services/mapservice.h"
#include "services/session.h"
#include "state/viewstate.h"
#include "views/heatmapview.h"
#include "views/overviewgrid.h"
#include "views/temperatureslider.h"
#include "controllers/imagecontroller.h"
#include "controllers/labcontroller.h"
#include "controllers/sourcecontroller.h"
#include "controllers/viewscontroller.h"
#include "figure/sourceview.h"
#include "panels/sourcepicker.h"

#include <QAction>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QTabWidget>
#include <QComboBox>
#include <QSpinBox>

#include <utility>
#include <QStatusBar>

void MainWindow::refreshMaps() {
    requestDetail();
    requestThumbnails();
}

void MainWindow::requestDetail() {
    updateHeadGroup();
    if (std::exchange(detailQueued_, true)) return;
    QMetaObject::invokeMethod(this, &MainWindow::sendDetailRequest, Qt::QueuedConnection);
}

void MainWindow::buildSources() {
    sources_ = new SourceController(state_, session_, controls_->sourcePicker(), this);
    connect(sources_, &SourceController::shownChanged, this, [this] {
        syncSelectionWidgets();  // the head applies to per-head sources only
        updateTemperatureApplicability();
        if (sources_->shown().weights() && !shownDetail_.source.weights()) {
            shownDetail_.source = {};  // back to the weights' colours, whoever draws them next
            applyDetailColors();
        }
        refreshMaps();
        views_->setSource(sources_->shown());
        imageView_->setSource(sources_->shown());
        lab_->setSource(sources_->shown());  // the Metrics tab's table
        modelView_->setSource(sources_->shown());
        updateCompare(false);
    });
    sourceTabNote_ = new QLabel;
    sourceTabNote_->setObjectName(QStringLiteral("sourceTabNote"));
    sourceTabNote_->setVisible(false);
    tabs_->setCornerWidget(sourceTabNote_, Qt::TopRightCorner);
    connect(state_, &ViewState::viewChanged, this, &MainWindow::updateSourceTabNote);
    connect(sources_, &SourceController::shownChanged, this, &MainWindow::updateSourceTabNote);
    connect(sources_, &SourceController::rerunWanted, this, [this] {
        if (session_->model() && !session_->isBusy()) runInput();  // now recording the values
    });
    // A gradient job shows in the progress bar and the Cancel button stops it, as a model run.
    connect(sources_, &SourceController::gradientsBusy, this, [this](bool busy) {
        onBusyChanged(busy || session_->isBusy());
        if (busy) progressBar_->setFormat(tr("Gradients\u2026"));
    });
    connect(sources_->service(), &SourceService::progress, this, &MainWindow::onProgress);
    connect(cancelButton_, &QPushButton::clicked, sources_, &SourceController::cancelGradients);
}

void MainWindow::updateSourceTabNote() {
    const attnscope::MapSource source = state_->mapSource();
    const QString tab = state_->view().tab;
    QString why;
    if (source != attnscope::MapSource::Weights) {
        const QString label = QString::fromUtf8(attnscope::sourceLabel(source));
        if (tab == QLatin1String("compare"))  // the panel says it for each kind too
            why = tr("Compare runs the built-in dot, additive and linear models, which record no value vectors "
                     "and have no gradient sources: it compares their weights, not %1.")
                          .arg(label);
    }
    sourceTabNote_->setText(why.isEmpty() ? QString() : tr("\u24d8 this tab shows the weights  "));
    sourceTabNote_->setToolTip(why);
    sourceTabNote_->setVisible(!why.isEmpty());
}

std::shared_ptr<const attnscope::Trace> MainWindow::sourceTrace(const ShownSource& source) const {
    return attnscope::gradientSource(source.source) ? session_->trace() : lab_->shownTrace();
}

// A map source's map of the selection (not the weights): the lab's variants do not apply.
void MainWindow::requestSourceDetail(const ShownSource& source) {
    const auto trace = sourceTrace(source);
    if (!trace || currentKey().block < 0) return;
    if (attnscope::gradientSource(source.source) && !source.gradients) {
        shownDetail_ = {};
        const QString waiting = sources_->waitingMessage();
        heatmap_->clear(waiting.isEmpty() ? tr("Computing the gradients…") : waiting);
        return;
    }
    maps_->requestDetail(trace, currentKey(), 1.0, 0, source);
}

void MainWindow::applyDetailColors() {
    const ShownSource& source = shownDetail_.source;
    HeatmapView::AxisNames names = heatmap_->axisNames();
    names.values = sourceValueName(source.source);
    heatmap_->setAxisNames(names);
    if (source.weights()) return heatmap_->setColoring(state_->colormap(), ColorScale{state_->scale()});
    const SourceColors c = sourceColors(source.source, state_->colormap(), state_->scale(), shownDetail_.map.values);
    heatmap_->setColoring(c.colormap, c.scale);
}

void MainWindow::sendDetailRequest() {
    detailQueued_ = false;
    if (const ShownSource source = sources_->shown(); !source.weights()) return requestSourceDetail(source);
    if (lab_->takesDetail()) return lab_->requestDetail(currentKey());  // a variant or an intervention
    if (const auto trace = session_->trace(); trace && currentKey().block >= 0)
        maps_->requestDetail(trace, currentKey(), state_->temperature(), HeatmapView::kLodSide);
}

void MainWindow::askLevelOfDetail(const attnscope::PoolRequest& request) {
    levelOfDetailWanted_ = request;
    if (std::exchange(levelOfDetailQueued_, true)) return;
    QMetaObject::invokeMethod(
            this,
            [this] {
                levelOfDetailQueued_ = false;
                if (shownDetail_.trace && !lab_->takesDetail() && shownDetail_.source.weights())
                    maps_->requestLevelOfDetail(shownDetail_.trace, shownDetail_.key, shownDetail_.temperature,
                                                levelOfDetailWanted_);
            },
            Qt::QueuedConnection);
}

void MainWindow::requestThumbnails() {
    const ShownSource source = sources_->shown();
    const auto trace = sourceTrace(source);  // the lab's re-run when there is one
    if (!trace || currentKey().block < 0) return;
    const int block = currentKey().block;
    const auto& info = trace->blocks()[std::size_t(block)];
    if (!source.weights()) {
        ShownVariant variant;  // a map source weights the model's own maps
        variant.source = source;
        overview_->setCaption(
                tr("%1 block · %2 layers × %3 heads · %4%5")
                        .arg(QString::fromStdString(info.name))
                        .arg(info.layers)
                        .arg(info.heads)
                        .arg(QString::fromUtf8(attnscope::sourceLabel(source.source)))
                        .arg(attnscope::perHeadSource(source.source) ? QString() : tr(" (one map per layer)")));
        if (attnscope::gradientSource(source.source) && !source.gradients) return overview_->setImages({});
        return maps_->requestThumbnails(trace, block, variant, state_->colormap(), ColorScale{state_->scale()}, 48,
                                        heatmap_->pooling());
    }
    const ShownVariant variant = lab_->shownVariant();  // the model's own maps unless the lab shows a variant
    overview_->setCaption(
            tr("%1 block · %2 layers × %3 heads · %4%5")
                    .arg(QString::fromStdString(info.name))
                    .arg(info.layers)
                    .arg(info.heads)
                    .arg(shownKindCaption(info, block, variant))
                    .arg(shownKindUsesTemperature(info, variant)
                                 ? QStringLiteral(" · T = %1").arg(variant.spec.map.temperature, 0, 'g', 3)
                                 : QString()));
    maps_->requestThumbnails(trace, block, variant, state_->colormap(), ColorScale{state_->scale()}, 48,
                             heatmap_->pooling());
}

void MainWindow::onDetail(const DetailResult& r) {
    if (const ShownSource source = sources_->shown(); !source.weights() || !r.source.weights()) {
        if (r.source != source || r.trace != sourceTrace(source)) return;  // another source, run or target since
    } else if (r.trace != session_->trace() || lab_->takesDetail()) {
        return;  // from the previous run, or the lab draws
    }
    if (!r.error.isEmpty()) {
        shownDetail_ = {};
        heatmap_->clear(r.error);
        return;
    }
    // A long map's image was drawn from its shape already; these are its exact weights, which
    // the heat map takes without drawing, labelling or pooling again.
    const bool valuesOnly = !r.pending && shownDetail_.pending && shownDetail_.trace == r.trace &&
                            shownDetail_.key == r.key && shownDetail_.temperature == r.temperature &&
                            heatmap_->setValues(r.map);
    shownDetail_ = r;
    if (!valuesOnly) showDetail(r);
    if (!r.pending)
        statusBar()->showMessage((valuesOnly ? tr("Exact weights (hover, export) ready in %1") : tr("Map ready in %1"))
                                         .arg(formatDuration(maps_->lastDetailLatencyMs())),
                                 3000);
}

void MainWindow::showDetail(const DetailResult& r) {
    const auto& info = r.trace->blocks()[std::size_t(r.key.block)];
    const bool linear = info.kind == attnscope::AttentionKind::Linear;
    const bool raw = rawTokensAction_->isChecked();
    heatmap_->setRawLabels(axisLabels(*r.trace, info, true, true), axisLabels(*r.trace, info, false, true));
    heatmap_->setLevelOfDetailEnabled(r.source.weights());  // a source's map is exact and whole
    applyDetailColors();
    const attnscope::MapSource source = r.source.source;
    heatmap_->setMap(r.map, axisLabels(*r.trace, info, true, raw), axisLabels(*r.trace, info, false, raw),
                     mapTitle(QString(), r.trace->blocks().size() > 1 ? QString::fromStdString(info.name) : QString(),
                              r.key.layer, attnscope::perHeadSource(source) ? r.key.head : -1,
                              linear || !r.source.weights() ? 1.0 : r.temperature) +
                             sourceTitleSuffix(source));
}

void MainWindow::onThumbnails(const ThumbnailResult& r) {
    const ShownSource source = sources_->shown();
    if (r.trace != sourceTrace(source) || r.block != currentKey().block || r.variant.source != source) return;
    overview_->setImages(r.images);
}
