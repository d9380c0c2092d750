// ImageController: the Image tab (ImageOverlayPanel) kept in step with the ViewState: the shown
// trace (the lab's re-run when there is one), block, layer, head and the temperature the maps are
// drawn at; the overlay's numbers come from core through OverlayService and are asked for only
// while the tab is shown. It keeps the image each trace ran on, so the overlay sits on the picture
// the model saw even after another image was opened. Export writes the overlay as a figure.
#pragma once

#include "services/overlayservice.h"

#include "figure/colormaps.h"

#include <QImage>
#include <QObject>

#include <functional>

class ImageOverlayPanel;
class LabController;
class Session;
class ViewState;
class QWidget;
struct OverlayFigure;

class ImageController : public QObject {
    Q_OBJECT
public:
    // Every argument outlives the controller; dialogParent (its parent) parents the file dialog.
    // onError shows a failed export.
    ImageController(ViewState* state, Session* session, LabController* lab, QWidget* dialogParent,
                    std::function<void(const QString&, const QString&)> onError);

    ImageOverlayPanel* panel() const { return panel_; }
    OverlayService* service() const { return service_; }

    // The Image tab's settings as plain values (workspace files save and restore them).
    struct State {
        attnscope::OverlaySource source = attnscope::OverlaySource::Head;
        attnscope::HeadFusion fusion = attnscope::HeadFusion::Mean;
        double discardRatio = 0.9;  // rollout only, [0, 0.99]
        int opacity = 60;           // percent
        Colormap colormap = Colormap::Magma;
        bool smooth = false, grid = false;
        bool patchesOnly = false;  // the row renormalised over the patches
        int query = 0;             // the token whose row is shown (0 = [CLS])
    };
    State state() const;
    void setState(const State& state);  // then asks core again when the tab is shown
    // The overlay the panel shows (its trace, options and values), for tests and the figure.
    const OverlayResult& shown() const { return shown_; }

    // Asks core for the overlay of the window's selection (when the tab is shown).
    void refresh();
    // What the maps show (the Show selector): another source than the weights overlays its map's
    // row (Chefer's relevance of [CLS] over the patches, the standard ViT explanation); refresh().
    void setSource(const ShownSource& source);
    // The figure of what the panel shows; title names the model and the selection.
    OverlayFigure figure() const;
    // Writes the figure (.pdf, .svg, .png); errors go to onError and return false.
    bool exportFigure(const QString& path);
    // Opens the save dialog ("overlayExportDialog"), then exportFigure.
    void chooseExportFile();

signals:
    void status(const QString& message, int timeoutMs);  // a file written

private:
    bool shownNow() const;
    void onOverlay(const OverlayResult& r);
    QString describe(const OverlayResult& r) const;
    QString details(const OverlayResult& r) const;

    ViewState* state_;
    Session* session_;
    LabController* lab_;
    QWidget* dialogParent_;
    std::function<void(const QString&, const QString&)> onError_;
    ImageOverlayPanel* panel_ = nullptr;
    OverlayService* service_ = nullptr;
    OverlayResult shown_;
    ShownSource source_;
    TracePtr overlayTrace() const;  // the session's for the gradient sources, else the lab's shown
    QImage image_;                  // the image the session's last trace ran on
};
