#include "panels/comparepanel.h"

#include "figure/figure.h"
#include "views/heatmapview.h"
#include "figure/labels.h"
#include "figure/sourceview.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace {

// Three decimals; rounding noise around zero (KL of a map with itself) shows as 0.000, not -0.000.
QString nats(double v) {
    if (std::isnan(v)) return QStringLiteral("–");
    return QString::number(std::abs(v) < 5e-4 ? 0.0 : v, 'f', 3);
}

}  // namespace

ComparePanel::ComparePanel(MapService* maps, QWidget* parent)
    : QWidget(parent), maps_(maps), session_(new CompareSession(this)) {
    taskCombo_ = new QComboBox;
    taskCombo_->setObjectName(QStringLiteral("compareTaskCombo"));
    taskCombo_->addItems(compareTasks());
    status_ = new QLabel;
    status_->setObjectName(QStringLiteral("compareStatus"));
    status_->setWordWrap(true);
    progress_ = new QProgressBar;
    progress_->setObjectName(QStringLiteral("compareProgress"));
    progress_->setRange(0, 1000);
    progress_->setTextVisible(false);
    progress_->setMaximumWidth(160);
    progress_->hide();
    cancel_ = new QPushButton(tr("Cancel"));
    cancel_->setObjectName(QStringLiteral("compareCancelButton"));
    cancel_->setToolTip(tr("Stop loading and running the three models"));
    cancel_->hide();
    auto* top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("Task:")));
    top->addWidget(taskCombo_);
    top->addWidget(status_, 1);
    top->addWidget(progress_);
    top->addWidget(cancel_);
    selection_ = new QLabel;
    selection_->setObjectName(QStringLiteral("compareSelection"));

    // The three maps in one row, placed by layoutMaps(): equal cells need unequal columns, since
    // only the first draws the query axis and only the last the colour bar.
    mapsRow_ = new QWidget;
    mapsRow_->setObjectName(QStringLiteral("compareMaps"));
    const auto kinds = compareKinds();
    for (int i = 0; i < 3; ++i) {
        auto* v = new HeatmapView(mapsRow_);
        v->setObjectName(QStringLiteral("compareView%1").arg(i));
        v->clear(tr("%1 attention").arg(kinds[std::size_t(i)]));
        auto* e = new QLabel(mapsRow_);
        e->setObjectName(QStringLiteral("entropyLabel%1").arg(i));
        e->setAlignment(Qt::AlignCenter);
        e->setTextInteractionFlags(Qt::TextSelectableByMouse);
        e->setWordWrap(true);
        views_[std::size_t(i)] = v;
        entropy_[std::size_t(i)] = e;
    }
    mapsRow_->setMinimumSize(3 * kMinViewWidth + 2 * kMapGap,
                             views_[0]->minimumSizeHint().height() + 2 * entropy_[0]->fontMetrics().height());
    mapsRow_->installEventFilter(this);

    kl_ = new QTableWidget(3, 3);
    kl_->setObjectName(QStringLiteral("klTable"));
    QStringList rows, cols;
    for (const auto& k : kinds) {
        rows << QStringLiteral("P = %1").arg(k);
        cols << QStringLiteral("Q = %1").arg(k);
    }
    kl_->setVerticalHeaderLabels(rows);
    kl_->setHorizontalHeaderLabels(cols);
    kl_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    kl_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    kl_->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    kl_->setMaximumHeight(kl_->horizontalHeader()->sizeHint().height() * 4 + 8);
    kl_->setToolTip(tr("Mean over query rows of KL(P‖Q) in nats (core: meanRowKl)"));
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            auto* item = new QTableWidgetItem(QStringLiteral("–"));
            item->setTextAlignment(Qt::AlignCenter);
            kl_->setItem(i, j, item);
        }

    auto* column = new QVBoxLayout(this);
    column->addLayout(top);
    column->addWidget(selection_);
    column->addWidget(mapsRow_, 1);
    auto* klTitle = new QLabel(tr("Mean row KL divergence KL(P‖Q), nats:"));
    klTitle->setWordWrap(true);
    column->addWidget(klTitle);
    column->addWidget(kl_);

    connect(taskCombo_, &QComboBox::activated, this, [this] { emit taskChosen(task()); });
    connect(session_, &CompareSession::finished, this, &ComparePanel::onRunFinished);
    connect(session_, &CompareSession::busyChanged, this, [this](bool busy) {
        progress_->setVisible(busy);
        cancel_->setVisible(busy);
    });
    connect(session_, &CompareSession::progress, this, [this](int permille) {
        if (permille < 0)
            progress_->setRange(0, 0);  // busy indicator until the first report
        else {
            progress_->setRange(0, 1000);
            progress_->setValue(permille);
        }
    });
    connect(cancel_, &QPushButton::clicked, session_, &CompareSession::cancel);
    connect(session_, &CompareSession::cancelled, this, [this] {
        ranTask_.clear();  // the next setInput runs again, even on the same input
        status_->setText(tr("Cancelled."));
        for (auto* v : views_) v->clear(tr("Cancelled"));
    });
    connect(maps_, &MapService::compareReady, this, &ComparePanel::onMaps);
    colormap_ = views_[0]->colormap();
    scale_ = views_[0]->colorScale();
    // Shared axes: one query axis on the left, one colour bar on the right (the three share the
    // colours), cells of one size in all three; zooming or panning one map shows the same cells in
    // the other two.
    for (int i = 0; i < 3; ++i) {
        views_[std::size_t(i)]->setFrameShown(i == 0, i == 2);
        views_[std::size_t(i)]->plot()->parentWidget()->installEventFilter(this);  // the space it fits its cells in
    }
    for (HeatmapView* v : views_)
        connect(v, &HeatmapView::zoomChanged, this, [this, v](const MapZoom& zoom) {
            for (HeatmapView* other : views_)
                if (other != v && other->map().rows == zoom.rows && other->map().cols == zoom.cols)
                    other->setZoom(zoom);
        });
}

QString ComparePanel::task() const { return taskCombo_->currentText(); }

QString ComparePanel::statusText() const { return status_->text(); }

void ComparePanel::setInput(const QString& task, const QString& text, bool asIds, attnscope::DeviceChoice device,
                            const QString& target) {
    taskCombo_->setCurrentText(task);
    text_ = text;
    asIds_ = asIds;
    if (task == ranTask_ && text == ranText_ && target == ranTarget_ && asIds == ranIds_ && device == ranDevice_)
        return;
    ranTask_ = task;
    ranText_ = text;
    ranTarget_ = target;
    ranIds_ = asIds;
    ranDevice_ = device;
    status_->setText(tr("Running the %1 models…").arg(task));
    // The old run's maps go: nothing is shown or recomputed for it any more.
    run_ = CompareRun{};
    result_ = CompareResult{};
    for (auto* v : views_) v->clear(tr("Running…"));
    for (auto* e : entropy_) e->clear();
    session_->run(task, text, asIds, device, target);
}

void ComparePanel::setSelection(const QString& block, int layer, int head, double temperature) {
    block_ = block;
    layer_ = layer;
    head_ = head;
    temperature_ = temperature;
    requestMaps();
}

void ComparePanel::setColoring(Colormap colormap, const ColorScale& scale) {
    colormap_ = colormap;
    scale_ = scale;
    if (source_ == attnscope::MapSource::Weights)
        for (auto* v : views_) v->setColoring(colormap, scale);
    else
        requestMaps();  // the source's colours are over its maps' range
}

void ComparePanel::setSource(attnscope::MapSource source) {
    if (source == source_) return;
    source_ = source;
    requestMaps();
}

void ComparePanel::onRunFinished(const CompareRun& run) {
    run_ = run;
    QStringList problems;
    for (std::size_t i = 0; i < 3; ++i)
        if (!run.errors[i].isEmpty()) problems << run.specs[i] + QStringLiteral(": ") + run.errors[i];
    status_->setText(problems.isEmpty() ? tr("The same input through the three kinds of attention.")
                                        : problems.join(QLatin1Char('\n')));
    if (problems.size() == 3) emit failed(problems.join(QLatin1Char('\n')));
    requestMaps();
}

// The window's block when the compared models have it (else cross, else their first block).
QString ComparePanel::blockToShow() const {
    TracePtr first;
    for (const auto& t : run_.traces)
        if (t && !first) first = t;
    if (!first) return block_;
    QStringList names;
    for (const auto& b : first->blocks()) names << QString::fromStdString(b.name);
    if (names.contains(block_)) return block_;
    if (names.contains(QStringLiteral("cross"))) return QStringLiteral("cross");
    return names.value(0);
}

void ComparePanel::requestMaps() {
    if (!run_.traces[0] && !run_.traces[1] && !run_.traces[2]) return;
    shownBlock_ = blockToShow();
    maps_->requestCompare(run_.traces, shownBlock_, layer_, head_, temperature_, source_, run_.models);
}

void ComparePanel::onMaps(const CompareResult& result) {
    if (result.traces != run_.traces || result.source != source_) return;  // from an older run or source
    result_ = result;
    const bool weights = source_ == attnscope::MapSource::Weights;
    const QString label = QString::fromUtf8(attnscope::sourceLabel(source_));
    // A source's colours span the shown maps' values (signed ones centred at 0), as on Explore.
    std::vector<float> values;
    for (std::size_t i = 0; i < 3; ++i)
        if (result.errors[i].isEmpty())
            values.insert(values.end(), result.maps[i].values.begin(), result.maps[i].values.end());
    const SourceColors colors =
            weights ? SourceColors{colormap_, scale_} : sourceColors(source_, colormap_, scale_.type, values);
    int shown = 0;
    for (std::size_t i = 0; i < 3; ++i) {
        HeatmapView* v = views_[i];
        HeatmapView::AxisNames names = v->axisNames();  // the colour bar and hover name the source's values
        names.values = sourceValueName(source_);
        v->setAxisNames(names);
        v->setColoring(colors.colormap, colors.scale);
        const QString name = run_.specs[i].section(QLatin1Char(':'), 1);
        if (!result.errors[i].isEmpty()) {
            v->clear(name + QStringLiteral(": ") + (run_.errors[i].isEmpty() ? result.errors[i] : run_.errors[i]));
            entropy_[i]->setText(
                    weights || !run_.errors[i].isEmpty()
                            ? QString()
                            : tr("%1 is not shown for this kind: the reason is in the map's place").arg(label));
            continue;
        }
        ++shown;
        const auto& trace = *result.traces[i];
        const auto& info = trace.blocks()[std::size_t(trace.blockIndex(shownBlock_.toStdString()))];
        const bool linear = info.kind == attnscope::AttentionKind::Linear;
        v->setMap(result.maps[i], toQtStrings(info.queryTokens), toQtStrings(info.keyTokens),
                  name + sourceTitleSuffix(source_));
        if (!weights && !attnscope::unitRangeSource(source_))
            entropy_[i]->setText(tr("%1 · %2: not probabilities, so no entropy or KL")
                                         .arg(QString::fromLatin1(attnscope::kindName(info.kind)), label));
        else
            entropy_[i]->setText(tr("%1 · mean row entropy %2 nats%3")
                                         .arg(QString::fromLatin1(attnscope::kindName(info.kind)),
                                              nats(result.entropy[i]),
                                              linear && weights ? tr(" · no softmax: T does not apply") : QString()));
    }
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) kl_->item(i, j)->setText(nats(result.kl[std::size_t(i)][std::size_t(j)]));
    layoutMaps();  // new frames (labels, colour bar) and entropy lines
    QString selection = tr("<b>%1</b> — the same head position in each model")
                                .arg((mapTitle(QString(), shownBlock_, layer_,
                                               weights || attnscope::perHeadSource(source_) ? head_ : -1,
                                               weights ? temperature_ : 1.0) +
                                      sourceTitleSuffix(source_))
                                             .toHtmlEscaped());
    if (!weights && shown < 3)
        selection += tr(" · <i>%1 is shown for the kinds core computes it for; for the others their map's place "
                        "says why not</i>")
                             .arg(label.toHtmlEscaped());
    selection_->setText(selection);
    emit updated();
}

// The three fit their cells to their own space (without the axis or bar the others draw); all
// then take the smallest, so the maps are equal.
void ComparePanel::equalizeCells() {
    double cell = 0;
    for (HeatmapView* v : views_) {
        v->setMaxCellSize(0);
        if (v->map().rows > 0) cell = cell > 0 ? std::min(cell, v->fittingCellSize()) : v->fittingCellSize();
    }
    if (cell > 0)
        for (HeatmapView* v : views_) v->setMaxCellSize(cell);
}

// Equal maps as large as the row allows: each column is its view's frame (the query axis of the
// first, the colour bar of the last) plus an equal share of what the frames leave, the entropy
// lines below. The frames depend a little on the cell size (tick labels), so a second pass
// follows when they moved.
void ComparePanel::layoutMaps() {
    layoutPending_ = false;
    const QSize room = mapsRow_->size();
    std::array<int, 3> frame{};
    for (int pass = 0; pass < 3; ++pass) {
        std::array<int, 3> width{};
        const int share = std::max(1, (room.width() - 2 * kMapGap - frame[0] - frame[1] - frame[2]) / 3);
        int lines = 0;
        for (std::size_t i = 0; i < 3; ++i) {
            width[i] = share + frame[i];
            lines = std::max(lines, entropy_[i]->heightForWidth(width[i]));
        }
        int x = 0;
        for (std::size_t i = 0; i < 3; ++i) {
            views_[i]->setGeometry(x, 0, width[i], std::max(1, room.height() - lines));
            entropy_[i]->setGeometry(x, room.height() - lines, width[i], lines);
            x += width[i] + kMapGap;
        }
        equalizeCells();
        std::array<int, 3> now{};
        for (std::size_t i = 0; i < 3; ++i) now[i] = views_[i]->frameSize().width();
        if (now == frame) break;
        frame = now;
    }
}

bool ComparePanel::eventFilter(QObject* watched, QEvent* event) {
    if (event->type() == QEvent::Resize && watched == mapsRow_) {
        layoutMaps();
    } else if (event->type() == QEvent::Resize && !layoutPending_) {
        // A view's own space changed (its title took another line): fit the three again.
        layoutPending_ = true;
        QMetaObject::invokeMethod(this, &ComparePanel::layoutMaps, Qt::QueuedConnection);
    }
    return QWidget::eventFilter(watched, event);
}

bool ComparePanel::hasMaps() const {
    for (auto* v : views_)
        if (v->map().rows > 0) return true;
    return false;
}

Figure ComparePanel::figure() const {
    Figure f;
    for (std::size_t i = 0; i < 3; ++i) {
        const HeatmapView* v = views_[i];
        if (v->map().rows <= 0) continue;
        FigurePanel p{v->map(), v->queryLabels(), v->keyLabels(),
                      run_.specs[i].section(QLatin1Char(':'), 1) +
                              (std::isnan(result_.entropy[i]) && source_ != attnscope::MapSource::Weights
                                       ? QString()
                                       : QStringLiteral("\nH = %1 nats").arg(nats(result_.entropy[i])))};
        f.panels.push_back(std::move(p));
    }
    if (!f.panels.empty()) {
        f.colormap = views_[0]->colormap();
        f.scale = views_[0]->colorScale();
        const bool weights = source_ == attnscope::MapSource::Weights;
        f.title = mapTitle(QString(), shownBlock_, layer_, weights || attnscope::perHeadSource(source_) ? head_ : -1,
                           weights ? temperature_ : 1.0) +
                  sourceTitleSuffix(source_);
        if (!weights) f.colorbarLabel = sourceValueName(source_);
    }
    return f;
}
