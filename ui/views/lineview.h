// LineView: BertViz's head view. Query tokens on the left, key tokens on the right, a line per
// query–key pair with opacity = weight, one colour per head; the heads of the shown layer are
// all drawn by default and each can be switched off with its coloured button (the buttons wrap
// onto more lines in a narrow view, so many heads never widen it). Hovering a token
// shows only its lines; a click locks that (click it again, or elsewhere, to unlock). Lines
// below the threshold are hidden. Cross blocks name their columns target and source.
//
// The view draws the maps it is given (core's Trace::map, through the window's ViewsController)
// and never computes attention. What it draws is figure/linefigure.h, which export() writes.
#pragma once

#include "figure/linefigure.h"
#include "figure/paintedfigure.h"

#include <QWidget>

#include <vector>

class FigureCanvas;
class FlowLayout;
class QDoubleSpinBox;
class QLabel;
class QScrollBar;
class QToolButton;

class LineView : public QWidget {
    Q_OBJECT
public:
    explicit LineView(QWidget* parent = nullptr);

    // The view's settings as plain values (workspace files save and restore them).
    struct State {
        std::vector<int> hiddenHeads;  // heads switched off; empty = every head drawn
        double threshold = 0.0;        // lines below this weight are hidden
        int windowStart = 0;           // first query row of the token window (long inputs)
    };
    State state() const;
    // Applies at once; head choices wait for the maps when the view has none of that many heads.
    void setState(const State& state);

    // Every head's map of the layer (maps[h], [queries, keys]; an empty map: that head is not
    // drawn); heads keep their on/off choice while their count stays the same.
    void setMaps(const std::vector<attnscope::HeadMap>& maps, const QStringList& queryLabels,
                 const QStringList& keyLabels, const QString& title, bool cross);
    void clear(const QString& message);
    // The value drawn opaque (LineFigure::valueScale): 1 for weights, the layer's largest |value|
    // for raw or signed map sources; takes effect with the next setMaps.
    void setValueScale(double scale) { figure_.valueScale = scale > 0 ? scale : 1.0; }

    // Long inputs: the maps given are those of tokens [start, start + size) on both sides, of
    // `total`; the scroll bar under the figure moves the window (windowMoved). Token indices in
    // this class's interface stay the input's positions. total <= size: no window.
    void setWindow(int total, int start, int size);
    int windowStart() const { return windowStart_; }
    int windowTotal() const { return windowTotal_; }
    QScrollBar* windowBar() const { return windowBar_; }

    // Which heads are drawn.
    void setHeadShown(int head, bool shown);
    std::vector<int> shownHeads() const;
    QToolButton* headButton(int head) const;
    QDoubleSpinBox* thresholdSpin() const { return threshold_; }

    // Focus (what a hover or a click selects): side 0 = query, 1 = key; -1 clears. A token
    // outside the window moves the window to it.
    void setTokenFocus(int side, int index, bool lock);
    int focusQuery() const { return figure_.focusQuery < 0 ? -1 : figure_.focusQuery + offset_; }
    int focusKey() const { return figure_.focusKey < 0 ? -1 : figure_.focusKey + offset_; }
    bool locked() const { return figure_.locked; }

    // The figure as drawn now, and where a token sits on screen (canvas pixels), for tests.
    LineFigure figure() const { return figure_; }
    FigureCanvas* canvas() const { return canvas_; }
    QPointF tokenCenter(int side, int index) const;
    QString message() const;

    // The figure as exported (paper font, every line unless a token is locked); empty when the
    // view shows nothing.
    PaintedFigure exportable() const;
    // Writes it (.pdf/.svg/.png) 3.25 in wide; throws attnscope::Error.
    void exportFigure(const QString& path, double widthIn = 3.25) const;

signals:
    // A token was hovered (lock = false) or clicked (lock = true); side -1 when cleared.
    void tokenFocused(int side, int index, bool lock);
    void exportRequested();
    // The token window was scrolled to start at `start` (the maps of the new window are wanted).
    void windowMoved(int start);

private:
    void rebuildHeadButtons(int heads);
    void updateFigure();
    void onMoved(const QPointF& p);
    void onClicked(const QPointF& p);

    FigureCanvas* canvas_ = nullptr;
    QLabel* message_ = nullptr;
    FlowLayout* headRow_ = nullptr;
    std::vector<QToolButton*> headButtons_;
    QDoubleSpinBox* threshold_ = nullptr;
    std::vector<attnscope::HeadMap> maps_;
    LineFigure figure_;
    std::vector<int> pendingHidden_;  // from setState, for the next head buttons built
    bool pending_ = false;
    int windowStart_ = 0;  // wanted first token of the window
    int windowTotal_ = 0;  // tokens of the input when windowed, else 0
    int windowSize_ = 0;
    int offset_ = 0;  // the input position of the figure's row 0 (the maps now shown)
    QScrollBar* windowBar_ = nullptr;
    QLabel* windowLabel_ = nullptr;
};
