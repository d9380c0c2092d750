// MainWindow's two map requests and their results: the detail heat map of the selected head
// (from MapService, or from the lab when it shows a variant or an intervention) and the
// overview's thumbnails of the selected block, of the variant the lab shows. Both are computed
// by core on workers.
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
#include "controllers/labcontroller.h"

#include <QAction>
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

void MainWindow::sendDetailRequest() {
    detailQueued_ = false;
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
                if (shownDetail_.trace && !lab_->takesDetail())
                    maps_->requestLevelOfDetail(shownDetail_.trace, shownDetail_.key, shownDetail_.temperature,
                                                levelOfDetailWanted_);
            },
            Qt::QueuedConnection);
}

void MainWindow::requestThumbnails() {
    const auto trace = lab_->shownTrace();  // the lab's re-run when there is one
    if (!trace || currentKey().block < 0) return;
    const int block = currentKey().block;
    const auto& info = trace->blocks()[std::size_t(block)];
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
    if (r.trace != session_->trace() || lab_->takesDetail()) return;  // from the previous run, or the lab draws
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
    heatmap_->setLevelOfDetailEnabled(true);
    heatmap_->setMap(r.map, axisLabels(*r.trace, info, true, raw), axisLabels(*r.trace, info, false, raw),
                     mapTitle(QString(), r.trace->blocks().size() > 1 ? QString::fromStdString(info.name) : QString(),
                              r.key.layer, r.key.head, linear ? 1.0 : r.temperature));
}

void MainWindow::onThumbnails(const ThumbnailResult& r) {
    if (r.trace != lab_->shownTrace() || r.block != currentKey().block) return;
    overview_->setImages(r.images);
}
