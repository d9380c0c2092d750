// The Causal tab's two kinds of figure view (figure/causalfigure.h), each a FigureCanvas that
// paints exactly what it exports, with an Export… button and a message in place of the figure
// when there is none (a refusal's one-line reason, "run first"):
//   - LensView: the logit-lens grid; hovering a cell shows its top tokens with probabilities;
//   - SignedMapView: a signed layer × column map (DLA per head, patching scores); hovering a cell
//     frames it and shows its value, clicking it emits cellClicked(row, column).
#pragma once

#include "figure/causalfigure.h"
#include "figure/paintedfigure.h"

#include <QWidget>

class FigureCanvas;
class QLabel;

class LensView : public QWidget {
    Q_OBJECT
public:
    LensView(const QString& name, QWidget* parent = nullptr);  // name: object names' prefix

    void setFigure(const LensFigure& figure);
    void clear(const QString& message);
    bool hasFigure() const { return has_; }
    const LensFigure& figure() const { return figure_; }
    QString message() const;
    FigureCanvas* canvas() const { return canvas_; }
    QPointF cellCenter(int row, int col) const;  // canvas pixels (tests)
    // The hover text of a cell: its top tokens, one "text  p" line each.
    QString cellTip(int row, int col) const;
    PaintedFigure exportable() const;  // paper font, no hover; empty when there is no figure

signals:
    void exportRequested();

private:
    FigureCanvas* canvas_ = nullptr;
    QLabel* message_ = nullptr;
    LensFigure figure_;
    bool has_ = false;
};

class SignedMapView : public QWidget {
    Q_OBJECT
public:
    SignedMapView(const QString& name, QWidget* parent = nullptr);

    void setFigure(const SignedMapFigure& figure);
    void clear(const QString& message);
    bool hasFigure() const { return has_; }
    const SignedMapFigure& figure() const { return figure_; }
    QString message() const;
    FigureCanvas* canvas() const { return canvas_; }
    QPointF cellCenter(int row, int col) const;
    PaintedFigure exportable() const;

signals:
    void cellClicked(int row, int col);
    void exportRequested();

private:
    FigureCanvas* canvas_ = nullptr;
    QLabel* message_ = nullptr;
    SignedMapFigure figure_;
    bool has_ = false;
};
