// ViewsController: the line view, the neuron view and the query–key space (a "Views" dock),
// kept on the window's selection (block, layer, head, temperature, the lab's shown trace) and
// linked to each other and to the heat map.
//
// Every number comes from core on a worker (JobTracker, stale results dropped): the layer's
// maps from Trace::map, the neuron row from analysis/neuron.h, the projection from
// analysis/qk_space.h. Only the visible view is recomputed; the others when they are shown.
//
// Linking: one token selection (query row or key column) is shared. A click on a token in the
// line view, on a point in the query–key space or a query in the neuron view selects it in the
// others and frames its row or column in the heat map; hovering frames it only while hovered.
#pragma once

#include "services/jobtracker.h"
#include "services/mapservice.h"

#include "attnscope/analysis/neuron.h"
#include "attnscope/analysis/qk_space.h"

#include <QObject>
#include <QString>

#include <vector>

class LineView;
class MainWindow;
class NeuronView;
class QCPItemRect;
class QkSpaceView;
class QTabWidget;

class ViewsController : public QObject {
    Q_OBJECT
public:
    explicit ViewsController(MainWindow* window);
    ~ViewsController() override;

    QTabWidget* tabs() const { return tabs_; }
    LineView* lines() const { return lines_; }
    NeuronView* neuron() const { return neuron_; }
    QkSpaceView* qkSpace() const { return qk_; }

    // The selection or the trace changed: the visible view asks core again.
    void refresh();
    // The shared token selection: side 0 = query row, 1 = key column, -1 none.
    int selectedSide() const { return side_; }
    int selectedIndex() const { return index_; }
    void select(int side, int index);
    // The heat map's frame: {side, index} or {-1, -1}.
    std::pair<int, int> heatmapHighlight() const { return highlight_; }
    // Blocks until every worker has returned (tests, shutdown).
    void waitForWorkers();
    // The inputs longest the line view draws (queries or keys); longer inputs show a message.
    static constexpr int kMaxLineTokens = 512;

signals:
    // A view received new values from core (for tests: which one).
    void linesShown();
    void neuronShown();
    void qkShown();

private:
    struct Selection {
        TracePtr trace;
        MapKey key;
        double temperature = 1.0;
        bool valid() const { return trace && key.block >= 0; }
    };
    Selection current() const;
    void requestLines();
    void requestNeuron();
    void requestQk();
    void setHeatmapHighlight(int side, int index);
    void hover(int side, int index);
    void updateQkRow();
    void exportView(QWidget* view);
    QStringList labels(const Selection& s, bool queries) const;
    QString title(const Selection& s, bool withHead) const;

    MainWindow* window_;
    QTabWidget* tabs_ = nullptr;
    LineView* lines_ = nullptr;
    NeuronView* neuron_ = nullptr;
    QkSpaceView* qk_ = nullptr;
    QCPItemRect* frame_ = nullptr;  // on the heat map's plot, owned by it
    std::pair<int, int> highlight_{-1, -1};
    int side_ = -1, index_ = -1;
    // The layer's maps the query-key view sizes keys by (one per head in scope; may be empty).
    std::vector<attnscope::HeadMap> qkMaps_;
    std::vector<int> qkMapHeads_;
    JobTracker lineJobs_{this, 2};
    JobTracker neuronJobs_{this, 2};
    JobTracker qkJobs_{this, 2};
};
