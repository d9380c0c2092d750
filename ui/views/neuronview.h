// NeuronView: BertViz's neuron view for every family. For the shown head and a chosen query
// token: q, each key vector k_j and q⊙k_j as (key × dimension) heat maps, the scaled sum and the
// logit per key, and the softmax weight (figure/neuronfigure.h). The numbers are core's
// (analysis/neuron.h, given by the window's ViewsController); the view only draws them.
// Hovering a key row highlights it (keyHovered); the query combo picks the query.
#pragma once

#include "figure/neuronfigure.h"
#include "figure/paintedfigure.h"

#include <QWidget>

class FigureCanvas;
class QComboBox;
class QLabel;

class NeuronView : public QWidget {
    Q_OBJECT
public:
    explicit NeuronView(QWidget* parent = nullptr);

    // The view's settings as plain values (workspace files save and restore them).
    struct State {
        int query = -1;  // the query token; -1 = the default (the last one)
    };
    State state() const;
    // A query the combo does not offer yet is chosen when setQueries brings it.
    void setState(const State& state);

    // The query tokens the combo offers (keeps the chosen index when it still exists).
    void setQueries(const QStringList& labels);
    int query() const;
    void setQuery(int query);  // emits queryChosen when it changes
    QComboBox* queryCombo() const { return queryCombo_; }

    void setRow(const attnscope::NeuronRow& row, const QString& queryLabel, const QStringList& keyLabels,
                const QString& title);
    void clear(const QString& message);
    QString message() const;
    const NeuronFigure& figure() const { return figure_; }
    bool hasRow() const { return hasRow_; }
    void setFocusKey(int key);
    FigureCanvas* canvas() const { return canvas_; }
    QPointF keyRowCenter(int key) const;  // canvas pixels, for tests

    // The figure as exported (paper font, no hover); empty when the view shows nothing.
    PaintedFigure exportable() const;
    void exportFigure(const QString& path, double widthIn = 6.75) const;

signals:
    void queryChosen(int query);
    void keyHovered(int key);  // -1 when the mouse leaves the rows
    void exportRequested();

private:
    FigureCanvas* canvas_ = nullptr;
    QComboBox* queryCombo_ = nullptr;
    QLabel* message_ = nullptr;
    NeuronFigure figure_;
    bool hasRow_ = false;
    int pendingQuery_ = -1;
};
