#include "services/overlayservice.h"

#include <exception>

OverlayService::OverlayService(QObject* parent) : QObject(parent) { qRegisterMetaType<OverlayResult>(); }

OverlayService::~OverlayService() {
    cancel();
    waitForWorkers();
}

void OverlayService::requestOverlay(TracePtr trace, int block, const attnscope::OverlayOptions& options) {
    if (!trace) return;
    jobs_.start(
            [trace, block, options](const JobTracker::Stop& stop) {
                OverlayResult r{trace, block, options, {}, {}};
                if (stop.requested()) return r;  // superseded while queued
                try {
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
