#include "services/mapservice.h"

#include "figure/sourceview.h"

#include "attnscope/analysis/gradient_sources.h"
#include "attnscope/analysis/metrics.h"
#include "attnscope/analysis/source_metrics.h"
#include "attnscope/runtime/error.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <thread>
#include <limits>
#include <utility>

namespace {

// One tile of a map source (not the weights): the head's map, or for a per-layer source the
// layer's (computed at the layer's first head and repeated on the others), pooled by core.
void sourceTile(const attnscope::Trace& trace, int block, int layer, int head, const ShownSource& source,
                const attnscope::PoolRequest& request, std::vector<PooledMap>& tiles) {
    if (!attnscope::perHeadSource(source.source) && head > 0) {
        tiles.back() = tiles[tiles.size() - 2];
        return;
    }
    try {
        const attnscope::HeadMap m =
                attnscope::poolHeadMap(shownSourceMap(trace, source, block, layer, head, 1.0), request);
        tiles.back() = {m.cols, m.rows, std::vector<double>(m.values.begin(), m.values.end())};
    } catch (...) {
        // the map failed (the heat map says why): its tile stays empty
    }
}

// The tiles' colours: the chosen ones for the weights, else the source's over every tile's values.
SourceColors tileColors(const ShownSource& source, Colormap colormap, const ColorScale& scale,
                        const std::vector<PooledMap>& tiles) {
    if (source.weights()) return {colormap, scale};
    std::vector<float> values;
    for (const PooledMap& p : tiles) values.insert(values.end(), p.values.begin(), p.values.end());
    return sourceColors(source.source, colormap, scale.type, values);
}

}  // namespace

ShownVariant ShownVariant::modelsOwn(double temperature) {
    ShownVariant v;
    v.spec.map.temperature = temperature;
    return v;
}

bool ShownVariant::operator==(const ShownVariant& o) const {
    const attnscope::MapOptions &a = spec.map, &b = o.spec.map;
    if (spec.variant != o.spec.variant || spec.gate != o.spec.gate || a.temperature != b.temperature ||
        a.variant != b.variant || a.featureMap != b.featureMap || a.features != b.features || a.seed != b.seed ||
        fits.size() != o.fits.size() || source != o.source)
        return false;
    for (std::size_t i = 0; i < fits.size(); ++i)
        if (fits[i].block != o.fits[i].block || fits[i].layer != o.fits[i].layer || fits[i].head != o.fits[i].head ||
            fits[i].fit != o.fits[i].fit)
            return false;
    return true;
}

MapService::MapService(QObject* parent) : QObject(parent) {
    qRegisterMetaType<DetailResult>();
    qRegisterMetaType<ThumbnailResult>();
    qRegisterMetaType<CompareResult>();
    qRegisterMetaType<LevelOfDetailResult>();
}

MapService::~MapService() {
    cancelAll();
    waitForWorkers();
}

void MapService::requestDetail(TracePtr trace, MapKey key, double temperature, int shapeFirstAbove,
                               const ShownSource& source) {
    if (!trace) return;
    detailClock_.start();
    deferredDetail_ = nullptr;
    if (!source.weights()) shapeFirstAbove = 0;  // a source's map is computed whole
    auto start = [this, trace, key, temperature, source] {
        detailJobs_.start(
                [trace, key, temperature, source](const JobTracker::Stop& stop) {
                    DetailResult r{trace, key, temperature, {}, {}, false, source};
                    if (stop.requested()) return r;  // superseded while queued (a fast slider drag)
                    try {
                        r.map = shownSourceMap(*trace, source, key.block, key.layer, key.head, temperature);
                    } catch (...) {
                        r.error = currentJobError();
                    }
                    return r;
                },
                [this](const DetailResult& r) {
                    lastDetailMs_ = detailClock_.nsecsElapsed() / 1e6;
                    emit detailReady(r);
                });
    };
    // A long map: its shape at once, from the block's tokens (the heat map draws its level of
    // detail from that), and its values after the thumbnails when they are being computed, so
    // that the two do not share the cores (the values are for hovering and export).
    if (shapeFirstAbove > 0 && key.block >= 0 && key.block < int(trace->blocks().size())) {
        const auto& info = trace->blocks()[std::size_t(key.block)];
        DetailResult shape{trace, key, temperature, {}, {}, true, {}};
        shape.map.rows = int(info.queryTokens.size());
        shape.map.cols = int(info.keyTokens.size());
        if (shape.map.rows > shapeFirstAbove || shape.map.cols > shapeFirstAbove) {
            detailJobs_.cancel();  // an older detail job's result is dropped
            emit detailReady(shape);
            if (thumbJobs_.isRunning()) {
                deferredDetail_ = start;
                return;
            }
        }
    }
    start();
}

void MapService::requestThumbnails(TracePtr trace, int block, const ShownVariant& variant, Colormap colormap,
                                   ColorScale scale, int maxSide, attnscope::Pooling pooling) {
    if (!trace || block < 0 || block >= int(trace->blocks().size())) return;
    const ThumbnailValues& last = thumbValues_;
    const bool sameMaps = last.pooled && last.trace.lock() == trace && last.block == block && last.variant == variant &&
                          last.maxSide == maxSide && last.pooling == pooling;
    auto known = sameMaps ? last.pooled : nullptr;  // only the colouring changed: no map is computed again
    const auto lodRunning = lodRunning_;
    thumbJobs_.start(
            [=](const JobTracker::Stop& stop) {
                const auto& info = trace->blocks()[std::size_t(block)];
                ThumbnailResult r{trace, block, info.layers, info.heads, {}, known, variant};
                if (!known) {
                    auto pooled = std::make_shared<std::vector<PooledMap>>();
                    // Max pooling in core (labPooledMap: Trace::pooledMap for the Trace's own variants,
                    // never a whole dot map): a sparse head's single strong cells stay visible where a
                    // mean over 64 x 64 cells would be black.
                    attnscope::PoolRequest request;
                    request.outRows = request.outCols = maxSide;
                    request.pooling = pooling;
                    for (int l = 0; l < info.layers && !stop.requested(); ++l) {
                        for (int h = 0; h < info.heads && !stop.requested(); ++h) {
                            while (lodRunning->load() > 0 && !stop.requested())
                                std::this_thread::sleep_for(std::chrono::milliseconds(1));
                            const attnscope::AdditiveFit* fit = attnscope::fitOf(variant.fits, block, l, h);
                            pooled->push_back({});  // an empty tile: no map under the variant (no fit), or it failed
                            if (!variant.source.weights()) {
                                sourceTile(*trace, block, l, h, variant.source, request, *pooled);
                                continue;
                            }
                            if (!attnscope::labMapAvailable(info, variant.spec.variant, fit)) continue;
                            try {
                                const attnscope::HeadMap m =
                                        attnscope::labPooledMap(*trace, block, l, h, request, variant.spec, fit);
                                pooled->back() = {m.cols, m.rows,
                                                  std::vector<double>(m.values.begin(), m.values.end())};
                            } catch (...) {
                                // the map failed: its tile stays empty
                            }
                        }
                        // Thumbnails fill in layer by layer; a newer request (input, block,
                        // temperature or variant changed) stops this job and drops what it posted.
                        if (l + 1 < info.layers && !stop.requested()) {
                            ThumbnailResult partial{trace, block, info.layers, info.heads, {}, nullptr, variant};
                            const SourceColors c = tileColors(variant.source, colormap, scale, *pooled);
                            for (const PooledMap& p : *pooled)
                                partial.images.push_back(pooledImage(p, c.colormap, c.scale));
                            thumbJobs_.post(stop, [this, partial] { emit thumbnailsReady(partial); });
                        }
                    }
                    r.pooled = pooled;
                }
                const SourceColors c = tileColors(variant.source, colormap, scale, *r.pooled);
                for (const PooledMap& p : *r.pooled) {
                    if (stop.requested()) break;
                    try {
                        r.images.push_back(pooledImage(p, c.colormap, c.scale));
                    } catch (...) {
                        r.images.push_back({});  // a malformed pooled map: an empty tile, not a crash
                    }
                }
                return r;
            },
            [this, maxSide, pooling](const ThumbnailResult& r) {
                thumbValues_ = {r.trace, r.block, r.variant, maxSide, pooling, r.pooled};
                emit thumbnailsReady(r);
                if (auto deferred = std::exchange(deferredDetail_, nullptr)) deferred();  // a long map's values
            });
}

void MapService::requestLevelOfDetail(TracePtr trace, MapKey key, double temperature,
                                      const attnscope::PoolRequest& request) {
    if (!trace) return;
    lodJobs_.start(
            [=, running = lodRunning_](const JobTracker::Stop& stop) {
                LevelOfDetailResult r{trace, key, temperature, request, {}, {}};
                if (stop.requested()) return r;  // superseded while queued (a wheel spin)
                ++*running;
                struct Done {
                    std::atomic<int>& n;
                    ~Done() { --n; }
                } done{*running};
                try {
                    attnscope::MapOptions options;
                    options.temperature = temperature;
                    r.pooled = trace->pooledMap(key.block, key.layer, key.head, request, options);
                } catch (...) {
                    r.error = currentJobError();
                }
                return r;
            },
            [this](const LevelOfDetailResult& r) { emit levelOfDetailReady(r); });
}

namespace {

// One kind's map of a map source for the Compare tab: core's, or core's reason why not.
attnscope::HeadMap compareSourceMap(const attnscope::Trace& trace, const attnscope::Model* model,
                                    attnscope::MapSource source, int block, int layer, int head) {
    if (!attnscope::gradientSource(source)) {
        // What the trace did not record comes first (core's reason), before an index out of range.
        bool covered = false;
        try {
            const std::vector<int> blocks = attnscope::sourceCoveredBlocks(trace, source);
            covered = std::find(blocks.begin(), blocks.end(), block) != blocks.end();
        } catch (const attnscope::Error&) {
            // no block is covered: the line below says why for this one
        }
        if (!covered) {
            attnscope::sourceMap(trace, source, block, 0, 0);  // throws why
            throw attnscope::Error(std::string(attnscope::sourceName(source)) + " does not cover this block");
        }
        return attnscope::sourceMap(trace, source, block, layer, head);
    }
    if (!model) throw attnscope::Error("no model to run the gradients through");
    attnscope::gradientClassLabels(*model);  // core refuses, with the reason, a model it does not cover
    if (block != 0)
        throw attnscope::Error(std::string(attnscope::sourceLabel(source)) + " covers the model's first block only");
    attnscope::GradientInput input;
    input.text.ids = trace.ids();
    return attnscope::gradientSources(*model, input, {}).map(source, layer, head);
}

}  // namespace

void MapService::requestCompare(std::array<TracePtr, 3> traces, const QString& block, int layer, int head,
                                double temperature, attnscope::MapSource source,
                                std::array<std::shared_ptr<const attnscope::Model>, 3> models) {
    compareJobs_.start(
            [=](const JobTracker::Stop& stop) {
                CompareResult r;
                r.traces = traces;
                r.source = source;
                if (stop.requested()) return r;  // superseded while queued
                const double nan = std::numeric_limits<double>::quiet_NaN();
                const bool probabilities = attnscope::unitRangeSource(source);  // entropy and KL are defined
                attnscope::MapOptions options;
                options.temperature = temperature;
                for (int i = 0; i < 3 && !stop.requested(); ++i) {
                    r.entropy[std::size_t(i)] = nan;
                    try {
                        if (!traces[std::size_t(i)]) throw std::runtime_error("not run");
                        const auto& t = *traces[std::size_t(i)];
                        const int b = t.blockIndex(block.toStdString());
                        r.maps[std::size_t(i)] =
                                source == attnscope::MapSource::Weights
                                        ? t.map(b, layer, head, options)
                                        : compareSourceMap(t, models[std::size_t(i)].get(), source, b, layer, head);
                        if (probabilities)
                            r.entropy[std::size_t(i)] = attnscope::meanRowEntropy(r.maps[std::size_t(i)]);
                    } catch (...) {
                        r.errors[std::size_t(i)] = currentJobError();
                    }
                }
                for (int i = 0; i < 3; ++i)
                    for (int j = 0; j < 3; ++j) {
                        double& kl = r.kl[std::size_t(i)][std::size_t(j)];
                        kl = nan;
                        if (!probabilities || !r.errors[std::size_t(i)].isEmpty() ||
                            !r.errors[std::size_t(j)].isEmpty())
                            continue;
                        try {
                            kl = attnscope::meanRowKl(r.maps[std::size_t(i)], r.maps[std::size_t(j)]);
                        } catch (...) {
                            // different shapes (the models split the text differently): no KL
                        }
                    }
                return r;
            },
            [this](const CompareResult& r) { emit compareReady(r); });
}

void MapService::cancelAll() {
    deferredDetail_ = nullptr;
    detailJobs_.cancel();
    thumbJobs_.cancel();
    compareJobs_.cancel();
    lodJobs_.cancel();
}

void MapService::waitForWorkers() {
    detailJobs_.waitForDone();
    thumbJobs_.waitForDone();
    compareJobs_.waitForDone();
    lodJobs_.waitForDone();
}
