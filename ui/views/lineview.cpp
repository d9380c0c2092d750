#include "views/lineview.h"

#include "figure/paintedfigure.h"
#include "views/figurecanvas.h"
#include "views/flowlayout.h"

#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QScrollBar>
#include <QSignalBlocker>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

LineView::LineView(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    headRow_ = new FlowLayout(nullptr, 2);
    layout->addLayout(headRow_);
    auto* bar = new FlowLayout(nullptr, 4);  // wraps at the Views dock's width (no side scroll bar)
    threshold_ = new QDoubleSpinBox;
    threshold_->setObjectName(QStringLiteral("lineThreshold"));
    threshold_->setRange(0.0, 1.0);
    threshold_->setSingleStep(0.01);
    threshold_->setDecimals(2);
    threshold_->setToolTip(tr("Lines whose attention weight is below this are not drawn."));
    bar->addWidget(labelledBox(tr("Hide below"), threshold_));
    QPushButton* exportButton = addExportButton(bar, QStringLiteral("lineExport"));
    layout->addLayout(bar);
    canvas_ = new FigureCanvas;
    canvas_->setObjectName(QStringLiteral("lineCanvas"));
    canvas_->setMinimumWidth(kViewCanvasMinWidth);
    layout->addWidget(canvas_, 1);
    auto* windowRow = new QHBoxLayout;
    windowLabel_ = new QLabel;
    windowLabel_->setObjectName(QStringLiteral("lineWindowLabel"));
    windowBar_ = new QScrollBar(Qt::Horizontal);
    windowBar_->setObjectName(QStringLiteral("lineWindowBar"));
    windowBar_->setToolTip(tr("Long inputs show a window of their tokens; scroll to move it."));
    windowRow->addWidget(windowLabel_);
    windowRow->addWidget(windowBar_, 1);
    layout->addLayout(windowRow);
    windowLabel_->hide();
    windowBar_->hide();
    message_ = addViewMessage(layout);

    canvas_->paint = [this](QPainter& p, const QRectF& area) {
        if (!maps_.empty()) paintLineFigure(p, figure_, area);
    };
    canvas_->moved = [this](const QPointF& p) { onMoved(p); };
    canvas_->clicked = [this](const QPointF& p) { onClicked(p); };
    canvas_->left = [this] {
        if (!figure_.locked && (figure_.focusQuery >= 0 || figure_.focusKey >= 0)) {
            setTokenFocus(-1, -1, false);
            emit tokenFocused(-1, -1, false);
        }
    };
    connect(windowBar_, &QScrollBar::valueChanged, this, [this](int start) {
        if (start == windowStart_) return;
        windowStart_ = start;
        emit windowMoved(start);
    });
    connect(threshold_, &QDoubleSpinBox::valueChanged, this, [this] { updateFigure(); });
    connect(exportButton, &QPushButton::clicked, this, &LineView::exportRequested);
}

LineView::State LineView::state() const {
    State st;
    for (int h = 0; h < int(headButtons_.size()); ++h)
        if (!headButtons_[h]->isChecked()) st.hiddenHeads.push_back(h);
    if (pending_ && headButtons_.empty()) st.hiddenHeads = pendingHidden_;
    st.threshold = threshold_->value();
    st.windowStart = windowStart_;
    return st;
}

void LineView::setState(const State& st) {
    // Kept until the next maps arrive: they may have another number of heads (buttons rebuilt).
    pendingHidden_ = st.hiddenHeads;
    pending_ = true;
    for (int h = 0; h < int(headButtons_.size()); ++h)
        headButtons_[h]->setChecked(std::find(st.hiddenHeads.begin(), st.hiddenHeads.end(), h) == st.hiddenHeads.end());
    windowStart_ = std::max(0, st.windowStart);
    threshold_->setValue(st.threshold);
    updateFigure();
}

void LineView::rebuildHeadButtons(int heads) {
    if (int(headButtons_.size()) == heads) return;
    for (QToolButton* b : headButtons_) delete b;
    headButtons_.clear();
    for (int h = 0; h < heads; ++h) {
        auto* b = new QToolButton;
        b->setObjectName(QStringLiteral("lineHead%1").arg(h));
        b->setText(QString::number(h));
        b->setCheckable(true);
        b->setChecked(!pending_ || std::find(pendingHidden_.begin(), pendingHidden_.end(), h) == pendingHidden_.end());
        b->setToolTip(tr("Show head %1's lines").arg(h));
        const QColor c = headColor(h);
        b->setStyleSheet(QStringLiteral("QToolButton { border: 2px solid %1; border-radius: 3px; padding: 1px 4px; }"
                                        "QToolButton:checked { background: %1; color: white; }")
                                 .arg(c.name()));
        connect(b, &QToolButton::toggled, this, [this] { updateFigure(); });
        headRow_->addWidget(b);
        headButtons_.push_back(b);
    }
}

void LineView::setWindow(int total, int start, int size) {
    const bool on = total > size && size > 0;
    windowTotal_ = on ? total : 0;
    windowSize_ = on ? size : 0;
    windowStart_ = on ? std::clamp(start, 0, total - size) : 0;
    offset_ = windowStart_;
    {
        const QSignalBlocker block(windowBar_);
        windowBar_->setRange(0, on ? total - size : 0);
        windowBar_->setPageStep(std::max(1, size));
        windowBar_->setSingleStep(std::max(1, size / 8));
        windowBar_->setValue(windowStart_);
    }
    windowBar_->setVisible(on);
    windowLabel_->setVisible(on);
    if (on)
        windowLabel_->setText(tr("tokens %1\u2013%2 of %3").arg(windowStart_).arg(windowStart_ + size - 1).arg(total));
}

void LineView::setMaps(const std::vector<attnscope::HeadMap>& maps, const QStringList& queryLabels,
                       const QStringList& keyLabels, const QString& title, bool cross) {
    const auto shape = [](const std::vector<attnscope::HeadMap>& m) {
        for (const auto& h : m)
            if (h.rows > 0) return std::make_pair(h.rows, h.cols);
        return std::make_pair(0, 0);
    };
    const bool sameShape = shape(maps_) == shape(maps) && shape(maps).first > 0;
    maps_ = maps;
    rebuildHeadButtons(int(maps.size()));
    pending_ = false;
    figure_.queryLabels = queryLabels;
    figure_.keyLabels = keyLabels;
    figure_.title = title;
    figure_.leftTitle = cross ? tr("target (queries)") : tr("queries");
    figure_.rightTitle = cross ? tr("source (keys)") : tr("keys");
    if (!sameShape) figure_.focusQuery = figure_.focusKey = -1, figure_.locked = false;
    message_->hide();
    canvas_->show();
    updateFigure();
}

void LineView::clear(const QString& message) {
    maps_.clear();
    figure_.heads.clear();
    message_->setText(message);
    message_->show();
    canvas_->update();
}

QString LineView::message() const { return message_->isVisible() ? message_->text() : QString(); }

void LineView::setHeadShown(int head, bool shown) {
    if (head >= 0 && head < int(headButtons_.size())) headButtons_[head]->setChecked(shown);
}

QToolButton* LineView::headButton(int head) const {
    return head >= 0 && head < int(headButtons_.size()) ? headButtons_[head] : nullptr;
}

std::vector<int> LineView::shownHeads() const {
    std::vector<int> out;
    for (int h = 0; h < int(headButtons_.size()); ++h)
        if (headButtons_[h]->isChecked()) out.push_back(h);
    return out;
}

void LineView::updateFigure() {
    figure_.threshold = threshold_->value();
    figure_.heads.clear();
    for (int h : shownHeads())
        if (h < int(maps_.size()) && maps_[h].rows > 0)
            figure_.heads.push_back({h, headColor(h), maps_[h]});  // empty: not computed
    canvas_->update();
}

void LineView::setTokenFocus(int side, int index, bool lock) {
    if (side >= 0 && windowTotal_ > 0 && (index < windowStart_ || index >= windowStart_ + windowSize_) && lock) {
        // Bring the token into view: the maps of the new window follow (windowMoved).
        windowBar_->setValue(std::clamp(index - windowSize_ / 2, 0, windowTotal_ - windowSize_));
    }
    const int local = index - offset_;
    const int count = side == 0 ? int(figure_.queryLabels.size()) : int(figure_.keyLabels.size());
    if (local < 0 || local >= count) side = -1;
    figure_.focusQuery = side == 0 ? local : -1;
    figure_.focusKey = side == 1 ? local : -1;
    figure_.locked = lock && side >= 0;
    canvas_->update();
}

QPointF LineView::tokenCenter(int side, int index) const {
    index -= offset_;
    const LineLayout L = lineLayout(canvas_, figure_, canvas_->area());
    return side == 0 ? QPointF((L.area.left() + L.leftLabelRight) / 2, L.queryY(index))
                     : QPointF((L.rightLabelLeft + L.area.right()) / 2, L.keyY(index));
}

void LineView::onMoved(const QPointF& point) {
    if (figure_.locked || maps_.empty()) return;
    const LineLayout L = lineLayout(canvas_, figure_, canvas_->area());
    const auto [side, index] = L.tokenAt(point, figure_.queryLabels.size(), figure_.keyLabels.size());
    if ((side == 0 && index == figure_.focusQuery) || (side == 1 && index == figure_.focusKey) ||
        (side < 0 && figure_.focusQuery < 0 && figure_.focusKey < 0))
        return;
    setTokenFocus(side, index + offset_, false);
    emit tokenFocused(side, side < 0 ? -1 : index + offset_, false);
}

void LineView::onClicked(const QPointF& point) {
    if (maps_.empty()) return;
    const LineLayout L = lineLayout(canvas_, figure_, canvas_->area());
    const auto [side, index] = L.tokenAt(point, figure_.queryLabels.size(), figure_.keyLabels.size());
    const bool same =
            figure_.locked && ((side == 0 && index == figure_.focusQuery) || (side == 1 && index == figure_.focusKey));
    if (side < 0 || same) {
        setTokenFocus(-1, -1, false);
        emit tokenFocused(-1, -1, true);
        return;
    }
    setTokenFocus(side, index + offset_, true);
    emit tokenFocused(side, index + offset_, true);
}

PaintedFigure LineView::exportable() const {
    if (maps_.empty()) return {};
    LineFigure f = figure_;
    f.fontSize = 7;
    f.focusQuery = f.focusKey = -1;  // a figure shows every line; the focus is for exploring
    f.locked = false;
    if (figure_.locked) f.focusQuery = figure_.focusQuery, f.focusKey = figure_.focusKey;  // unless locked on purpose
    return {[f](double widthPt) { return lineFigureSize(f, widthPt); },
            [f](QPainter& p, const QSizeF& s) { paintLineFigure(p, f, QRectF(QPointF(0, 0), s)); },
            f.title.isEmpty() ? QStringLiteral("Line view") : f.title};
}

void LineView::exportFigure(const QString& path, double widthIn) const { writePainted(path, exportable(), widthIn); }
