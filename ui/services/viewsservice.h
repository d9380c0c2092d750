// ViewsService: the numbers of the Views dock's three views, from core on the shared map pool
// (services/pools.h): a layer's maps for the line view (Trace::pooledMap, attnscope::labMap), a
// neuron row (analysis/neuron.h) and a query–key projection (analysis/qk_space.h). Each kind has
// its own JobTracker: a new request supersedes the previous one of its kind and stale results
// are dropped; deliver runs on the GUI thread only for the current request.
#pragma once

#include "services/jobtracker.h"
#include "services/labservice.h"
#include "services/mapservice.h"

#include "attnscope/analysis/neuron.h"
#include "attnscope/analysis/qk_space.h"
#include "attnscope/analysis/token_kind.h"

#include <QObject>
#include <QString>

#include <functional>
#include <optional>
#include <vector>

// The Trace's map variant that draws a lab variant (Native, Dot, Linear), or nothing for the
// variants that need a head's additive fit (Additive, Hybrid on a dot layer: labMap only).
std::optional<attnscope::MapVariant> traceVariant(LabVariant variant);

// What the views show: a trace, block/layer/head, the temperature the maps are drawn at and the
// lab's variant (with its fit) for each head of the layer.
struct ViewSelection {
    TracePtr trace;
    MapKey key;
    double temperature = 1.0;
    std::vector<VariantSpec> specs;  // per head of the layer
    ShownSource source;              // another map source than the weights: its maps (lines only)
    bool valid() const { return trace && key.block >= 0; }
};

// Rows and columns [begin, begin + rows / cols) of a map; rows == 0: the whole map.
struct TokenWindow {
    int begin = 0, rows = 0, cols = 0;
};

struct LinesResult {
    std::vector<attnscope::HeadMap> maps;  // of heads[i]
    std::vector<int> heads, unfitted;      // unfitted: left out, their variant needs a fit
    QString error;
};
struct NeuronResult {
    attnscope::NeuronRow row;
    QString error;
};
struct QkResult {
    attnscope::QkSpace space;
    std::vector<attnscope::TokenKind> queryKinds, keyKinds;
    std::vector<attnscope::HeadMap> maps;  // the heads in scope, for the selected query's row
    std::vector<int> heads;
    QString error;
};

class ViewsService : public QObject {
    Q_OBJECT
public:
    explicit ViewsService(QObject* parent = nullptr) : QObject(parent) {}

    // Every head's map of the layer (in `window` when given); with a per-layer map source, the
    // layer's one map (heads = {0}).
    void requestLines(const ViewSelection& s, TokenWindow window, std::function<void(const LinesResult&)> deliver);
    // The neuron row of query `query` of the selected head.
    void requestNeuron(const ViewSelection& s, int query, std::function<void(const NeuronResult&)> deliver);
    // The projection of the selected head (allHeads: every head of the layer); withMaps: the maps
    // too, for the selected query's row.
    void requestQk(const ViewSelection& s, bool allHeads, bool withMaps, std::function<void(const QkResult&)> deliver);
    void cancelNeuron() { neuronJobs_.cancel(); }
    void cancelLines() { lineJobs_.cancel(); }
    // Drops every running request (a model change) and, waitForWorkers, waits for them.
    void cancelAll();
    void waitForWorkers();

private:
    JobTracker lineJobs_{this, mapPool()};
    JobTracker neuronJobs_{this, mapPool()};
    JobTracker qkJobs_{this, mapPool()};
};
