#include "controllers/modelviewcontroller.h"

#include "panels/labpanel.h"
#include "panels/modelviewpanel.h"
#include "services/session.h"
#include "views/headmetricmap.h"
#include "views/overviewgrid.h"
#include "controllers/labcontroller.h"
#include "state/viewstate.h"
#include "controllers/sectionsync.h"

#include "attnscope/analysis/head_metric_list.h"

#include <QCheckBox>
#include <QComboBox>
#include <QTabWidget>

ModelViewController::ModelViewController(ViewState* state, Session* session, MapService* maps, LabController* lab,
                                         const OverviewGrid* overview, QObject* parent)
    : QObject(parent), state_(state), lab_(lab), overview_(overview) {
    panel_ = new ModelViewPanel;
    panel_->setObjectName(QStringLiteral("modelViewPanel"));
    service_ = new LabService(this);
    // Its settings are the state's (the workspace file's "model_view").
    syncSection<Workspace::ModelView>(
            state_, panel_, this, &ViewState::TabSettings::modelView,
            [this] {
                const State m = this->state();
                return Workspace::ModelView{QString::fromStdString(m.orderKey), m.descending, m.frames,
                                            QString::fromStdString(m.metricKey)};
            },
            [this](const Workspace::ModelView& w) {
                setState({w.order.toStdString(), w.descending, w.frames, w.metric.toStdString()});
            });
    connect(panel_, &ModelViewPanel::headChosen, this,
            [this](int layer, int head) { state_->select(state_->block(), layer, head); });
    // The Explore overview's thumbnails, when they are the shown block's, of the shown source.
    connect(maps, &MapService::thumbnailsReady, this, [this](const ThumbnailResult& r) {
        if (r.trace == shownTrace() && r.variant.source == source_ &&
            r.block == MapKey{state_->block(), state_->layer(), state_->head()}.block && r.trace == blockTrace_ &&
            r.block == block_)
            panel_->grid()->setImages(r.images);
    });
    connect(service_, &LabService::metricsReady, this, &ModelViewController::onMetrics);
    connect(session, &Session::modelLoaded, this, [this] {
        service_->cancelAll();
        blockTrace_.reset();
        metricsTrace_.reset();
        metrics_.clear();
        detectors_.clear();
        detectorsAsked_ = false;
        block_ = -1;
        panel_->setBlock(QString(), 0, 0);
        panel_->grid()->setCaption(tr("Run an input to see this model's heads."));  // not the old model's shape
        panel_->setStatus(QString());
    });
    // The metric map in the window's colour map, like the thumbnails beside it.
    connect(state_, &ViewState::colorsChanged, this, [this] { panel_->metricMap()->setColormap(state_->colormap()); });
    for (auto signal : {&ViewState::selectionChanged, &ViewState::temperatureChanged, &ViewState::insideChanged,
                        &ViewState::viewChanged, &ViewState::variantChanged, &ViewState::masksChanged})
        connect(state_, signal, this, &ModelViewController::refresh);
    connect(lab_, &LabController::mapsStale, this, &ModelViewController::refresh);
    for (QComboBox* combo : {panel_->orderCombo(), panel_->metricCombo()})
        connect(combo, &QComboBox::currentIndexChanged, this,
                [this, combo] { metricPicked(combo->currentData().toString()); });
    connect(lab_->panel(), &LabPanel::variantChanged, this, &ModelViewController::refresh);
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

void ModelViewController::onMetrics(const MetricsResult& r) {
    if (r.trace != metricsTrace_ || r.variant != metricsVariant_) return;
    if (!r.error.isEmpty()) {
        panel_->setStatus(tr("Metrics failed: %1").arg(r.error));
        return;
    }
    const attnscope::MapSource source = r.variant.source.source;
    const bool perLayer = !attnscope::perHeadSource(source);
    metrics_ = r.metrics;
    if (perLayer && !metrics_.empty()) {  // one map per layer: its measures on each of the layer's heads
        std::vector<attnscope::HeadMetrics> heads;
        for (const auto& m : metrics_)
            for (const auto& b : r.trace->blocks())
                if (b.name == m.block)
                    for (int h = 0; h < b.heads; ++h) {
                        heads.push_back(m);
                        heads.back().head = h;
                    }
        metrics_ = std::move(heads);
    }
    attnscope::attachDetectors(metrics_, detectors_);
    panel_->setMetrics(metrics_);
    if (!r.partial && r.metrics.empty() && r.variant.fits.empty() &&
        (r.variant.spec.variant == LabVariant::Additive || r.variant.spec.variant == LabVariant::Hybrid)) {
        panel_->setStatus(tr("no head has an additive fit yet: Fit additive in the Lab dock fits the selected head"));
        return;
    }
    const QString unit = perLayer ? tr("layers") : tr("heads");
    QString maps;
    if (!r.variant.source.weights())
        maps = tr("the %1 maps%2")
                       .arg(QString::fromUtf8(attnscope::sourceLabel(source)))
                       .arg(perLayer ? tr(" (one per layer, shown on each of its heads)") : QString());
    else if (r.variant.spec.variant == LabVariant::Native)
        maps = tr("the model's own maps");
    else
        maps = tr("the lab's %1 maps").arg(labVariantName(r.variant.spec.variant));
    const bool temperature = r.variant.source.weights() && r.variant.spec.variant != LabVariant::Linear;  // no softmax
    panel_->setStatus(
            r.partial ? tr("metrics of %1 of %2 %3…").arg(r.metrics.size()).arg(r.total).arg(unit)
                      : tr("metrics of %1 %2 · %3%4")
                                .arg(int(r.metrics.size()) < r.total ? tr("%1 of %2").arg(r.metrics.size()).arg(r.total)
                                                                     : QString::number(r.metrics.size()))
                                .arg(unit)
                                .arg(maps)
                                .arg(temperature ? tr(" · T = %1").arg(r.temperature, 0, 'g', 3) : QString()));
}

void ModelViewController::setSource(const ShownSource& source) {
    if (source != source_) {
        source_ = source;
        metrics_.clear();  // the previous source's: not shown under this one's caption
        metricsTrace_.reset();
        panel_->setMetrics({});
    }
    refresh();  // also when only the trace changed (re-run for the values): the shown trace follows
}

TracePtr ModelViewController::shownTrace() const {
    return attnscope::gradientSource(source_.source) ? source_.of : lab_->shownTrace();
}

bool ModelViewController::shownNow() const { return state_->view().tab == QLatin1String("model"); }

void ModelViewController::refresh() {
    const TracePtr trace = shownTrace();
    const MapKey key = MapKey{state_->block(), state_->layer(), state_->head()};
    if (!trace || key.block < 0 || key.block >= int(trace->blocks().size())) return;
    const auto& info = trace->blocks()[std::size_t(key.block)];
    if (trace != blockTrace_ || key.block != block_) {
        blockTrace_ = trace;
        block_ = key.block;
        panel_->setBlock(QString::fromStdString(info.name), info.layers, info.heads);
        panel_->grid()->setLayerWindows({info.layerWindows.begin(), info.layerWindows.end()});
        // The Explore overview may already hold this block's thumbnails.
        const OverviewGrid* explore = overview_;
        if (explore->layers() == info.layers && explore->heads() == info.heads)
            panel_->grid()->setImages(explore->images());
        if (metricsTrace_ == trace) panel_->setMetrics(metrics_);  // every block's metrics came with the trace's
    }
    panel_->grid()->setSelected(key.layer, key.head);
    std::vector<std::pair<int, int>> masked;
    for (const auto& h : state_->masks())
        if (QString::fromStdString(h.block) == QString::fromStdString(info.name)) masked.emplace_back(h.layer, h.head);
    panel_->grid()->setCrossedOut(masked);
    panel_->metricMap()->setSelected(key.layer, key.head);
    // The thumbnails and metrics are of the shown source, or of the variant the lab shows: the
    // caption names which.
    ShownVariant variant = lab_->shownVariant();
    QString kind;
    if (!source_.weights()) {
        variant = ShownVariant::modelsOwn(1.0);  // a map source weights the model's own maps
        variant.source = source_;
        kind = QString::fromUtf8(attnscope::sourceLabel(source_.source)) +
               (attnscope::perHeadSource(source_.source) ? QString() : tr(" (one map per layer)"));
    } else {
        kind = shownKindCaption(info, key.block, variant) +
               (shownKindUsesTemperature(info, variant)
                        ? QStringLiteral(" · T = %1").arg(variant.spec.map.temperature, 0, 'g', 3)
                        : QString());
    }
    panel_->grid()->setCaption(tr("%1 block · %2 layers × %3 heads · layer %4 · head %5 · %6")
                                       .arg(QString::fromStdString(info.name))
                                       .arg(info.layers)
                                       .arg(info.heads)
                                       .arg(key.layer)
                                       .arg(key.head)
                                       .arg(kind));
    if (!shownNow()) return;
    if (metricsTrace_ == trace && metricsVariant_ == variant) return;
    if (attnscope::gradientSource(source_.source) && !source_.gradients) {
        panel_->setStatus(tr("%1: waiting for the gradients (one forward and one backward pass)…")
                                  .arg(QString::fromUtf8(attnscope::sourceLabel(source_.source))));
        return;
    }
    metricsTrace_ = trace;
    metricsVariant_ = variant;
    panel_->setStatus(tr("computing metrics…"));
    service_->requestMetrics(trace, variant);
}
