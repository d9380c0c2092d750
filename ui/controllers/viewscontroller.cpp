// The views dock: computing its views' values on workers and linking them (viewscontroller.h).
#include "controllers/viewscontroller.h"

#include "figure/figure.h"
#include "panels/exportdialog.h"
#include "services/session.h"
#include "views/heatmapview.h"
#include "views/lineview.h"
#include "views/neuronview.h"
#include "views/qkspaceview.h"
#include "controllers/labcontroller.h"
#include "state/viewstate.h"
#include "state/recentfiles.h"
#include "controllers/sectionsync.h"
#include "figure/headfigure.h"
#include "figure/sourceview.h"
#include "panels/labpanel.h"

#include "attnscope/analysis/token_kind.h"
#include "attnscope/attention/trace.h"
#include "attnscope/runtime/error.h"

#include <QAction>
#include <QDir>
#include <QFileInfo>
#include <QMessageBox>
#include <QRegularExpression>
#include <QSignalBlocker>
#include <QTabWidget>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

namespace {

// maps[i] of heads[i] placed at their head index; heads left out get an empty map (not drawn).
std::vector<attnscope::HeadMap> byHead(const std::vector<attnscope::HeadMap>& maps, const std::vector<int>& heads,
                                       int count) {
    std::vector<attnscope::HeadMap> out(std::size_t(std::max(0, count)));
    for (std::size_t i = 0; i < maps.size(); ++i)
        if (heads[i] >= 0 && heads[i] < count) out[std::size_t(heads[i])] = maps[i];
    return out;
}

// The title, and which heads are drawn when the variant needs fits only some heads have.
QString unfittedNote(const QString& title, const std::vector<int>& unfitted) {
    if (unfitted.empty()) return title;
    return title + QObject::tr(" \u00b7 %n head(s) without an additive fit not drawn", nullptr, int(unfitted.size()));
}

}  // namespace

ViewsController::ViewsController(ViewState* state, Session* session, LabController* lab, HeatmapView* heatmap,
                                 QObject* parent)
    : QObject(parent), state_(state), session_(session), lab_(lab), heatmap_(heatmap) {
    service_ = new ViewsService(this);
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
        if (lock)
            select(side, index);
        else
            hover(side, index);
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
    connect(lines_, &LineView::windowMoved, this, &ViewsController::requestLines);
    // Each view's Export… button: the export dialog for it (as File > Export View…).
    for (QWidget* view : {static_cast<QWidget*>(lines_), static_cast<QWidget*>(neuron_), static_cast<QWidget*>(qk_)}) {
        const auto ask = [this, view] {
            tabs_->setCurrentWidget(view);
            exportShownView();
        };
        if (view == lines_)
            connect(lines_, &LineView::exportRequested, this, ask);
        else if (view == neuron_)
            connect(neuron_, &NeuronView::exportRequested, this, ask);
        else
            connect(qk_, &QkSpaceView::exportRequested, this, ask);
    }
    // A new map in the heat map (another size, another head) keeps the frame where it fits.
    connect(heatmap_, &HeatmapView::mapShown, this,
            [this] { setHeatmapHighlight(highlight_.first, highlight_.second); });

    // Every change of what the window shows: the selection, the temperature, the lab's re-run,
    // variant and fit, raw labels. The token selection is the state's (a new input, model or
    // block resets it there).
    connect(state_, &ViewState::selectionChanged, this, &ViewsController::refresh);
    connect(state_, &ViewState::temperatureChanged, this, &ViewsController::refresh);
    connect(state_, &ViewState::insideChanged, this, &ViewsController::refresh);
    connect(state_, &ViewState::viewChanged, this, &ViewsController::refresh);
    connect(state_, &ViewState::variantChanged, this, &ViewsController::refresh);
    connect(state_, &ViewState::tokenSelectionChanged, this, [this] {
        const auto& t = state_->tokenSelection();
        if (t.side != side_ || t.index != index_) select(t.side, t.index);
    });
    connect(state_, &ViewState::modelChanged, this, [this] {
        // Nothing of the old model stays on screen, and none of its jobs finishes.
        service_->cancelAll();
        qkMaps_.clear();
        qkMapHeads_.clear();
        const QString none = tr("Run an input to see its attention here.");
        lines_->clear(none);
        neuron_->clear(none);
        qk_->clear(none);
    });
    connect(session_, &Session::traceReady, this, [this] {
        select(-1, -1);  // a new input: token indices mean other tokens
        refresh();
    });
    connect(lab_, &LabController::shownTraceChanged, this, &ViewsController::refresh);
    connect(lab_->panel(), &LabPanel::variantChanged, this, &ViewsController::refresh);
    // Queued: the lab takes the fit in before the views ask for it.
    connect(lab_->service(), &LabService::fitReady, this, &ViewsController::refresh, Qt::QueuedConnection);
    // Its settings are the state's (the workspace file's "views"); the token selection is the
    // state's tokenSelection().
    const auto sync = syncSection<Workspace::Views>(
            state_, tabs_, this, &ViewState::TabSettings::views, [this] { return settings(); },
            [this](const Workspace::Views& w) { setSettings(w); });
    // What setState changes with its signals blocked: written once the views have their values.
    for (auto shown : {&ViewsController::linesShown, &ViewsController::neuronShown, &ViewsController::qkShown})
        connect(this, shown, this, sync);
}

namespace {

// The file's names of the dock's tabs, the selection's side and QkColoring's values, in their
// index order (figure/workspace_views.cpp reads the same names).
const QStringList kViewTabNames = {QStringLiteral("lines"), QStringLiteral("neuron"), QStringLiteral("qk")};
const QStringList kSideNames = {QStringLiteral("none"), QStringLiteral("query"), QStringLiteral("key")};
const QStringList kColoringNames = {QStringLiteral("position"), QStringLiteral("kind"), QStringLiteral("head"),
                                    QStringLiteral("token_kind")};

}  // namespace

Workspace::Views ViewsController::settings() const {
    const State v = state();
    Workspace::Views w;
    w.tab = kViewTabNames.value(v.tab, kViewTabNames.first());
    const bool selected = (v.selectedSide == 0 || v.selectedSide == 1) && v.selectedIndex >= 0;
    w.selectedSide = selected ? kSideNames[v.selectedSide + 1] : kSideNames[0];
    w.selectedIndex = selected ? v.selectedIndex : -1;
    w.lines = {v.lines.hiddenHeads, v.lines.threshold, v.lines.windowStart};
    w.neuronQuery = v.neuron.query;
    w.qk = {v.qk.allHeads, kColoringNames.value(int(v.qk.coloring), kColoringNames.first())};
    return w;
}

void ViewsController::setSettings(const Workspace::Views& w) {
    State v;
    v.tab = std::max(0, int(kViewTabNames.indexOf(w.tab)));
    v.selectedSide = int(kSideNames.indexOf(w.selectedSide)) - 1;  // none -1, query 0, key 1
    v.selectedIndex = v.selectedSide < 0 ? -1 : w.selectedIndex;
    v.lines = {w.lines.hiddenHeads, w.lines.threshold, w.lines.windowStart};
    v.neuron.query = w.neuronQuery;
    v.qk.allHeads = w.qk.allHeads;
    v.qk.coloring = QkColoring(std::max(0, int(kColoringNames.indexOf(w.qk.coloring))));
    setState(v);
}

ViewsController::~ViewsController() {
    service_->cancelAll();
    service_->waitForWorkers();
}

ViewsController::State ViewsController::state() const {
    State st;
    st.tab = tabs_->currentIndex();
    st.selectedSide = side_;
    st.selectedIndex = index_;
    st.lines = lines_->state();
    st.neuron = neuron_->state();
    st.qk = qk_->state();
    return st;
}

void ViewsController::setState(const State& st) {
    lines_->setState(st.lines);
    neuron_->setState(st.neuron);
    {
        const QSignalBlocker block(qk_);  // one request below, not one per combo
        qk_->setState(st.qk);
    }
    {
        const QSignalBlocker block(tabs_);
        tabs_->setCurrentIndex(std::clamp(st.tab, 0, tabs_->count() - 1));
    }
    select(st.selectedSide, st.selectedIndex);
    refresh();
}

void ViewsController::waitForWorkers() { service_->waitForWorkers(); }

ViewsController::Selection ViewsController::current() const {
    Selection s;
    s.trace = lab_->shownTrace();
    s.key = {state_->block(), state_->layer(), state_->head()};
    s.temperature = lab_->displayTemperature(state_->temperature());
    s.source = source_;
    if (attnscope::gradientSource(source_.source)) s.trace = session_->trace();  // its gradients' trace
    if (s.trace && (s.key.block < 0 || s.key.block >= int(s.trace->blocks().size()))) s.key.block = -1;
    if (s.valid()) {
        const int heads = s.trace->blocks()[std::size_t(s.key.block)].heads;
        for (int h = 0; h < heads; ++h) s.specs.push_back(lab_->variantSpec({s.key.block, s.key.layer, h}));
    }
    return s;
}

QStringList ViewsController::labels(const Selection& s, bool queries) const {
    const auto& block = s.trace->blocks()[std::size_t(s.key.block)];
    return axisLabels(*s.trace, block, queries, state_->view().rawTokens);
}

QString ViewsController::title(const Selection& s, bool withHead) const {
    const auto& info = s.trace->blocks()[std::size_t(s.key.block)];
    const QString block = s.trace->blocks().size() > 1 ? QString::fromStdString(info.name) : QString();
    const double T = info.kind == attnscope::AttentionKind::Linear || !s.source.weights() ? 1.0 : s.temperature;
    const LabVariant v = s.specs.empty() ? LabVariant::Native : s.specs.front().variant;
    // A map source weights the model's own maps: no lab variant; per-layer sources have no head.
    const QString variant = !s.source.weights()       ? sourceTitleSuffix(s.source.source)
                            : v == LabVariant::Native ? QString()
                                                      : tr(" \u00b7 lab: %1").arg(labVariantName(v));
    if (!attnscope::perHeadSource(s.source.source)) withHead = false;
    if (withHead) return mapTitle(QString(), block, s.key.layer, s.key.head, T) + variant;
    QStringList parts;
    if (!block.isEmpty()) parts << block;
    parts << tr("layer %1").arg(s.key.layer);
    if (std::abs(T - 1.0) > 1e-9) parts << QStringLiteral("T = %1").arg(T, 0, 'g', 3);
    return parts.join(QStringLiteral(" \u00b7 ")) + variant;
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

void ViewsController::setSource(const ShownSource& source) {
    source_ = source;
    refresh();
}

void ViewsController::requestLines() {
    const Selection s = current();
    if (!s.valid()) return;
    const auto& info = s.trace->blocks()[std::size_t(s.key.block)];
    QStringList q = labels(s, true), k = labels(s, false);
    // Long inputs: a window of kLineWindow tokens on both sides, which the view's scroll bar moves.
    TokenWindow w;
    const int longest = int(std::max(q.size(), k.size()));
    if (longest > kMaxLineTokens) {
        w.begin = std::clamp(lines_->windowStart(), 0, longest - kLineWindow);
        w.rows = std::clamp(int(q.size()) - w.begin, 0, kLineWindow);
        w.cols = std::clamp(int(k.size()) - w.begin, 0, kLineWindow);
        lines_->setWindow(longest, w.begin, kLineWindow);
        if (w.rows == 0 || w.cols == 0) {
            service_->cancelLines();
            lines_->clear(tr("Tokens %1\u2013%2 have no %3 here: scroll back.")
                                  .arg(w.begin)
                                  .arg(w.begin + kLineWindow - 1)
                                  .arg(w.rows == 0 ? tr("queries") : tr("keys")));
            return;
        }
        q = q.mid(w.begin, w.rows);
        k = k.mid(w.begin, w.cols);
    } else {
        lines_->setWindow(0, 0, 0);
    }
    const QString t = title(s, false);
    const bool cross = info.name == "cross";
    const bool unitRange = attnscope::unitRangeSource(s.source.source);
    service_->requestLines(s, w, [this, q, k, t, cross, unitRange](const LinesResult& r) {
        double scale = 1.0;  // raw and signed sources: opacity against the layer's largest |value|
        if (!unitRange) {
            scale = 0.0;
            for (const auto& m : r.maps)
                for (float v : m.values) scale = std::max(scale, double(std::abs(v)));
        }
        lines_->setValueScale(scale);
        if (!r.error.isEmpty())
            lines_->clear(r.error);
        else if (r.maps.empty() && !r.unfitted.empty())
            lines_->clear(
                    tr("The lab shows an additive variant, which needs a head's additive fit: fit a head of this layer "
                       "in the Lab dock to see its lines."));
        else
            lines_->setMaps(byHead(r.maps, r.heads, int(r.maps.size() + r.unfitted.size())), q, k,
                            unfittedNote(t, r.unfitted), cross);
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
    const LabVariant v = s.specs[std::size_t(s.key.head)].variant;
    // The model's own map: core says why when its layer has no q·k logits (additive, linear).
    if (v != LabVariant::Dot && v != LabVariant::Native) {
        service_->cancelNeuron();
        neuron_->clear(
                tr("The neuron view splits dot-product scores into q\u2299k; the lab shows the %1 map, which has no such "
                   "per-key decomposition. Pick \u201cmodel's own\u201d or \u201cdot\u201d in the Lab dock to see it.")
                        .arg(labVariantName(v)));
        // Queued, as a worker's result would be: a caller that just asked waits for it.
        QMetaObject::invokeMethod(
                this, [this] { emit neuronShown(); }, Qt::QueuedConnection);
        return;
    }
    service_->requestNeuron(s, query, [this, q, k, t, query](const NeuronResult& r) {
        if (!r.error.isEmpty())
            neuron_->clear(r.error);
        else
            neuron_->setRow(r.row, q.value(query), k, t);
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
    service_->requestQk(s, all, withMaps, [this, q, k, t](const QkResult& r) {
        if (!r.error.isEmpty()) {
            qk_->clear(r.error);
        } else {
            qk_->setSpace(r.space, q, k, t);
            qk_->setTokenKinds(r.queryKinds, r.keyKinds);
            qkMaps_ = r.maps;
            qkMapHeads_ = r.heads;
            if (side_ >= 0) qk_->selectToken(side_ == 1, index_, state_->head());
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
    if (!same) qk_->selectToken(side_ == 1, index_, state_->head());
    updateQkRow();
    setHeatmapHighlight(side_, index_);
    state_->setTokenSelection({side_, index_});
}

void ViewsController::hover(int side, int index) {
    if (side < 0) return setHeatmapHighlight(side_, index_);  // back to the selection
    setHeatmapHighlight(side, index);
}

void ViewsController::setHeatmapHighlight(int side, int index) {
    HeatmapView* heat = heatmap_;
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

PaintedFigure ViewsController::shownFigure() const {
    QWidget* shown = tabs_->currentWidget();
    if (shown == lines_) return lines_->exportable();
    if (shown == neuron_) return neuron_->exportable();
    return qk_->exportable();
}

ExportDialog* ViewsController::exportShownView() {
    const PaintedFigure figure = shownFigure();
    if (!figure) {
        QMessageBox::information(heatmap_->window(), tr("There is no view to export."),
                                 tr("The %1 view shows nothing yet: run an input and show it in the Views dock.")
                                         .arg(tabs_->tabText(tabs_->currentIndex()).toLower()));
        return nullptr;
    }
    static const char* names[] = {"lines", "neuron", "qk"};
    const Selection s = current();
    QString name = QFileInfo(session_->modelSpec()).fileName() +
                   QStringLiteral("_%1_L%2")
                           .arg(QLatin1String(names[std::clamp(tabs_->currentIndex(), 0, 2)]))
                           .arg(s.key.layer);
    if (tabs_->currentWidget() != lines_) name += QStringLiteral("_H%1").arg(s.key.head);
    name.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9._-]+")), QStringLiteral("_"));
    const QString folder = recent::exportFolder();
    auto* dialog = new ExportDialog(Figure{}, QDir(folder).filePath(name + QStringLiteral(".pdf")), heatmap_->window());
    dialog->setObjectName(QStringLiteral("exportViewDialog"));
    dialog->setWindowTitle(tr("Export View"));
    dialog->setPainted(figure);
    // The neuron view's (key × dimension) maps need the width of two columns.
    if (tabs_->currentWidget() == neuron_) dialog->setWidthInches(ExportDialog::kTwoColumnIn);
    connect(dialog, &ExportDialog::exported, this,
            [this](const QString& path) { emit status(tr("Wrote %1").arg(QDir::toNativeSeparators(path)), 8000); });
    dialog->open();
    return dialog;
}
