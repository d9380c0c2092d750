// OverlayService: attention over the image (core's attnscope::patchOverlay) on a worker thread,
// for the image view. A new request supersedes the previous one (JobTracker), so dragging the
// temperature slider or the discard ratio ends on the newest overlay. Computes nothing itself.
#pragma once

#include "services/jobtracker.h"
#include "services/pools.h"
#include "services/mapservice.h"

#include "attnscope/analysis/overlay.h"

#include <QObject>
#include <QString>

struct OverlayResult {
    TracePtr trace;
    int block = 0;
    attnscope::OverlayOptions options;
    attnscope::PatchOverlay overlay;
    QString error;       // empty on success
    ShownSource source;  // a map source's row instead of options.source's (the weights)
};

class OverlayService : public QObject {
    Q_OBJECT
public:
    explicit OverlayService(QObject* parent = nullptr);
    ~OverlayService() override;  // cancels and waits for its worker

    // With another source than the weights: that source's map of options.layer (and head), row
    // options.query, over the patches (options.source, the rollout's settings do not apply).
    void requestOverlay(TracePtr trace, int block, const attnscope::OverlayOptions& options,
                        const ShownSource& source = {});
    void cancel();
    void waitForWorkers();
    bool isRunning() const { return jobs_.isRunning(); }

signals:
    void overlayReady(const OverlayResult& result);

private:
    JobTracker jobs_{this, mapPool()};
};

Q_DECLARE_METATYPE(OverlayResult)
