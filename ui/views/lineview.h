// LineView: BertViz's head view. Query tokens on the left, key tokens on the right, a line per
// query–key pair with opacity = weight, one colour per head; the heads of the shown layer are
// all drawn by default and each can be switched off with its coloured button. Hovering a token
// shows only its lines; a click locks that (click it again, or elsewhere, to unlock). Lines
// below the threshold are hidden. Cross blocks name their columns target and source.
//
// The view draws the maps it is given (core's Trace::map, through the window's ViewsController)
// and never computes attention. What it draws is figure/linefigure.h, which export() writes.
#pragma once

#include "figure/linefigure.h"

#include <QWidget>

#include <vector>

class FigureCanvas;
class QDoubleSpinBox;
class QHBoxLayout;
class QLabel;
class QToolButton;

class LineView : public QWidget {
    Q_OBJECT
public:
    explicit LineView(QWidget* parent = nullptr);

    // Every head's map of the layer (maps[h], [queries, keys]); heads keep their on/off choice
    // while their count stays the same.
    void setMaps(const std::vector<attnscope::HeadMap>& maps, const QStringList& queryLabels, const QStringList& keyLabels,
                 const QString& title, bool cross);
    void clear(const QString& message);

    // Which heads are drawn.
    void setHeadShown(int head, bool shown);
    std::vector<int> shownHeads() const;
    QToolButton* headButton(int head) const;
    QDoubleSpinBox* thresholdSpin() const { return threshold_; }

    // Focus (what a hover or a click selects): side 0 = query, 1 = key; -1 clears.
    void setTokenFocus(int side, int index, bool lock);
    int focusQuery() const { return figure_.focusQuery; }
    int focusKey() const { return figure_.focusKey; }
    bool locked() const { return figure_.locked; }

    // The figure as drawn now, and where a token sits on screen (canvas pixels), for tests.
    LineFigure figure() const { return figure_; }
    FigureCanvas* canvas() const { return canvas_; }
    QPointF tokenCenter(int side, int index) const;
    QString message() const;

    // Writes the figure (.pdf/.svg/.png) 3.25 in wide; throws attnscope::Error.
    void exportFigure(const QString& path, double widthIn = 3.25) const;

signals:
    // A token was hovered (lock = false) or clicked (lock = true); side -1 when cleared.
    void tokenFocused(int side, int index, bool lock);
    void exportRequested();

private:
    void rebuildHeadButtons(int heads);
    void updateFigure();
    void onMoved(const QPointF& p);
    void onClicked(const QPointF& p);

    FigureCanvas* canvas_ = nullptr;
    QLabel* message_ = nullptr;
    QHBoxLayout* headRow_ = nullptr;
    std::vector<QToolButton*> headButtons_;
    QDoubleSpinBox* threshold_ = nullptr;
    std::vector<attnscope::HeadMap> maps_;
    LineFigure figure_;
};
