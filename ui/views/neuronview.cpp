#include "views/neuronview.h"

#include "figure/paintedfigure.h"
#include "views/figurecanvas.h"
#include "views/flowlayout.h"

#include "attnscope/runtime/error.h"

#include <QComboBox>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QSignalBlocker>
#include <QVBoxLayout>

NeuronView::NeuronView(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    auto* bar = new FlowLayout(nullptr, 4);  // wraps at the Views dock's width (no side scroll bar)
    queryCombo_ = new QComboBox;
    queryCombo_->setObjectName(QStringLiteral("neuronQuery"));
    queryCombo_->setMinimumContentsLength(8);
    queryCombo_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    queryCombo_->setToolTip(tr("The query token whose row of attention is shown, dimension by dimension"));
    bar->addWidget(labelledBox(tr("Query"), queryCombo_));
    QPushButton* exportButton = addExportButton(bar, QStringLiteral("neuronExport"));
    layout->addLayout(bar);
    canvas_ = new FigureCanvas;
    canvas_->setObjectName(QStringLiteral("neuronCanvas"));
    canvas_->setMinimumWidth(kViewCanvasMinWidth);
    layout->addWidget(canvas_, 1);
    message_ = addViewMessage(layout);

    canvas_->paint = [this](QPainter& p, const QRectF& area) {
        if (hasRow_) paintNeuronFigure(p, figure_, area);
    };
    canvas_->moved = [this](const QPointF& point) {
        if (!hasRow_) return;
        const int key = neuronLayout(canvas_, figure_, canvas_->area()).keyAt(point, figure_.row.keys);
        if (key == figure_.focusKey) return;
        setFocusKey(key);
        emit keyHovered(key);
    };
    canvas_->left = [this] {
        if (figure_.focusKey < 0) return;
        setFocusKey(-1);
        emit keyHovered(-1);
    };
    connect(queryCombo_, &QComboBox::currentIndexChanged, this, [this](int i) {
        if (i >= 0) emit queryChosen(i);
    });
    connect(exportButton, &QPushButton::clicked, this, &NeuronView::exportRequested);
}

void NeuronView::setQueries(const QStringList& labels) {
    QStringList items;
    for (int i = 0; i < labels.size(); ++i) items << QStringLiteral("%1: %2").arg(i).arg(labels[i]);
    QStringList now;
    for (int i = 0; i < queryCombo_->count(); ++i) now << queryCombo_->itemText(i);
    if (now == items) return;
    const int keep = queryCombo_->currentIndex();
    const QSignalBlocker block(queryCombo_);
    queryCombo_->clear();
    queryCombo_->addItems(items);
    // A new input starts on the last query (a language model's next-token row).
    int pick = keep >= 0 && keep < items.size() && now.size() == items.size() ? keep : int(items.size()) - 1;
    if (pendingQuery_ >= 0 && pendingQuery_ < items.size()) pick = pendingQuery_, pendingQuery_ = -1;
    queryCombo_->setCurrentIndex(pick);
}

// The last query is the default, saved as -1 so that it stays the last one on another input.
NeuronView::State NeuronView::state() const {
    if (pendingQuery_ >= 0) return {pendingQuery_};
    const int q = query();
    return {q == queryCombo_->count() - 1 ? -1 : q};
}

void NeuronView::setState(const State& st) {
    pendingQuery_ = -1;
    if (st.query >= 0 && st.query < queryCombo_->count())
        setQuery(st.query);
    else
        pendingQuery_ = st.query;
}

int NeuronView::query() const { return queryCombo_->currentIndex(); }

void NeuronView::setQuery(int query) {
    if (query >= 0 && query < queryCombo_->count()) queryCombo_->setCurrentIndex(query);
}

void NeuronView::setRow(const attnscope::NeuronRow& row, const QString& queryLabel, const QStringList& keyLabels,
                        const QString& title) {
    const int focus = figure_.focusKey < row.keys ? figure_.focusKey : -1;
    figure_ = NeuronFigure{row, queryLabel, keyLabels, title, focus, 10};
    hasRow_ = true;
    message_->hide();
    canvas_->update();
}

void NeuronView::clear(const QString& message) {
    hasRow_ = false;
    message_->setText(message);
    message_->show();
    canvas_->update();
}

QString NeuronView::message() const { return message_->isVisible() ? message_->text() : QString(); }

void NeuronView::setFocusKey(int key) {
    figure_.focusKey = key;
    canvas_->update();
}

QPointF NeuronView::keyRowCenter(int key) const {
    const NeuronLayout L = neuronLayout(canvas_, figure_, canvas_->area());
    return {L.products.center().x(), L.top + (key + 0.5) * L.rowHeight};
}

PaintedFigure NeuronView::exportable() const {
    if (!hasRow_) return {};
    NeuronFigure f = figure_;
    f.fontSize = 7;
    f.focusKey = -1;
    return {[f](double widthPt) { return neuronFigureSize(f, widthPt); },
            [f](QPainter& p, const QSizeF& s) { paintNeuronFigure(p, f, QRectF(QPointF(0, 0), s)); },
            f.title.isEmpty() ? QStringLiteral("Neuron view") : f.title};
}

void NeuronView::exportFigure(const QString& path, double widthIn) const {
    if (!hasRow_) throw attnscope::Error(path.toStdString() + ": the neuron view shows nothing to export");
    writePainted(path, exportable(), widthIn);
}
