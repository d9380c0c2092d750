// MapService: attention maps computed on worker threads from immutable Traces, for the views.
//
// The ui never computes attention: every map comes from Trace::map (core), and entropy / KL
// from attnscope/analysis/metrics.h. Each kind of request (the detail map, the overview thumbnails, the
// comparison) has its own JobTracker: a new request supersedes the previous one of its kind, the
// superseded job stops at its next map and its result is dropped, so dragging the temperature
// slider always ends on the newest maps. Results arrive on the GUI thread as signals.
#pragma once

#include "figure/colormaps.h"
#include "services/jobtracker.h"
#include "services/pools.h"
#include "services/sourceservice.h"

#include "attnscope/attention/trace.h"
#include "attnscope/lab/lab_views.h"

#include <QElapsedTimer>
#include <QImage>
#include <QObject>
#include <QString>

#include <array>
#include <atomic>
#include <functional>
#include <memory>
#include <vector>

using TracePtr = std::shared_ptr<const attnscope::Trace>;

// Which map: block index into trace->blocks(), layer, head.
struct MapKey {
    int block = 0;
    int layer = 0;
    int head = 0;
    bool operator==(const MapKey& o) const { return block == o.block && layer == o.layer && head == o.head; }
};

struct DetailResult {
    TracePtr trace;
    MapKey key;
    double temperature = 1.0;
    attnscope::HeadMap map;
    QString error;  // empty on success
    // The map's shape only (rows, cols; no values yet): sent first for a map larger than
    // requestDetail's shapeFirstAbove, so that the heat map can draw its level of detail at once
    // while the exact values follow in a second detailReady.
    bool pending = false;
    ShownSource source;  // what the map shows (the weights unless asked otherwise)
};

// A rectangle of one head's map pooled to a view's pixels (the heat map's level of detail).
struct LevelOfDetailResult {
    TracePtr trace;
    MapKey key;
    double temperature = 1.0;
    attnscope::PoolRequest request;
    attnscope::HeadMap pooled;
    QString error;
};

// Which maps the whole-block views (overview thumbnails, the Model tab's metrics) show: the lab's
// variant (LabVariant::Native: the model's own maps) at spec.map.temperature, and the additive
// fits Additive and Hybrid draw on a layer that is not additive (attnscope::labPooledMap and
// labHeadMetrics; a head without a fit has no such map and is left blank).
// With a map source other than the weights (source), the tiles show that source's maps
// (shownSourceMap, pooled by core's poolHeadMap) coloured over the block's range (sourceview.h),
// and the variant does not apply.
struct ShownVariant {
    attnscope::VariantSpec spec;
    std::vector<attnscope::HeadFit> fits;
    ShownSource source;
    // The model's own maps at display temperature t.
    static ShownVariant modelsOwn(double temperature);
    // Same variant, map options, gate and fit objects: the same maps.
    bool operator==(const ShownVariant& o) const;
    bool operator!=(const ShownVariant& o) const { return !(*this == o); }
};

// Thumbnails of every (layer, head) of one block, row-major: index = layer * heads + head.
struct ThumbnailResult {
    TracePtr trace;
    int block = 0;
    int layers = 0;
    int heads = 0;
    std::vector<QImage> images;  // one pixel per cell, or pooled down to at most maxSide
    // The values behind the images (one per head, empty where the map failed), for recolouring.
    std::shared_ptr<const std::vector<PooledMap>> pooled;
    ShownVariant variant;  // the maps they show
};

// The same (block name, layer, head) in three traces (e.g. dot, additive, linear).
struct CompareResult {
    std::array<TracePtr, 3> traces;
    attnscope::MapSource source = attnscope::MapSource::Weights;  // what the maps show
    std::array<attnscope::HeadMap, 3> maps;
    std::array<QString, 3> errors;              // per map; empty when it was computed
    std::array<double, 3> entropy{};            // meanRowEntropy, nats (NaN when missing)
    std::array<std::array<double, 3>, 3> kl{};  // kl[i][j] = meanRowKl(map i, map j), nats
};

class MapService : public QObject {
    Q_OBJECT
public:
    explicit MapService(QObject* parent = nullptr);
    ~MapService() override;  // cancels and waits for its workers

    // The head's exact map (detailReady). A map with more than shapeFirstAbove rows or columns
    // (0: never) is first announced by a pending result with its shape, sent before this returns;
    // its values follow once the overview's thumbnails, if being computed, are done.
    // Another source than the weights: its map (shownSourceMap), whole, with no shape first.
    void requestDetail(TracePtr trace, MapKey key, double temperature, int shapeFirstAbove = 0,
                       const ShownSource& source = {});
    // Thumbnails of the variant's maps (attnscope::labPooledMap), pooled to at most maxSide bins a
    // side (max pooling by default) and delivered layer by layer as they are computed
    // (thumbnailsReady with fewer images, then all of them); a head without a map is an empty tile.
    void requestThumbnails(TracePtr trace, int block, const ShownVariant& variant, Colormap colormap, ColorScale scale,
                           int maxSide = 48, attnscope::Pooling pooling = attnscope::Pooling::Max);
    // The model's own maps at the display temperature.
    void requestThumbnails(TracePtr trace, int block, double temperature, Colormap colormap, ColorScale scale,
                           int maxSide = 48, attnscope::Pooling pooling = attnscope::Pooling::Max) {
        requestThumbnails(std::move(trace), block, ShownVariant::modelsOwn(temperature), colormap, scale, maxSide,
                          pooling);
    }
    // The heat map's level of detail: Trace::pooledMap of the request's rectangle.
    void requestLevelOfDetail(TracePtr trace, MapKey key, double temperature, const attnscope::PoolRequest& request);
    // The same (block, layer, head) of three traces at the temperature, or with a map source other
    // than the weights that source's maps where core computes them (attnscope::sourceMap; the
    // gradient sources through attnscope::gradientSources on `models`, after core's coverage
    // check), each kind's error (core's reason) in its place otherwise. Entropy and KL only for
    // probability-like maps (weights, ALTI, ALTI rollout; NaN otherwise).
    void requestCompare(std::array<TracePtr, 3> traces, const QString& block, int layer, int head, double temperature,
                        attnscope::MapSource source = attnscope::MapSource::Weights,
                        std::array<std::shared_ptr<const attnscope::Model>, 3> models = {});
    // Drops whatever is pending (e.g. when the model changes).
    void cancelAll();
    void waitForWorkers();

    // Milliseconds from the latest delivered detail request to its delivery (for the status bar).
    double lastDetailLatencyMs() const { return lastDetailMs_; }

signals:
    void detailReady(const DetailResult& result);
    void thumbnailsReady(const ThumbnailResult& result);
    void levelOfDetailReady(const LevelOfDetailResult& result);
    void compareReady(const CompareResult& result);

private:
    JobTracker detailJobs_{this, mapPool()};
    JobTracker thumbJobs_{this, mapPool()};
    JobTracker compareJobs_{this, mapPool()};
    JobTracker lodJobs_{this, mapPool()};
    // Level-of-detail jobs running now: the thumbnail job waits between heads while any runs,
    // so that the image the user looks at gets both cores (a 4,096-token head's image takes
    // ~6 ms alone, ~50 ms beside the thumbnails). Shared with the jobs, which may outlive a step.
    std::shared_ptr<std::atomic<int>> lodRunning_ = std::make_shared<std::atomic<int>>(0);
    QElapsedTimer detailClock_;
    std::function<void()> deferredDetail_;  // a long map's values, started when the thumbnails are done
    double lastDetailMs_ = 0.0;
    // The last thumbnails' values: a new colouring of the same maps only recolours them.
    struct ThumbnailValues {
        std::weak_ptr<const attnscope::Trace> trace;  // does not keep an old trace alive
        int block = -1;
        ShownVariant variant;
        int maxSide = 0;
        attnscope::Pooling pooling = attnscope::Pooling::Max;
        std::shared_ptr<const std::vector<PooledMap>> pooled;
    };
    ThumbnailValues thumbValues_;
};

Q_DECLARE_METATYPE(DetailResult)
Q_DECLARE_METATYPE(ThumbnailResult)
Q_DECLARE_METATYPE(CompareResult)
Q_DECLARE_METATYPE(LevelOfDetailResult)
