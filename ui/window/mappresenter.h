// MapPresenter: what the central tabs show, kept on the ViewState. A new trace sets the state's
// blocks and the overview's shape; the selection, the temperature and the colours ask for the
// shown head's detail map (MapService, or the lab when it draws a variant or an intervention,
// or the map source the Show selector picked) and the overview's thumbnails, all computed by
// core on workers; results that a newer request superseded are dropped. It also keeps the
// Controls dock's block/layer/head boxes, the temperature's applicability, the Compare tab's
// input and the note beside the tabs in step.
#pragma once

#include "services/mapservice.h"

#include <QObject>

#include <memory>

namespace attnscope {
class Trace;
}
struct WindowParts;

class MapPresenter : public QObject {
    Q_OBJECT
public:
    // Made before the controllers: on the session's and the map service's signals it reacts
    // first. parts must outlive it; its controllers are read when they exist.
    MapPresenter(WindowParts& parts, QObject* parent);
    // The connections to the controllers, the Show selector (made here) and the state, once the
    // docks are built.
    void buildSources();
    void bindState();

    void refreshMaps();    // the shown head's map and the overview again (the lab changed them)
    void requestDetail();  // the shown head's map alone (once per event-loop turn)
    void requestThumbnails();
    void syncSelectionWidgets();
    void updateCompare(bool runIfNeeded);
    void updateTemperatureApplicability();
    void updateHeadGroup();
    // A model or an attention file replaces the trace: the overview is set up again.
    void resetShownBlock() { shownBlock_ = -1; }

    // The shown head (the state's block index, layer, head) and its block's name ("self" while none).
    MapKey currentKey() const;
    QString currentBlockName() const;
    // The map MapService drew last (no trace when it failed): its source's colours and title.
    const DetailResult& shownDetail() const { return shownDetail_; }
    // The Compare tab's task: the state's, else the built-in reverse task.
    QString compareTask() const;

private:
    void onTraceReady(const std::shared_ptr<const attnscope::Trace>& trace);
    void onBlockChanged();
    void onSelectionChanged();
    void onTemperatureChanged();
    void syncTab();
    QString tabName() const;
    void updateSourceTabNote();
    // The trace a source's maps are drawn from: the session's for the gradient sources (their
    // maps hold the interventions), else the lab's shown one (its re-run when there is one).
    std::shared_ptr<const attnscope::Trace> sourceTrace(const ShownSource& source) const;
    void requestSourceDetail(const ShownSource& source);
    void applyDetailColors();  // the heat map's colours for the source it shows
    void sendDetailRequest();
    void askLevelOfDetail(const attnscope::PoolRequest& request);
    void onDetail(const DetailResult& result);
    void showDetail(const DetailResult& result);
    void onThumbnails(const ThumbnailResult& result);
    void onRawTokensToggled();

    WindowParts& p_;
    int shownBlock_ = -1;       // the block the overview and the ranges were set up for
    DetailResult shownDetail_;  // the map MapService drew last (no trace when it failed)
    // Requests made in one pass of the event loop (a layer and a head changed together, a new
    // trace then a head) go out once, for the last state, at the loop's next turn: no job is
    // started for a head shown for no frame.
    bool detailQueued_ = false;
    bool levelOfDetailQueued_ = false;
    attnscope::PoolRequest levelOfDetailWanted_;
};
