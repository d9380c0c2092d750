// The views dock: computing its views' values on workers and linking them (viewscontroller.h).
#include "window/viewscontroller.h"

#include "figure/figure.h"
#include "panels/controlpanel.h"
#include "views/heatmapview.h"
#include "views/lineview.h"
#include "views/neuronview.h"
#include "views/qkspaceview.h"
#include "views/temperatureslider.h"
#include "window/labcontroller.h"
#include "window/mainwindow.h"

#include "attnscope/attention/trace.h"
#include "attnscope/runtime/error.h"

#include <QAction>
#include <QDir>
#include <QFileDialog>
#include <QMessageBox>
#include <QTabWidget>
#include <qcustomplot.h>

#include <cmath>

namespace {

struct LineResult {
    std::vector<attnscope::HeadMap> maps;
    QString error;
};
struct NeuronResult {
    attnscope::NeuronRow row;
    QString error;
};
struct QkResult {
    attnscope::QkSpace space;
    std::vector<attnscope::HeadMap> maps;  // the heads in scope, for the selected query's row
    std::vector<int> heads;
    QString error;
};

// Maps of heads [first, last] at T, or an error in words.
QString layerMaps(const attnscope::Trace& trace, const MapKey& key, int first, int last, double T, const JobTracker::Stop& stop,
                  std::vector<attnscope::HeadMap>& out) {
    try {
        attnscope::MapOptions o;
        o.temperature = T;
        for (int h = first; h <= last && !stop; ++h) out.push_back(trace.map(key.block, key.layer, h, o));
    } catch (const std::exception& e) {
        return QString::fromUtf8(e.what());
    }
    return {};
}

}  // namespace

ViewsController::ViewsController(MainWindow* window) : QObject(window), window_(window) {
    tabs_ = new QTabWidget;
    tabs_->setObjectName(QStringLiteral("viewsTabs"));
    lines_ = new LineView;
    lines_->setObjectName(QStringLiteral("lineView"));
    neuron_ = new NeuronView;
    neuron_->setObjectName(QStringLiteral("neuronView"));
    qk_ = new QkSpaceView;
    qk_->setObjectName(QStringLiteral("qkSpaceView"));
    tabs_->addTab(lines_, tr("Lines"));
    tabs_->addTab(neuron_, tr("Neuron"));
    tabs_->addTab(qk_, tr("Query\u2013key space"));
    const QString none = tr("Run an input to see its attention here.");
    lines_->clear(none);
    neuron_->clear(none);
    qk_->clear(none);

    connect(tabs_, &QTabWidget::currentChanged, this, &ViewsController::refresh);
    connect(neuron_, &NeuronView::queryChosen, this, [this](int q) {
        select(0, q);
        requestNeuron();
    });
    connect(qk_, &QkSpaceView::scopeChanged, this, &ViewsController::requestQk);
    connect(lines_, &LineView::tokenFocused, this, [this](int side, int index, bool lock) {
        if (lock) select(side, index);
        else hover(side, index);
    });
    connect(neuron_, &NeuronView::keyHovered, this, [this](int key) { hover(key >= 0 ? 1 : -1, key); });
    connect(qk_, &QkSpaceView::pointHovered, this, [this](int p) {
        const auto& s = qk_->figure().space;
        hover(p >= 0 ? (s.isKey[p] ? 1 : 0) : -1, p >= 0 ? s.position[p] : -1);
    });
    connect(qk_, &QkSpaceView::pointSelected, this, [this](int p) {
        const auto& s = qk_->figure().space;
        if (p < 0) return select(-1, -1);
        select(s.isKey[p] ? 1 : 0, s.position[p]);
    });
    connect(lines_, &LineView::exportRequested, this, [this] { exportView(lines_); });
    connect(neuron_, &NeuronView::exportRequested, this, [this] { exportView(neuron_); });
    connect(qk_, &QkSpaceView::exportRequested, this, [this] { exportView(qk_); });
    // A new map in the heat map (another size, another head) keeps the frame where it fits.
    connect(window_->heatmap(), &HeatmapView::mapShown, this, [this] { setHeatmapHighlight(highlight_.first, highlight_.second); });
}

ViewsController::~ViewsController() = default;

void ViewsController::waitForWorkers() {
    lineJobs_.waitForDone();
    neuronJobs_.waitForDone();
    qkJobs_.waitForDone();
}

ViewsController::Selection ViewsController::current() const {
    Selection s;
    s.trace = window_->lab()->shownTrace();
    s.key = window_->currentKey();
    s.temperature = window_->lab()->displayTemperature(window_->sliderTemperature());
    if (s.trace && (s.key.block < 0 || s.key.block >= int(s.trace->blocks().size()))) s.key.block = -1;
    return s;
}

QStringList ViewsController::labels(const Selection& s, bool queries) const {
    const auto& block = s.trace->blocks()[std::size_t(s.key.block)];
    return window_->axisLabels(*s.trace, block, queries, window_->rawTokensAction()->isChecked());
}

QString ViewsController::title(const Selection& s, bool withHead) const {
    const auto& info = s.trace->blocks()[std::size_t(s.key.block)];
    const QString block = s.trace->blocks().size() > 1 ? QString::fromStdString(info.name) : QString();
    const double T = info.kind == attnscope::AttentionKind::Linear ? 1.0 : s.temperature;
    if (withHead) return mapTitle(QString(), block, s.key.layer, s.key.head, T);
    QStringList parts;
    if (!block.isEmpty()) parts << block;
    parts << tr("layer %1").arg(s.key.layer);
    if (std::abs(T - 1.0) > 1e-9) parts << QStringLiteral("T = %1").arg(T, 0, 'g', 3);
    return parts.join(QStringLiteral(" \u00b7 "));
}

void ViewsController::refresh() {
    const Selection s = current();
    if (!s.valid()) return;
    neuron_->setQueries(labels(s, true));  // a selection may pick a query before the view is shown
    QWidget* shown = tabs_->currentWidget();
    if (shown == lines_) requestLines();
    if (shown == neuron_) requestNeuron();
    if (shown == qk_) requestQk();
}

void ViewsController::requestLines() {
    const Selection s = current();
    if (!s.valid()) return;
    const auto& info = s.trace->blocks()[std::size_t(s.key.block)];
    const QStringList q = labels(s, true), k = labels(s, false);
    if (q.size() > kMaxLineTokens || k.size() > kMaxLineTokens) {
        lineJobs_.cancel();
        lines_->clear(tr("The line view draws inputs of up to %1 tokens; this one has %2. Use the heat map, or a shorter input.")
                          .arg(kMaxLineTokens)
                          .arg(std::max(q.size(), k.size())));
        return;
    }
    const QString t = title(s, false);
    const bool cross = info.name == "cross";
    const int heads = info.heads;
    lineJobs_.start(
        [s, heads](const JobTracker::Stop& stop) {
            LineResult r;
            r.error = layerMaps(*s.trace, s.key, 0, heads - 1, s.temperature, stop, r.maps);
            return r;
        },
        [this, q, k, t, cross](const LineResult& r) {
            if (!r.error.isEmpty()) lines_->clear(r.error);
            else lines_->setMaps(r.maps, q, k, t, cross);
            if (side_ >= 0) lines_->setTokenFocus(side_, index_, true);
            emit linesShown();
        });
}

void ViewsController::requestNeuron() {
    const Selection s = current();
    if (!s.valid()) return;
    const QStringList q = labels(s, true), k = labels(s, false);
    neuron_->setQueries(q);
    const int query = neuron_->query();
    if (query < 0) return;
    const QString t = title(s, true);
    neuronJobs_.start(
        [s, query](const JobTracker::Stop&) {
            NeuronResult r;
            try {
                r.row = attnscope::neuronRow(*s.trace, s.key.block, s.key.layer, s.key.head, query, s.temperature);
            } catch (const std::exception& e) {
                r.error = QString::fromUtf8(e.what());
            }
            return r;
        },
        [this, q, k, t, query](const NeuronResult& r) {
            if (!r.error.isEmpty()) neuron_->clear(r.error);
            else neuron_->setRow(r.row, q.value(query), k, t);
            emit neuronShown();
        });
}

void ViewsController::requestQk() {
    const Selection s = current();
    if (!s.valid()) return;
    const auto& info = s.trace->blocks()[std::size_t(s.key.block)];
    const bool all = qk_->allHeads();
    const QStringList q = labels(s, true), k = labels(s, false);
    const QString t = all ? title(s, false) + tr(" \u00b7 all %1 heads").arg(info.heads) : title(s, true);
    const int heads = info.heads;
    // The selected query's row sizes the keys; maps are kept only while they are small.
    const bool withMaps = double(q.size()) * k.size() * (all ? heads : 1) <= 16e6;
    qkJobs_.start(
        [s, all, heads, withMaps](const JobTracker::Stop& stop) {
            QkResult r;
            try {
                attnscope::QkSpaceOptions o;
                o.head = all ? -1 : s.key.head;
                r.space = attnscope::qkSpace(*s.trace, s.key.block, s.key.layer, o);
            } catch (const std::exception& e) {
                r.error = QString::fromUtf8(e.what());
                return r;
            }
            if (withMaps) {
                const int first = all ? 0 : s.key.head, last = all ? heads - 1 : s.key.head;
                if (layerMaps(*s.trace, s.key, first, last, s.temperature, stop, r.maps).isEmpty())
                    for (int h = first; h <= last; ++h) r.heads.push_back(h);
                else
                    r.maps.clear();
            }
            return r;
        },
        [this, q, k, t](const QkResult& r) {
            if (!r.error.isEmpty()) {
                qk_->clear(r.error);
            } else {
                qk_->setSpace(r.space, q, k, t);
                qkMaps_ = r.maps;
                qkMapHeads_ = r.heads;
                if (side_ >= 0) qk_->selectToken(side_ == 1, index_, window_->currentKey().head);
                updateQkRow();
            }
            emit qkShown();
        });
}

void ViewsController::updateQkRow() {
    const int p = qk_->selected();
    const auto& s = qk_->figure().space;
    if (p < 0 || s.isKey[p]) return qk_->setSelectedRow({});
    for (std::size_t i = 0; i < qkMapHeads_.size(); ++i)
        if (qkMapHeads_[i] == s.head[p] && s.position[p] < qkMaps_[i].rows) {
            const auto& m = qkMaps_[i];
            return qk_->setSelectedRow(std::vector<float>(m.values.begin() + std::size_t(s.position[p]) * m.cols,
                                                          m.values.begin() + std::size_t(s.position[p] + 1) * m.cols));
        }
    qk_->setSelectedRow({});
}

void ViewsController::select(int side, int index) {
    side_ = index >= 0 ? side : -1;
    index_ = side_ >= 0 ? index : -1;
    lines_->setTokenFocus(side_, index_, side_ >= 0);
    if (side_ == 0 && neuron_->query() != index_) neuron_->setQuery(index_);  // re-asks the neuron row
    neuron_->setFocusKey(side_ == 1 ? index_ : -1);
    const auto& s = qk_->figure().space;
    const int p = qk_->selected();
    const bool same = p >= 0 && side_ >= 0 && s.isKey[p] == (side_ == 1) && s.position[p] == index_;
    if (!same) qk_->selectToken(side_ == 1, index_, window_->currentKey().head);
    updateQkRow();
    setHeatmapHighlight(side_, index_);
}

void ViewsController::hover(int side, int index) {
    if (side < 0) return setHeatmapHighlight(side_, index_);  // back to the selection
    setHeatmapHighlight(side, index);
}

void ViewsController::setHeatmapHighlight(int side, int index) {
    HeatmapView* heat = window_->heatmap();
    const auto& map = heat->map();
    const bool fits = side == 0 ? index >= 0 && index < map.rows : side == 1 && index >= 0 && index < map.cols;
    highlight_ = fits ? std::make_pair(side, index) : std::make_pair(-1, -1);
    if (!frame_) {
        frame_ = new QCPItemRect(heat->plot());
        frame_->setPen(QPen(QColor(0xff, 0x40, 0x20), 2.0));
        frame_->setBrush(Qt::NoBrush);
        frame_->setClipToAxisRect(true);
        frame_->setLayer(QStringLiteral("overlay"));
    }
    frame_->setVisible(fits);
    if (fits) {
        // Cell centres sit on integer coordinates (cellgeometry.h): row i spans i ± 0.5.
        const double rows = map.rows, cols = map.cols;
        if (side == 0) {
            frame_->topLeft->setCoords(-0.5, index - 0.5);
            frame_->bottomRight->setCoords(cols - 0.5, index + 0.5);
        } else {
            frame_->topLeft->setCoords(index - 0.5, -0.5);
            frame_->bottomRight->setCoords(index + 0.5, rows - 0.5);
        }
    }
    heat->plot()->replot(QCustomPlot::rpQueuedReplot);
}

void ViewsController::exportView(QWidget* view) {
    const QString path = QFileDialog::getSaveFileName(window_, tr("Export the view as a figure"), QString(),
                                                      tr("Figures (*.pdf *.svg *.png)"));
    if (path.isEmpty()) return;
    try {
        if (view == lines_) lines_->exportFigure(path);
        else if (view == neuron_) neuron_->exportFigure(path);
        else qk_->exportFigure(path);
        window_->showStatus(tr("Wrote %1").arg(QDir::toNativeSeparators(path)), 5000);
    } catch (const std::exception& e) {
        QMessageBox::warning(window_, tr("The figure could not be written."), QString::fromUtf8(e.what()));
    }
}
