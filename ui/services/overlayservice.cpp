#include "services/overlayservice.h"

#include "attnscope/runtime/error.h"

#include <algorithm>

#include <exception>

OverlayService::OverlayService(QObject* parent) : QObject(parent) { qRegisterMetaType<OverlayResult>(); }

OverlayService::~OverlayService() {
    cancel();
    waitForWorkers();
}

void OverlayService::requestOverlay(TracePtr trace, int block, const attnscope::OverlayOptions& options,
                                    const ShownSource& source) {
    if (!trace) return;
    jobs_.start(
            [trace, block, options, source](const JobTracker::Stop& stop) {
                OverlayResult r{trace, block, options, {}, {}, source};
                if (stop.requested()) return r;  // superseded while queued
                try {
                    if (!source.weights()) {
                        r.overlay = attnscope::mapRowOverlay(
                                *trace, block, shownSourceMap(*trace, source, block, options.layer, options.head, 1.0),
                                options.query);
                        if (options.patchesOnly) r.overlay = attnscope::overPatchesOnly(std::move(r.overlay));
                    } else
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
