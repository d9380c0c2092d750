// ViewsController: the line view, the neuron view and the query–key space (a "Views" dock),
// kept on the ViewState's selection (block, layer, head, temperature, raw labels, the token
// selection) and the lab's shown trace, and linked to each other and to the heat map. A model
// change clears the three views.
//
// Every number comes from core through ViewsService (services/viewsservice.h: the shared map
// pool, stale results dropped): the layer's maps, the neuron row and the projection. Only the visible view is
// recomputed; the others when they are shown.
//
// Linking: one token selection (query row or key column) is shared. A click on a token in the
// line view, on a point in the query–key space or a query in the neuron view selects it in the
// others and frames its row or column in the heat map; hovering frames it only while hovered.
#pragma once

#include "figure/workspace.h"
#include "services/labservice.h"
#include "services/viewsservice.h"
#include "views/lineview.h"
#include "views/neuronview.h"
#include "views/qkspaceview.h"
#include "services/mapservice.h"

#include <QObject>
#include <QString>

#include <optional>

#include <vector>

class ExportDialog;
class HeatmapView;
class LabController;
class Session;
class ViewState;
class QCPItemRect;
class QTabWidget;

class ViewsController : public QObject {
    Q_OBJECT
public:
    // Every argument outlives the controller; the heat map gets the token's frame and parents dialogs.
    ViewsController(ViewState* state, Session* session, LabController* lab, HeatmapView* heatmap, QObject* parent);
    ~ViewsController() override;

    QTabWidget* tabs() const { return tabs_; }
    LineView* lines() const { return lines_; }
    NeuronView* neuron() const { return neuron_; }
    QkSpaceView* qkSpace() const { return qk_; }

    // The dock's state as plain values (workspace files save and restore it): the current tab
    // (0 lines, 1 neuron, 2 query-key space), the shared token selection and each view's settings.
    struct State {
        int tab = 0;
        int selectedSide = -1, selectedIndex = -1;  // as select()
        LineView::State lines;
        NeuronView::State neuron;
        QkSpaceView::State qk;
    };
    State state() const;
    // Applies the settings and the selection to the shown trace, then asks core again.
    void setState(const State& state);
    // The same as the workspace file's "views" section (the state's tabSettings().views).
    Workspace::Views settings() const;
    void setSettings(const Workspace::Views& views);

    // The selection or the trace changed: the visible view asks core again.
    void refresh();
    // What the maps show (the Show selector): the line view draws that source's maps; then refresh().
    void setSource(const ShownSource& source);
    // The shared token selection: side 0 = query row, 1 = key column, -1 none.
    int selectedSide() const { return side_; }
    int selectedIndex() const { return index_; }
    void select(int side, int index);
    // The heat map's frame: {side, index} or {-1, -1}.
    std::pair<int, int> heatmapHighlight() const { return highlight_; }
    // File > Export View…: the export dialog (its file, format, width and dpi) for the view shown
    // in the dock ("exportViewDialog", opened non-modally); null with a message when it shows
    // nothing.
    ExportDialog* exportShownView();
    PaintedFigure shownFigure() const;
    // Blocks until every worker has returned (tests, shutdown).
    void waitForWorkers();
    // The longest inputs the line view draws whole (queries or keys); longer inputs show a window
    // of kLineWindow tokens that its scroll bar moves.
    static constexpr int kMaxLineTokens = 512;
    static constexpr int kLineWindow = 128;

signals:
    // A view received new values from core (for tests: which one).
    void linesShown();
    void neuronShown();
    void qkShown();
    void status(const QString& message, int timeoutMs);  // a file written

private:
    using Selection = ViewSelection;
    Selection current() const;
    void requestLines();
    void requestNeuron();
    void requestQk();
    void setHeatmapHighlight(int side, int index);
    void hover(int side, int index);
    void updateQkRow();
    QStringList labels(const Selection& s, bool queries) const;
    QString title(const Selection& s, bool withHead) const;

    ViewState* state_;
    Session* session_;
    LabController* lab_;
    HeatmapView* heatmap_;
    QTabWidget* tabs_ = nullptr;
    LineView* lines_ = nullptr;
    NeuronView* neuron_ = nullptr;
    QkSpaceView* qk_ = nullptr;
    QCPItemRect* frame_ = nullptr;  // on the heat map's plot, owned by it
    std::pair<int, int> highlight_{-1, -1};
    ShownSource source_;
    int side_ = -1, index_ = -1;
    // The layer's maps the query-key view sizes keys by (one per head in scope; may be empty).
    std::vector<attnscope::HeadMap> qkMaps_;
    std::vector<int> qkMapHeads_;
    ViewsService* service_ = nullptr;  // owns the jobs (a child)
};
