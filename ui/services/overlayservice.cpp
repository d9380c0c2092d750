#include "services/overlayservice.h"

#include "attnscope/runtime/error.h"

#include <algorithm>

#include <exception>

OverlayService::OverlayService(QObject* parent) : QObject(parent) { qRegisterMetaType<OverlayResult>(); }

OverlayService::~OverlayService() {
    cancel();
    waitForWorkers();
}

attnscope::PatchOverlay sourceOverlay(const attnscope::Trace& trace, int block, const attnscope::HeadMap& map,
                                      int query) {
    attnscope::PatchOverlay o;
    o.grid = attnscope::patchGrid(trace.blocks().at(std::size_t(block)).keyTokens);
    if (query < 0 || query >= map.rows)
        throw attnscope::Error("overlay: query " + std::to_string(query) + " is outside the map's " +
                               std::to_string(map.rows) + " rows");
    o.query = query;
    for (int p : o.grid.positions) o.patches.push_back(map.at(query, p));
    for (int t : o.grid.others) o.otherWeight += map.at(query, t);
    for (double v : o.patches) o.maxPatch = std::max(o.maxPatch, v);
    return o;
}

void OverlayService::requestOverlay(TracePtr trace, int block, const attnscope::OverlayOptions& options,
                                    const ShownSource& source) {
    if (!trace) return;
    jobs_.start(
            [trace, block, options, source](const JobTracker::Stop& stop) {
                OverlayResult r{trace, block, options, {}, {}, source};
                if (stop.requested()) return r;  // superseded while queued
                try {
                    if (!source.weights())
                        r.overlay = sourceOverlay(
                                *trace, block, shownSourceMap(*trace, source, block, options.layer, options.head, 1.0),
                                options.query);
                    else
                        r.overlay = attnscope::patchOverlay(*trace, block, options);
                } catch (const std::exception& e) {
                    r.error = QString::fromUtf8(e.what());
                } catch (...) {
                    r.error = QStringLiteral("Unknown error in a background job.");
                }
                return r;
            },
            [this](const OverlayResult& r) { emit overlayReady(r); });
}

void OverlayService::cancel() { jobs_.cancel(); }
void OverlayService::waitForWorkers() { jobs_.waitForDone(); }
