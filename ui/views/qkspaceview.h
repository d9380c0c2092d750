// QkSpaceView: AttentionViz's query–key space of the shown head, or of every head of its layer
// (scope combo), as core projects it (analysis/qk_space.h: joint PCA, keys translated to the
// queries' centre). Queries are filled circles, keys hollow squares, coloured by position, kind
// or head (colour combo). Hovering shows the token under the mouse; a click selects a point
// (pointSelected), and a selected query sizes the keys by its attention at the slider's
// temperature (the row the window gives with setSelectedRow). Draws figure/qkfigure.h.
#pragma once

#include "figure/paintedfigure.h"
#include "figure/qkfigure.h"

#include <QWidget>

class FigureCanvas;
class QComboBox;
class QLabel;

class QkSpaceView : public QWidget {
    Q_OBJECT
public:
    explicit QkSpaceView(QWidget* parent = nullptr);

    // The view's settings as plain values (workspace files save and restore them).
    struct State {
        bool allHeads = false;  // every head of the layer, not only the shown one
        QkColoring coloring = QkColoring::Position;
    };
    State state() const;
    void setState(const State& state);  // emits scopeChanged when the scope changes

    bool allHeads() const;  // the scope combo: every head of the layer
    QComboBox* scopeCombo() const { return scope_; }
    QComboBox* coloringCombo() const { return coloring_; }

    void setSpace(const attnscope::QkSpace& space, const QStringList& queryLabels, const QStringList& keyLabels,
                  const QString& title);
    // Core's token kinds of the query rows and key columns (TokenKind colouring).
    void setTokenKinds(std::vector<attnscope::TokenKind> queries, std::vector<attnscope::TokenKind> keys);
    void clear(const QString& message);
    QString message() const;
    const QkFigure& figure() const { return figure_; }
    bool hasSpace() const { return has_; }

    // Selects the point of (key?, position) in `head` (-1: the first point of that token); -1 clears.
    void selectToken(bool key, int position, int head = -1);
    void setHovered(int point);
    int selected() const { return figure_.selected; }
    void setSelectedRow(const std::vector<float>& row);
    QString hoverText() const;
    FigureCanvas* canvas() const { return canvas_; }
    QPointF pointCenter(int point) const;  // canvas pixels, for tests
    // The index of (key?, position, head) among the points, or -1.
    int pointOf(bool key, int position, int head) const;

    // The figure as exported (paper font, no hover); empty when the view shows nothing.
    PaintedFigure exportable() const;
    void exportFigure(const QString& path, double widthIn = 3.25) const;

signals:
    void scopeChanged();
    void pointHovered(int point);   // -1 when none
    void pointSelected(int point);  // -1 when cleared
    void exportRequested();

private:
    FigureCanvas* canvas_ = nullptr;
    QComboBox* scope_ = nullptr;
    QComboBox* coloring_ = nullptr;
    QLabel* hover_ = nullptr;
    QLabel* message_ = nullptr;
    QkFigure figure_;
    bool has_ = false;
};
