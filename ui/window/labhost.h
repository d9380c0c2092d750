// LabHost: what the attention lab (LabController) needs from the window it lives in, in the
// window's terms rather than its widgets. MainWindow implements it; the lab holds a LabHost*
// that outlives it (the window owns the lab).
//
// Events flow the other way without signals here: the lab connects to the session's signals
// itself, and the host calls the lab's handlers (LabController::onTemperatureChanged(), ...)
// for what happens in its own widgets.
#pragma once

#include "services/mapservice.h"

#include <QString>
#include <QStringList>

#include <utility>
#include <vector>

namespace attnscope {
struct HeadMap;
}

class Session;

class LabHost {
public:
    virtual ~LabHost() = default;

    // The session: the loaded model, the base trace of the last run, and their signals.
    virtual Session* session() const = 0;
    // The head shown in the explore view (block index, layer, head).
    virtual MapKey currentKey() const = 0;
    // The name of the shown block ("self" while there is none).
    virtual QString currentBlockName() const = 0;
    // Shows block/layer/head in the explore view (a block name it does not know keeps the block).
    virtual void selectHead(const QString& block, int layer, int head) = 0;
    // The temperature the slider is set to (0.1..10), whether it applies to the maps or inside the model.
    virtual double sliderTemperature() const = 0;
    // A transient line in the status bar, shown for timeoutMs milliseconds.
    virtual void showStatus(const QString& message, int timeoutMs) = 0;
    // Asks for the shown head's map and the overview again (the lab changed what they show).
    virtual void refreshMaps() = 0;
    // Asks for the shown head's map alone (the lab changed how it is drawn).
    virtual void requestDetail() = 0;
    // Draws map (rows = queries) as the explore view's heat map, or a message in its place.
    virtual void showDetailMap(const attnscope::HeadMap& map, const QStringList& queryLabels,
                               const QStringList& keyLabels, const QString& title) = 0;
    virtual void showDetailMessage(const QString& message) = 0;
    // Marks (layer, head) pairs of the shown block as masked in the overview; replaces the last set.
    virtual void showMaskedHeads(const std::vector<std::pair<int, int>>& heads) = 0;
    // True while the lab's Metrics tab is the current one; showExplore() returns to the maps.
    virtual bool metricsShown() const = 0;
    virtual void showExplore() = 0;
};
