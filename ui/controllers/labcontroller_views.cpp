// LabController, continued: head masking (asked by the window's overview), the metrics table
// and the block views (rollout, flow, head similarity) of the Metrics tab.
#include "controllers/labcontroller.h"

#include "figure/labels.h"
#include "panels/labpanel.h"
#include "panels/metricspanel.h"
#include "services/session.h"
#include "state/viewstate.h"

#include <QAction>
#include <QMenu>

#include <algorithm>
#include <cmath>

void LabController::toggleMask(const QString& block, int layer, int head) {
    auto& m = intervention_.masked;
    const auto it = std::find_if(m.begin(), m.end(), [&](const attnscope::HeadRef& h) {
        return QString::fromStdString(h.block) == block && h.layer == layer && h.head == head;
    });
    if (it != m.end())
        m.erase(it);
    else
        m.push_back({block.toStdString(), layer, head});
    updateMaskViews();
    applyIntervention();
}

bool LabController::isMasked(const QString& block, int layer, int head) const {
    return std::any_of(intervention_.masked.begin(), intervention_.masked.end(), [&](const attnscope::HeadRef& h) {
        return QString::fromStdString(h.block) == block && h.layer == layer && h.head == head;
    });
}

void LabController::setMaskedHeads(std::vector<attnscope::HeadRef> heads) {
    intervention_.masked = std::move(heads);
    updateMaskViews();
    applyIntervention();
}

void LabController::clearMasks() {
    intervention_.masked.clear();
    updateMaskViews();
    applyIntervention();
}

void LabController::updateMaskViews() {
    panel_->setMaskedHeads(intervention_.masked);
    state_->setMasks(intervention_.masked);
    showMasksOnOverview();
}

MapKey LabController::currentKey() const { return {state_->block(), state_->layer(), state_->head()}; }

QString LabController::blockName() const {
    const QString block = state_->blockName();
    return block.isEmpty() ? QStringLiteral("self") : block;
}

bool LabController::metricsShown() const { return state_->view().tab == QLatin1String("metrics"); }

// The masked heads of the shown block, crossed out in the overview.
void LabController::showMasksOnOverview() {
    const QString block = blockName();
    std::vector<std::pair<int, int>> heads;
    for (const auto& h : intervention_.masked)
        if (QString::fromStdString(h.block) == block) heads.emplace_back(h.layer, h.head);
    emit maskedHeadsShown(heads);
}

QMenu* LabController::headMenu(int layer, int head, QWidget* parent) {
    if (!session_->trace()) return nullptr;
    const QString block = blockName();
    auto* menu = new QMenu(parent);
    menu->setAttribute(Qt::WA_DeleteOnClose);
    const bool masked = isMasked(block, layer, head);
    menu->addAction(masked ? tr("Unmask layer %1 head %2").arg(layer).arg(head)
                           : tr("Mask layer %1 head %2 (re-run)").arg(layer).arg(head),
                    this, [=] { toggleMask(block, layer, head); });
    QAction* clear = menu->addAction(tr("Clear all masks"), this, &LabController::clearMasks);
    clear->setEnabled(!intervention_.masked.empty());
    return menu;
}

void LabController::onBlockChanged() {
    showMasksOnOverview();
    if (metricsShown()) refreshBlockView();
}

void LabController::onTabChanged() {
    if (!metricsShown()) return;
    refreshMetrics();
    refreshBlockView();
}

void LabController::setSource(const ShownSource& source) {
    if (source == source_) return;
    source_ = source;
    if (metricsShown()) {
        refreshMetrics();
        refreshBlockView();  // its title says whether a source is shown
    }
}

TracePtr LabController::metricsTraceNow() const {
    return attnscope::gradientSource(source_.source) ? source_.of : shownTrace();
}

void LabController::refreshMetrics() {
    const TracePtr t = metricsTraceNow();
    if (!t) return;
    const QString label = QString::fromUtf8(attnscope::sourceLabel(source_.source));
    if (attnscope::gradientSource(source_.source) && !source_.gradients) {
        metricsTrace_.reset();  // asked again when the gradients arrive
        metrics_->clearAll(tr("%1: waiting for the gradients (one forward and one backward pass)…").arg(label));
        return;
    }
    const double temperature = source_.weights() ? displayTemperature(state_->temperature()) : 1.0;
    if (t == metricsTrace_ && temperature == metricsTemperature_ && source_ == metricsSource_) return;
    const QString what = source_.weights() ? tr("Computing per-head metrics…")
                                           : tr("Computing the metrics of the %1 maps…").arg(label);
    metrics_->setStatus(what);
    jobStarted(what);
    ShownVariant variant = ShownVariant::modelsOwn(temperature);
    variant.source = source_;
    service_->requestMetrics(t, variant);
}

void LabController::onMetrics(const MetricsResult& r) {
    if (r.trace != metricsTraceNow() || r.variant.source != source_) return;
    const bool source = !r.variant.source.weights();
    const QString label = QString::fromUtf8(attnscope::sourceLabel(r.variant.source.source));
    const QString unit = attnscope::perHeadSource(r.variant.source.source) ? tr("heads") : tr("layers");
    if (r.partial) {  // the first heads while the rest are computed
        metrics_->showMetrics(r);
        metrics_->setStatus(tr("Computing per-head metrics… %1 of %2 %3").arg(r.metrics.size()).arg(r.total).arg(unit));
        return;
    }
    jobEnded();
    if (!r.error.isEmpty()) {
        if (source) metrics_->clearAll(QString());  // not the previous source's rows under this one's name
        metrics_->setStatus(tr("<span style='color:#c03030'>%1</span>").arg(r.error.toHtmlEscaped()));
        return;
    }
    metricsTrace_ = r.trace;
    metricsTemperature_ = r.temperature;
    metricsSource_ = r.variant.source;
    metrics_->showMetrics(r);
    QString what = r.trace == session_->trace() ? QString() : QStringLiteral(" · after ") + intervention_.describe();
    const QString maps = !source ? tr("the model's own maps")
                         : attnscope::unitRangeSource(r.variant.source.source)
                                 ? tr("the %1 maps").arg(label)
                                 : tr("the %1 maps, each row's |values| as shares of its sum").arg(label);
    metrics_->setStatus(
            tr("<b>%1 %2</b> · %3%4%5 · click a header to sort, a row to select the head, double-click to show it")
                    .arg(r.metrics.size())
                    .arg(source && !attnscope::perHeadSource(r.variant.source.source) ? tr("layers (one map per layer)")
                                                                                      : tr("heads"))
                    .arg(maps.toHtmlEscaped())
                    .arg(std::abs(r.temperature - 1.0) > 1e-9 ? tr(" at display T = %1").arg(r.temperature, 0, 'g', 3)
                                                              : QString())
                    .arg(what.toHtmlEscaped()));
}

void LabController::refreshBlockView() {
    const TracePtr t = shownTrace();
    int block = currentKey().block;
    if (!t || block < 0 || block >= int(t->blocks().size())) return;
    const BlockView view = metrics_->currentView();
    // Rollout and flow follow a token through self-attention layers: for cross-attention, whose
    // maps are not square, show the first self-attention block (the title names it).
    const auto square = [&](int b) {
        return t->blocks()[std::size_t(b)].queryTokens.size() == t->blocks()[std::size_t(b)].keyTokens.size() &&
               t->blocks()[std::size_t(b)].name != "cross";
    };
    if (view != BlockView::Similarity && !square(block))
        for (int b = 0; b < int(t->blocks().size()); ++b)
            if (square(b)) {
                block = b;
                break;
            }
    blockViewBlock_ = block;
    jobStarted(view == BlockView::Flow ? tr("Computing attention flow…") : tr("Computing the block view…"));
    service_->requestBlockView(t, block, view, displayTemperature(state_->temperature()));
}

void LabController::onBlockView(const BlockViewResult& r) {
    if (r.trace != shownTrace() || r.block != blockViewBlock_ || r.view != metrics_->currentView()) return;
    jobEnded();
    if (!r.error.isEmpty()) {
        metrics_->clearBlockView(r.error);
        return;
    }
    const auto& info = r.trace->blocks()[std::size_t(r.block)];
    QStringList rows, cols;
    QString title;
    if (r.view == BlockView::Similarity) {
        for (int l = 0; l < info.layers; ++l)
            for (int h = 0; h < info.heads; ++h) rows << QStringLiteral("L%1H%2").arg(l).arg(h);
        cols = rows;
        title = tr("Head similarity (cosine) · %1 block").arg(QString::fromStdString(info.name));
    } else {
        const QStringList queries = toQtStrings(info.queryTokens);
        if (r.rows.empty()) {
            rows = queries;
        } else {  // a long input's rollout on some rows: label each with its position
            for (int q : r.rows)
                rows << QStringLiteral("%1 %2").arg(q).arg(q < queries.size() ? queries[q] : QString());
        }
        cols = toQtStrings(info.keyTokens);
        title = (r.view == BlockView::Rollout ? tr("Attention rollout") : tr("Attention flow")) +
                tr(" · %1 block · %2 layers").arg(QString::fromStdString(info.name)).arg(info.layers);
        if (!r.rows.empty()) title += tr(" · %1 of %2 rows").arg(r.rows.size()).arg(info.queryTokens.size());
    }
    if (std::abs(r.temperature - 1.0) > 1e-9) title += tr(" · T = %1").arg(r.temperature, 0, 'g', 3);
    // Rollout, flow and similarity compose or compare probability maps: they stay the weights'.
    if (!source_.weights())
        title += tr(" · of the weights, not %1").arg(QString::fromUtf8(attnscope::sourceLabel(source_.source)));
    metrics_->showBlockView(r, rows, cols, title);
}
