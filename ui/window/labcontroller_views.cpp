// LabController, continued: head masking from the overview grid, the metrics table and the
// block views (rollout, flow, head similarity) of the Metrics tab.
#include "window/labcontroller.h"

#include "panels/controlpanel.h"
#include "views/heatmapview.h"
#include "panels/labpanel.h"
#include "window/mainwindow.h"
#include "panels/metricspanel.h"
#include "views/overviewgrid.h"
#include "figure/labels.h"
#include "services/session.h"
#include "views/temperatureslider.h"

#include <QComboBox>
#include <QContextMenuEvent>
#include <QMenu>
#include <QMouseEvent>
#include <QSpinBox>
#include <QTabWidget>

#include <algorithm>
#include <cmath>

void LabController::toggleMask(const QString& block, int layer, int head) {
    auto& m = intervention_.masked;
    const auto it = std::find_if(m.begin(), m.end(), [&](const attnscope::HeadRef& h) {
        return QString::fromStdString(h.block) == block && h.layer == layer && h.head == head;
    });
    if (it != m.end()) m.erase(it);
    else m.push_back({block.toStdString(), layer, head});
    updateMaskViews();
    applyIntervention();
}

bool LabController::isMasked(const QString& block, int layer, int head) const {
    return std::any_of(intervention_.masked.begin(), intervention_.masked.end(), [&](const attnscope::HeadRef& h) {
        return QString::fromStdString(h.block) == block && h.layer == layer && h.head == head;
    });
}

void LabController::clearMasks() {
    intervention_.masked.clear();
    updateMaskViews();
    applyIntervention();
}

void LabController::updateMaskViews() {
    panel_->setMaskedHeads(intervention_.masked);
    overlay_->update();
}

bool LabController::eventFilter(QObject* watched, QEvent* event) {
    OverviewGrid* grid = window_->overview();
    if (watched != grid) return QObject::eventFilter(watched, event);
    if (event->type() == QEvent::Resize) overlay_->setGeometry(grid->rect());
    const auto tileAt = [grid](const QPoint& p, int& layer, int& head) {
        for (layer = 0; layer < grid->layers(); ++layer)
            for (head = 0; head < grid->heads(); ++head)
                if (grid->tileRect(layer, head).contains(p)) return true;
        return false;
    };
    if (event->type() == QEvent::MouseButtonPress) {
        auto* e = static_cast<QMouseEvent*>(event);
        int layer = 0, head = 0;
        if (e->button() == Qt::LeftButton && (e->modifiers() & Qt::ControlModifier) && tileAt(e->position().toPoint(), layer, head)) {
            toggleMask(currentBlockName(), layer, head);
            return true;
        }
    } else if (event->type() == QEvent::ContextMenu) {
        auto* e = static_cast<QContextMenuEvent*>(event);
        int layer = 0, head = 0;
        if (!tileAt(e->pos(), layer, head) || !window_->session()->trace()) return false;
        const QString block = currentBlockName();
        auto* menu = new QMenu(grid);
        menu->setAttribute(Qt::WA_DeleteOnClose);
        const bool masked = isMasked(block, layer, head);
        menu->addAction(masked ? tr("Unmask layer %1 head %2").arg(layer).arg(head) : tr("Mask layer %1 head %2 (re-run)").arg(layer).arg(head),
                        this, [=] { toggleMask(block, layer, head); });
        QAction* clear = menu->addAction(tr("Clear all masks"), this, &LabController::clearMasks);
        clear->setEnabled(!intervention_.masked.empty());
        menu->popup(e->globalPos());
        return true;
    }
    return QObject::eventFilter(watched, event);
}

void LabController::refreshMetrics() {
    const TracePtr t = shownTrace();
    if (!t) return;
    const double temperature = displayTemperature(window_->controls()->temperature()->temperature());
    if (t == metricsTrace_ && temperature == metricsTemperature_) return;
    metrics_->setStatus(tr("Computing per-head metrics…"));
    jobStarted(tr("Computing per-head metrics…"));
    service_->requestMetrics(t, temperature);
}

void LabController::onMetrics(const MetricsResult& r) {
    if (r.trace != shownTrace()) return;
    jobEnded();
    if (!r.error.isEmpty()) {
        metrics_->setStatus(tr("<span style='color:#c03030'>%1</span>").arg(r.error.toHtmlEscaped()));
        return;
    }
    metricsTrace_ = r.trace;
    metricsTemperature_ = r.temperature;
    metrics_->showMetrics(r);
    QString what = r.trace == window_->session()->trace() ? QString() : QStringLiteral(" · after ") + intervention_.describe();
    metrics_->setStatus(tr("<b>%1 heads</b> · the model's own maps%2%3 · click a header to sort, a row to select the head, "
                           "double-click to show it")
                            .arg(r.metrics.size())
                            .arg(std::abs(r.temperature - 1.0) > 1e-9 ? tr(" at display T = %1").arg(r.temperature, 0, 'g', 3) : QString())
                            .arg(what.toHtmlEscaped()));
}

void LabController::refreshBlockView() {
    const TracePtr t = shownTrace();
    int block = window_->controls()->blockCombo()->currentIndex();
    if (!t || block < 0 || block >= int(t->blocks().size())) return;
    const BlockView view = metrics_->currentView();
    // Rollout and flow follow a token through self-attention layers: for cross-attention, whose
    // maps are not square, show the first self-attention block (the title names it).
    const auto square = [&](int b) { return t->blocks()[std::size_t(b)].queryTokens.size() == t->blocks()[std::size_t(b)].keyTokens.size() &&
                                            t->blocks()[std::size_t(b)].name != "cross"; };
    if (view != BlockView::Similarity && !square(block))
        for (int b = 0; b < int(t->blocks().size()); ++b)
            if (square(b)) {
                block = b;
                break;
            }
    blockViewBlock_ = block;
    jobStarted(view == BlockView::Flow ? tr("Computing attention flow…") : tr("Computing the block view…"));
    service_->requestBlockView(t, block, view, displayTemperature(window_->controls()->temperature()->temperature()));
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
        rows = toQtStrings(info.queryTokens);
        cols = toQtStrings(info.keyTokens);
        title = (r.view == BlockView::Rollout ? tr("Attention rollout") : tr("Attention flow")) +
                tr(" · %1 block · %2 layers").arg(QString::fromStdString(info.name)).arg(info.layers);
    }
    if (std::abs(r.temperature - 1.0) > 1e-9) title += tr(" · T = %1").arg(r.temperature, 0, 'g', 3);
    metrics_->showBlockView(r, rows, cols, title);
}

void LabController::selectHead(const QString& block, int layer, int head) {
    ControlPanel* c = window_->controls();
    const int index = c->blockCombo()->findText(block);
    if (index >= 0 && index != c->blockCombo()->currentIndex()) c->blockCombo()->setCurrentIndex(index);
    c->layerSpin()->setValue(layer);
    c->headSpin()->setValue(head);
}

