#include "controllers/labcontroller.h"

#include "figure/figure.h"
#include "figure/headfigure.h"
#include "figure/labels.h"
#include "panels/labpanel.h"
#include "panels/metricspanel.h"
#include "panels/outputpanel.h"
#include "services/session.h"
#include "views/outputchangeview.h"
#include "state/viewstate.h"

#include "attnscope/attention/knockout_spec.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSpinBox>

#include <algorithm>
#include <cmath>

LabController::LabController(ViewState* state, Session* session, QObject* parent)
    : QObject(parent), state_(state), session_(session) {
    service_ = new LabService(this);

    panel_ = new LabPanel;
    panel_->setObjectName(QStringLiteral("labPanel"));
    metrics_ = new MetricsPanel;
    metrics_->setObjectName(QStringLiteral("metricsPanel"));
    change_ = new OutputChangeView;
    change_->setObjectName(QStringLiteral("outputChange"));
    buildPropagateRow();

    connect(session, &Session::traceReady, this, &LabController::onBaseTrace);
    connect(session, &Session::modelLoaded, this, &LabController::onModelLoaded);
    connect(session, &Session::attentionFileLoaded, this, &LabController::onModelLoaded);  // a new start, too
    connect(panel_, &LabPanel::variantChanged, this, [this] { emit mapsStale(); });  // the overview follows the variant
    connect(panel_, &LabPanel::variantChanged, this, &LabController::syncState);
    connect(panel_->fitWidthSpin(), &QSpinBox::valueChanged, this, &LabController::syncState);
    connect(panel_->fitStepsSpin(), &QSpinBox::valueChanged, this, &LabController::syncState);
    connect(this, &LabController::shownTraceChanged, this, &LabController::syncState);  // a fit goes with its trace
    connect(state_, &ViewState::tabSettingsChanged, this, &LabController::followState);
    connect(state_, &ViewState::variantChanged, this, &LabController::followState);
    connect(panel_->fitButton(), &QPushButton::clicked, this, [this] { fitAdditive(); });
    connect(panel_->pruneButton(), &QPushButton::clicked, this, [this] { prune(false); });
    connect(panel_->ablateButton(), &QPushButton::clicked, this, [this] { prune(true); });
    connect(panel_->clearMasksButton(), &QPushButton::clicked, this, &LabController::clearMasks);
    connect(panel_->unmaskButton(), &QPushButton::clicked, this, [this] {
        std::vector<attnscope::HeadRef> kept;
        for (int i = 0; i < int(intervention_.masked.size()); ++i)
            if (!panel_->maskList()->item(i) || !panel_->maskList()->item(i)->isSelected())
                kept.push_back(intervention_.masked[std::size_t(i)]);
        intervention_.masked = kept;
        updateMaskViews();
        applyIntervention();
    });
    connect(panel_->knockoutApplyButton(), &QPushButton::clicked, this,
            [this] { setKnockoutSpec(panel_->knockoutEdit()->text()); });
    connect(panel_->knockoutEdit(), &QLineEdit::returnPressed, this,
            [this] { setKnockoutSpec(panel_->knockoutEdit()->text()); });
    connect(panel_->knockoutClearButton(), &QPushButton::clicked, this, [this] { setKnockoutSpec({}); });
    connect(panel_->cancelButton(), &QPushButton::clicked, this, [this] {
        service_->cancelAll();
        jobText_.clear();
        panel_->setJob({});
        panel_->jobLabel()->setText(tr("Cancelled."));
    });
    connect(service_, &LabService::rerunReady, this, &LabController::onRerun);
    connect(service_, &LabService::variantMapReady, this, &LabController::onVariantMap);
    connect(service_, &LabService::fitReady, this, &LabController::onFit);
    connect(service_, &LabService::metricsReady, this, &LabController::onMetrics);
    connect(service_, &LabService::blockViewReady, this, &LabController::onBlockView);
    connect(service_, &LabService::progress, this, &LabController::onProgress);
    // A per-layer source's row (head -1) selects its layer and keeps the head.
    connect(metrics_, &MetricsPanel::headSelected, this, [this](const QString& block, int layer, int head) {
        state_->selectByName(block, layer, head < 0 ? state_->head() : head);
    });
    connect(metrics_, &MetricsPanel::headActivated, this, [this](const QString& block, int layer, int head) {
        state_->selectByName(block, layer, head < 0 ? state_->head() : head);
        state_->setTab(QStringLiteral("explore"));
    });
    connect(metrics_, &MetricsPanel::viewChanged, this, &LabController::refreshBlockView);
}

LabController::~LabController() { shutdown(); }

void LabController::shutdown() {
    service_->cancelAll();
    service_->waitForWorkers();
}

// "Inside the model" and its layers: the row the window puts under the temperature slider.
void LabController::buildPropagateRow() {
    temperatureRow_ = new QWidget;
    auto* layout = new QHBoxLayout(temperatureRow_);
    layout->setContentsMargins(0, 0, 0, 0);
    propagate_ = new QCheckBox(tr("Inside the model, layers"));
    propagate_->setObjectName(QStringLiteral("propagateCheck"));
    propagate_->setToolTip(tr("Re-run the model with softmax(logits / T) inside the chosen layers, so later layers and "
                              "the output change too (propagated temperature). Off: T only redraws the maps."));
    layers_ = new QLineEdit;
    layers_->setObjectName(QStringLiteral("temperatureLayersEdit"));
    layers_->setPlaceholderText(tr("all"));
    layers_->setToolTip(tr("Layers the temperature applies in, e.g. 0,2 (empty = every layer)"));
    layers_->setMaximumWidth(90);
    layout->addWidget(propagate_);
    layout->addWidget(layers_);
    layout->addStretch(1);
    connect(propagate_, &QCheckBox::toggled, this, &LabController::syncState);  // first: the state says where T is
    connect(propagate_, &QCheckBox::toggled, this, &LabController::temperatureInsideChanged);
    connect(propagate_, &QCheckBox::toggled, this, [this] {
        emit mapsStale();
        applyIntervention();
    });
    connect(layers_, &QLineEdit::editingFinished, this, [this] {
        try {
            intervention_.layers = layers_->text().trimmed().isEmpty()
                                           ? std::vector<int>{}
                                           : attnscope::parseLayerList(layers_->text().toStdString());
            layers_->setStyleSheet({});
        } catch (const std::exception& e) {
            layers_->setStyleSheet(QStringLiteral("color: #c03030;"));
            emit status(QString::fromUtf8(e.what()), 8000);
            return;
        }
        syncState();
        if (propagate_->isChecked()) applyIntervention();
    });
}

TracePtr LabController::shownTrace() const {
    const TracePtr base = session_->trace();
    return rerunTrace_ && base && base_ == base ? rerunTrace_ : base;
}

double LabController::displayTemperature(double sliderTemperature) const {
    return temperatureInside() ? 1.0 : sliderTemperature;
}

bool LabController::temperatureInside() const { return propagate_->isChecked(); }

bool LabController::takesDetail() const {
    return panel_->variant() != LabVariant::Native || propagate_->isChecked() || shownTrace() != session_->trace();
}

VariantSpec LabController::variantSpec(MapKey key) const {
    VariantSpec s;
    s.variant = panel_->variant();
    s.map.temperature = displayTemperature(state_->temperature());
    s.map.featureMap = panel_->featureMap();
    s.map.features = panel_->featuresSpin()->value();
    s.gate = panel_->gate();
    if (fit_ && fitTrace_ == shownTrace() && fitKey_ == key) s.fit = fit_;
    return s;
}

ShownVariant LabController::shownVariant() const {
    ShownVariant v;
    v.spec = variantSpec(MapKey{-1, -1, -1});  // no head's fit: those go into fits
    // Only the settings the variant uses, so that moving another (the gate while linear is
    // shown) keeps the thumbnails and metrics instead of computing the same maps again.
    const attnscope::VariantSpec unused;
    if (v.spec.variant != LabVariant::Linear) {
        v.spec.map.featureMap = unused.map.featureMap;
        v.spec.map.features = unused.map.features;
        v.spec.map.seed = unused.map.seed;
    }
    if (v.spec.variant != LabVariant::Hybrid) v.spec.gate = unused.gate;
    if (v.spec.variant == LabVariant::Additive || v.spec.variant == LabVariant::Hybrid)
        if (fit_ && fitTrace_ == shownTrace()) v.fits.push_back({fitKey_.block, fitKey_.layer, fitKey_.head, fit_});
    return v;
}

void LabController::requestDetail(MapKey key) {
    if (const TracePtr t = shownTrace(); t && key.block >= 0) service_->requestVariantMap(t, key, variantSpec(key));
}

void LabController::onVariantMap(const VariantMapResult& r) {
    if (r.trace != shownTrace() || !(r.key == currentKey()) || !takesDetail()) return;
    panel_->variantKlLabel()->setText(
            r.klFromDot >= 0 ? tr("KL(dot ‖ shown) = <b>%1 nats</b>").arg(r.klFromDot, 0, 'g', 4) : QString());
    if (!r.error.isEmpty()) {
        emit detailMessage(r.error);
        return;
    }
    const auto& info = r.trace->blocks()[std::size_t(r.key.block)];
    std::optional<RerunNote> note;  // the same title as a workspace's figure (headfigure.h)
    if (r.trace != session_->trace())
        note = RerunNote{intervention_.propagate, intervention_.temperature, int(intervention_.masked.size())};
    const QString title =
            labMapTitle(*r.trace, r.key.block, r.key.layer, r.key.head, r.spec, r.spec.fit != nullptr, note);
    emit detailMap(r.map, toQtStrings(info.queryTokens), toQtStrings(info.keyTokens), title);
}

void LabController::onBaseTrace() {
    rerunTrace_.reset();
    base_.reset();
    fit_.reset();
    fitTrace_.reset();
    change_->clear();
    panel_->fitLabel()->setText(tr("<i>No additive fit yet.</i>"));
    syncState();
    if (intervention_.active()) applyIntervention();
    if (metricsShown()) {
        refreshMetrics();
        refreshBlockView();
    }
}

void LabController::onModelLoaded() {
    service_->cancelAll();
    jobText_.clear();
    panel_->setJob({});
    intervention_.masked.clear();
    intervention_.knockouts.clear();  // positions and layers of another model
    intervention_.knockoutSpec.clear();
    panel_->knockoutEdit()->clear();
    panel_->knockoutLabel()->clear();
    panel_->knockoutClearButton()->setEnabled(false);
    rerunTrace_.reset();
    base_.reset();
    fit_.reset();
    fitTrace_.reset();
    metricsTrace_.reset();
    change_->clear();
    metrics_->clearAll(tr("Run an input to see per-head metrics."));
    panel_->fitLabel()->setText(tr("<i>No additive fit yet.</i>"));
    updateMaskViews();
    syncState();
}

void LabController::onTemperatureChanged() {
    if (propagate_->isChecked())
        applyIntervention();
    else if (metricsShown()) {
        refreshMetrics();
        refreshBlockView();
    }
}

// Re-runs the session's trace with what the user asked for; no intervention: back to it.
void LabController::applyIntervention() {
    intervention_.propagate = propagate_->isChecked();
    intervention_.temperature = state_->temperature();
    service_->cancel(LabJob::Prune);
    if (!intervention_.active()) {
        service_->cancel(LabJob::Rerun);
        const bool had = rerunTrace_ != nullptr;
        rerunTrace_.reset();
        base_.reset();
        change_->clear();
        jobEnded();
        if (had) {
            emit mapsStale();
            emit shownTraceChanged();
            if (metricsShown()) {
                refreshMetrics();
                refreshBlockView();
            }
        }
        return;
    }
    const TracePtr base = session_->trace();
    if (!base || !session_->model()) return;
    jobStarted(tr("Re-running the model (%1)…").arg(intervention_.describe()));
    service_->requestRerun(session_->model(), base, intervention_, OutputPanel::kTopK);
}

void LabController::onRerun(const RerunResult& r) {
    if (r.original != session_->trace()) return;
    if (!r.error.isEmpty()) {
        jobEnded(tr("<span style='color:#c03030'>The re-run failed: %1</span>").arg(r.error.toHtmlEscaped()));
        if (!r.intervention.knockouts.empty())
            panel_->knockoutLabel()->setText(tr("<span style='color:#c03030'>%1</span>").arg(r.error.toHtmlEscaped()));
        emit status(tr("Re-run failed: %1").arg(r.error), 10000);
        return;
    }
    base_ = r.original;
    rerunTrace_ = r.trace;
    intervention_.masked = r.intervention.masked;  // pruning adds heads
    // A fit is of the trace it was made on: the re-run has none, and the panel says so as the map does.
    if (fit_)
        panel_->fitLabel()->setText(
                tr("<i>No additive fit for this re-run (the fit was of the model before it): fit again.</i>"));
    fit_.reset();
    fitTrace_.reset();
    syncState();
    change_->showChange(r.change, r.intervention.describe(), r.ms);
    if (r.ranking.empty()) {
        jobEnded(tr("Re-ran in %1.").arg(formatDuration(r.ms)));
    } else {
        QStringList top;
        for (std::size_t i = 0; i < r.ranking.size() && i < 3; ++i)
            top << tr("L%1H%2 (%3)")
                            .arg(r.ranking[i].head.layer)
                            .arg(r.ranking[i].head.head)
                            .arg(r.ranking[i].score, 0, 'g', 3);
        jobEnded(tr("Re-ran in %1. Ranked %2 heads, most important: %3.")
                         .arg(formatDuration(r.ms))
                         .arg(r.ranking.size())
                         .arg(top.join(QStringLiteral(", "))));
    }
    emit status(tr("Re-ran the model (%1) in %2").arg(r.intervention.describe(), formatDuration(r.ms)), 5000);
    updateMaskViews();
    emit mapsStale();
    emit shownTraceChanged();
    if (metricsShown()) {
        refreshMetrics();
        refreshBlockView();
    }
}

void LabController::fitAdditive() {
    attnscope::AdditiveFitOptions o;
    o.width = panel_->fitWidthSpin()->value();
    o.steps = panel_->fitStepsSpin()->value();
    o.temperature = displayTemperature(state_->temperature());
    fitAdditive(currentKey(), o);
}

void LabController::fitAdditive(MapKey key, const attnscope::AdditiveFitOptions& o) {
    const TracePtr trace = shownTrace();
    if (!trace) return;
    fitOptions_ = o;
    jobStarted(
            tr("Fitting additive attention to layer %1 head %2 (%3 steps)…").arg(key.layer).arg(key.head).arg(o.steps));
    service_->requestFit(trace, key, o);
}

bool LabController::currentFit(MapKey& key, attnscope::AdditiveFitOptions& options) const {
    if (!fit_ || fitTrace_ != shownTrace()) return false;
    key = fitKey_;
    options = fitOptions_;
    options.width = fit_->width;
    options.steps = int(fit_->klHistory.size());
    return true;
}

void LabController::onFit(const FitResult& r) {
    if (!r.error.isEmpty()) {
        panel_->fitLabel()->setText(tr("<span style='color:#c03030'>%1</span>").arg(r.error.toHtmlEscaped()));
        jobEnded(tr("The fit failed."));
        return;
    }
    if (r.trace != shownTrace()) return;
    fit_ = r.fit;
    fitTrace_ = r.trace;
    fitKey_ = r.key;
    panel_->fitLabel()->setText(
            tr("Layer %1 head %2: mean KL to the dot map <b>%3 → %4 nats</b><br>%5 steps, width %6, %7")
                    .arg(r.key.layer)
                    .arg(r.key.head)
                    .arg(r.fit->initialKl, 0, 'f', 4)
                    .arg(r.fit->finalKl, 0, 'f', 4)
                    .arg(r.fit->klHistory.size())
                    .arg(r.fit->width)
                    .arg(formatDuration(r.ms)));
    jobEnded(tr("Fitted in %1.").arg(formatDuration(r.ms)));
    syncState();
    if (panel_->variant() != LabVariant::Additive && panel_->variant() != LabVariant::Hybrid)
        panel_->setVariant(LabVariant::Additive);
    else
        emit mapsStale();  // the fitted head's map and thumbnail
}

void LabController::prune(bool mostImportant) {
    const TracePtr base = session_->trace();
    if (!base || !session_->model()) return;
    intervention_.propagate = propagate_->isChecked();
    intervention_.temperature = state_->temperature();
    service_->cancel(LabJob::Rerun);
    const int count = panel_->pruneCountSpin()->value();
    jobStarted((mostImportant ? tr("Ranking heads by %1 and ablating the %2 most important…")
                              : tr("Ranking heads by %1 and pruning the %2 least important…"))
                       .arg(panel_->importanceCombo()->currentText())
                       .arg(count));
    service_->requestPrune(session_->model(), base, intervention_, panel_->importance(), count, OutputPanel::kTopK,
                           mostImportant);
}

void LabController::jobStarted(const QString& text) {
    jobText_ = text;
    jobClock_ = {};
    panel_->setJob(text);
}

void LabController::jobEnded(const QString& text) {
    jobText_.clear();
    panel_->setJob({});
    if (!text.isEmpty()) panel_->jobLabel()->setText(text);
}

bool LabController::setKnockoutSpec(const QString& spec, bool apply) {
    std::vector<attnscope::Knockout> knockouts;
    QString canonical;
    if (!spec.trimmed().isEmpty()) {
        try {
            knockouts = attnscope::parseKnockouts(spec.toStdString());  // the CLI's parser
            canonical = QString::fromStdString(attnscope::formatKnockouts(knockouts));
        } catch (const std::exception& e) {
            const QString why = QString::fromUtf8(e.what());
            panel_->knockoutLabel()->setText(tr("<span style='color:#c03030'>%1</span>").arg(why.toHtmlEscaped()));
            emit status(tr("Knockout refused: %1").arg(why), 8000);
            return false;
        }
    }
    intervention_.knockouts = std::move(knockouts);
    intervention_.knockoutSpec = canonical;
    panel_->knockoutEdit()->setText(canonical);
    panel_->knockoutClearButton()->setEnabled(!canonical.isEmpty());
    panel_->knockoutLabel()->setText(canonical.isEmpty() ? QString() : tr("Knocked out: %1").arg(canonical));
    syncState();  // the state holds what the lab applies
    if (apply) applyIntervention();
    return true;
}

void LabController::onProgress(LabJob job, int permille) {
    if (jobText_.isEmpty()) return;
    panel_->setJobProgress(permille);
    // Re-runs of a big model take tens of seconds: say how long is left.
    const double left = permille >= 0 ? jobClock_.secondsLeft(permille, 1000) : -1;
    panel_->jobLabel()->setText(
            left < 0
                    ? jobText_
                    : tr("%1 · %2 left").arg(jobText_, QString::fromStdString(attnscope::ProgressClock::format(left))));
    Q_UNUSED(job);
}

Workspace::Lab LabController::labFromPanel() const {
    Workspace::Lab lab = state_->tabSettings().lab;
    lab.variant = panel_->variant();
    lab.featureMap = panel_->featureMap();
    lab.features = panel_->featuresSpin()->value();
    lab.gate = panel_->gate();
    lab.fitWidth = panel_->fitWidthSpin()->value();
    lab.fitSteps = panel_->fitStepsSpin()->value();
    lab.fit.reset();
    MapKey key;
    attnscope::AdditiveFitOptions fit;
    if (currentFit(key, fit) && key.block >= 0 && key.block < int(state_->blocks().size())) {
        lab.fit = Workspace::Lab::Fit{state_->blocks()[std::size_t(key.block)].name, key.layer, key.head,
                                      fit.temperature};
        lab.fitWidth = fit.width;  // the fit as it was made, whatever the spin boxes say now
        lab.fitSteps = fit.steps;
    }
    lab.knockout = intervention_.knockoutSpec;
    return lab;
}

void LabController::syncState() {
    if (following_) return;
    const Workspace::Lab lab = labFromPanel();
    following_ = true;  // the state's echo must not set the panel back
    state_->setVariant(lab.variant);
    state_->setInside({propagate_->isChecked(), intervention_.layers});
    state_->setTabSetting(&ViewState::TabSettings::lab, lab);
    following_ = false;
}

void LabController::followState() {
    if (following_) return;
    ViewState::TabSettings mine = state_->tabSettings();
    mine.lab = labFromPanel();
    if (panel_->variant() == state_->variant() && ViewState::sameTabSettings(mine, state_->tabSettings())) return;
    const Workspace::Lab& lab = state_->tabSettings().lab;
    following_ = true;
    if (panel_->variant() != state_->variant()) panel_->setVariant(state_->variant());
    if (panel_->featureMap() != lab.featureMap) panel_->featureMapCombo()->setCurrentIndex(int(lab.featureMap));
    panel_->featuresSpin()->setValue(lab.features);
    panel_->gateSlider()->setValue(int(std::lround(lab.gate * 100)));
    panel_->fitWidthSpin()->setValue(lab.fitWidth);
    panel_->fitStepsSpin()->setValue(lab.fitSteps);
    following_ = false;
    syncState();  // what the panel took (a value out of a spin box's range is clamped)
}
