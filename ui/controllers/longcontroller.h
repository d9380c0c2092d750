// LongController: the Long context tab (issue 33) kept in step with the window. It makes the
// tab's panel (LongPanel, which the window places) and asks LongService for the needle scan, a
// run's generated rows for a head, the KV-eviction what-if on the main input and the maps the
// long map shows; it draws their results (figure/longfigures.h) and exports them through the
// export dialog.
//
// The scan shows its depth × length success map and layer × head retrieval map; clicking a head
// (or picking a run, a layer or a head) shows that run's generated rows over its context in the
// long map with the needle's span framed, zoomed to the needle. The what-if shows KL and token
// agreement per step, and the long map shows the prompt's map of the head chosen with the keys
// its kv head evicted shaded. Results follow the window's state: another model clears them, a new
// main input clears the what-if's, changed settings clear their own. The actions are disabled,
// with the reason shown, for models the analyses do not apply to (encoders, encoder-decoders,
// image models, the built-in models, attention files).
#pragma once

#include "figure/longfigures.h"
#include "services/longservice.h"

#include <QObject>

class ExportDialog;
class LongPanel;
class QCPAbstractItem;
class Session;
class ViewState;

class LongController : public QObject {
    Q_OBJECT
public:
    // state and session outlive the controller. The panel is made without a parent: the window
    // places it and owns it from then on.
    LongController(ViewState* state, Session* session, QObject* parent);
    ~LongController() override;

    LongPanel* panel() const { return panel_; }
    LongService* service() const { return service_; }

    void scan();
    void evict();
    void shutdown();

    bool applicable() const { return applicable_; }
    QString refusal() const { return refusal_; }

    // The latest results shown (empty before any).
    const ScanJobResult& scanResult() const { return scan_; }
    const RowsJobResult& rowsResult() const { return rows_; }
    const EvictJobResult& evictResult() const { return evict_; }
    const EvictionFigure& evictionFigure() const { return evictionFigure_; }
    // The keys the long map marks now, [cols]: 1 the needle's / a kept key, 0 not (empty: none).
    const std::vector<float>& keyMarks() const { return marks_; }

    // The export dialog for a result (LongPanel::Result); null when it shows nothing.
    ExportDialog* exportFigure(int which);
    // Haystack from file…: the dialog, then its file into the haystack box; false (and failed())
    // when the file cannot be read or is not a regular file.
    void chooseHaystackFile();
    bool loadHaystackFile(const QString& path);

signals:
    void status(const QString& message, int timeoutMs);
    void failed(const QString& title, const QString& message);  // shown as the window's error dialog

private:
    void connectSettings(ViewState* state);
    void onModelLoaded(const attnscope::ModelInfo& info);
    void onTraceReady();
    void onScan(const ScanJobResult& r);
    void onRows(const RowsJobResult& r);
    void onEvict(const EvictJobResult& r);
    void onMap(const MapJobResult& r);
    void setApplicable(bool applicable, const QString& reason);
    void clearScan(const QString& message);
    void clearEvict(const QString& message);
    void showLongMap();  // what mapWhatCombo picks, for the layer and head chosen
    void requestRows(bool sameRun);
    void drawMarks();  // the needle's frame or the evicted keys' shading over the long map
    void clearMarks();
    bool idsMode() const;

    ViewState* state_;
    Session* session_;
    LongService* service_ = nullptr;
    LongPanel* panel_ = nullptr;
    bool applicable_ = false;
    bool refusedByModel_ = false;
    QString refusal_;
    ScanJobResult scan_;
    RowsJobResult rows_;
    EvictJobResult evict_;
    EvictionFigure evictionFigure_;
    std::vector<float> marks_;
    std::vector<QCPAbstractItem*> items_;  // the marks drawn on the long map's plot
};
