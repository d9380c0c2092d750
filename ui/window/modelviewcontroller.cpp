#include "window/modelviewcontroller.h"

#include "panels/controlpanel.h"
#include "panels/labpanel.h"
#include "panels/modelviewpanel.h"
#include "services/session.h"
#include "views/headmetricmap.h"
#include "views/overviewgrid.h"
#include "window/labcontroller.h"
#include "window/mainwindow.h"

#include "attnscope/analysis/head_metric_list.h"

#include <QCheckBox>
#include <QComboBox>
#include <QTabWidget>

ModelViewController::ModelViewController(MainWindow* window) : QObject(window), window_(window) {
    panel_ = new ModelViewPanel;
    panel_->setObjectName(QStringLiteral("modelViewPanel"));
    service_ = new LabService(this);
    connect(panel_, &ModelViewPanel::headChosen, this,
            [this](int layer, int head) { window_->selectHead(window_->currentBlockName(), layer, head); });
    // The Explore overview's thumbnails, when they are the shown block's.
    connect(window->maps(), &MapService::thumbnailsReady, this, [this](const ThumbnailResult& r) {
        if (r.trace == window_->lab()->shownTrace() && r.block == window_->currentKey().block &&
            r.trace == blockTrace_ && r.block == block_)
            panel_->grid()->setImages(r.images);
    });
    connect(service_, &LabService::metricsReady, this, [this](const MetricsResult& r) {
        if (r.trace != metricsTrace_ || r.variant != metricsVariant_) return;
        if (!r.error.isEmpty()) {
            panel_->setStatus(tr("Metrics failed: %1").arg(r.error));
            return;
        }
        metrics_ = r.metrics;
        attnscope::attachDetectors(metrics_, detectors_);
        panel_->setMetrics(metrics_);
        if (!r.partial && r.metrics.empty() && r.variant.fits.empty() &&
            (r.variant.spec.variant == LabVariant::Additive || r.variant.spec.variant == LabVariant::Hybrid)) {
            panel_->setStatus(
                    tr("no head has an additive fit yet: Fit additive in the Lab dock fits the selected head"));
            return;
        }
        panel_->setStatus(
                r.partial ? tr("metrics of %1 of %2 heads…").arg(r.metrics.size()).arg(r.total)
                          : tr("metrics of %1 heads · %2%3")
                                    .arg(int(r.metrics.size()) < r.total
                                                 ? tr("%1 of %2").arg(r.metrics.size()).arg(r.total)
                                                 : QString::number(r.metrics.size()))
                                    .arg(r.variant.spec.variant == LabVariant::Native
                                                 ? tr("the model's own maps")
                                                 : tr("the lab's %1 maps").arg(labVariantName(r.variant.spec.variant)))
                                    .arg(r.variant.spec.variant == LabVariant::Linear  // no softmax, no T
                                                 ? QString()
                                                 : tr(" · T = %1").arg(r.temperature, 0, 'g', 3)));
    });
    connect(window->session(), &Session::modelLoaded, this, [this] {
        service_->cancelAll();
        blockTrace_.reset();
        metricsTrace_.reset();
        metrics_.clear();
        detectors_.clear();
        detectorsAsked_ = false;
        block_ = -1;
        panel_->setBlock(QString(), 0, 0);
        panel_->setStatus(QString());
    });
    // The metric map in the window's colour map, like the thumbnails beside it.
    connect(window->controls(), &ControlPanel::coloringChanged, this,
            [this] { panel_->metricMap()->setColormap(window_->controls()->colormap()); });
    connect(window, &MainWindow::selectionChanged, this, &ModelViewController::refresh);
    for (QComboBox* combo : {panel_->orderCombo(), panel_->metricCombo()})
        connect(combo, &QComboBox::currentIndexChanged, this,
                [this, combo] { metricPicked(combo->currentData().toString()); });
    connect(window->tabs(), &QTabWidget::currentChanged, this, &ModelViewController::refresh);
    connect(window->lab()->panel(), &LabPanel::variantChanged, this, &ModelViewController::refresh);
}

ModelViewController::State ModelViewController::state() const {
    State st;
    st.orderKey = panel_->orderCombo()->currentData().toString().toStdString();
    st.descending = panel_->descendingCheck()->isChecked();
    st.frames = panel_->framesCheck()->isChecked();
    st.metricKey = panel_->metricCombo()->currentData().toString().toStdString();
    return st;
}

void ModelViewController::setState(const State& st) {
    const auto pick = [](QComboBox* c, const std::string& key) {
        if (const int i = c->findData(QString::fromStdString(key)); i >= 0) c->setCurrentIndex(i);
    };
    pick(panel_->orderCombo(), st.orderKey);
    pick(panel_->metricCombo(), st.metricKey);
    panel_->descendingCheck()->setChecked(st.descending);
    panel_->framesCheck()->setChecked(st.frames);
}

void ModelViewController::setDetectors(std::vector<attnscope::HeadDetectors> heads) {
    detectors_ = std::move(heads);
    detectorsAsked_ = !detectors_.empty();
    attnscope::attachDetectors(metrics_, detectors_);
    if (!metrics_.empty()) panel_->setMetrics(metrics_);
    if (detectorsAsked_)
        panel_->setStatus(tr("detector scores of %1 heads (the Metrics tab says how)").arg(detectors_.size()));
}

void ModelViewController::metricPicked(const QString& key) {
    if (key.isEmpty() || detectorsAsked_ || !detectors_.empty()) return;
    for (const auto& info : attnscope::headMetricList())
        if (info.detector && key == QLatin1String(info.key)) {
            detectorsAsked_ = true;  // once per model; the Metrics tab's button runs them again
            panel_->setStatus(tr("running the head detectors…"));
            emit detectorsWanted();
            return;
        }
}

bool ModelViewController::shownNow() const { return window_->tabs()->currentWidget() == panel_; }

void ModelViewController::refresh() {
    const TracePtr trace = window_->lab()->shownTrace();
    const MapKey key = window_->currentKey();
    if (!trace || key.block < 0 || key.block >= int(trace->blocks().size())) return;
    const auto& info = trace->blocks()[std::size_t(key.block)];
    if (trace != blockTrace_ || key.block != block_) {
        blockTrace_ = trace;
        block_ = key.block;
        panel_->setBlock(QString::fromStdString(info.name), info.layers, info.heads);
        panel_->grid()->setLayerWindows({info.layerWindows.begin(), info.layerWindows.end()});
        // The Explore overview may already hold this block's thumbnails.
        const OverviewGrid* explore = window_->overview();
        if (explore->layers() == info.layers && explore->heads() == info.heads)
            panel_->grid()->setImages(explore->images());
        if (metricsTrace_ == trace) panel_->setMetrics(metrics_);  // every block's metrics came with the trace's
    }
    panel_->grid()->setSelected(key.layer, key.head);
    panel_->grid()->setCrossedOut(window_->overview()->crossedOut());
    panel_->metricMap()->setSelected(key.layer, key.head);
    // The thumbnails and metrics are of the variant the lab shows: the caption names its kind.
    const ShownVariant variant = window_->lab()->shownVariant();
    panel_->grid()->setCaption(
            tr("%1 block · %2 layers × %3 heads · layer %4 · head %5 · %6%7")
                    .arg(QString::fromStdString(info.name))
                    .arg(info.layers)
                    .arg(info.heads)
                    .arg(key.layer)
                    .arg(key.head)
                    .arg(shownKindCaption(info, key.block, variant))
                    .arg(shownKindUsesTemperature(info, variant)
                                 ? QStringLiteral(" · T = %1").arg(variant.spec.map.temperature, 0, 'g', 3)
                                 : QString()));
    if (!shownNow()) return;
    if (metricsTrace_ == trace && metricsVariant_ == variant) return;
    metricsTrace_ = trace;
    metricsVariant_ = variant;
    panel_->setStatus(tr("computing metrics…"));
    service_->requestMetrics(trace, variant);
}
