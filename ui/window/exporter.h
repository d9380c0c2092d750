// Exporter: File > Export Figure… (the current tab as a figure, in the non-modal dialog
// "exportDialog"; with an encoder-decoder also the cross-attention alignment figures, and for a
// layer of several heads the grid and the multi-page PDF of every layer) and File > Export Map
// Data… (the shown head's map as .npy or .csv). The figure is the map as shown: its zoom, its
// colours (a map source's own range) and labels. The export dialog's last width and dpi are
// the state's figure settings.
#pragma once

#include <QObject>
#include <QString>

struct Figure;
struct WindowParts;
class ExportDialog;

class Exporter : public QObject {
    Q_OBJECT
public:
    Exporter(WindowParts& parts, QObject* parent);  // parts must outlive it

    // The figure of the current tab (Explore: the shown head; Compare: the three kinds).
    Figure currentFigure() const;
    void exportFigure();
    void exportMapData();
    // Writes the shown head's map (.npy or .csv); errors go to the error dialog.
    bool writeCurrentMapData(const QString& path);
    // e.g. reverse-dot_L1_H2_T0.5 or reverse_compare_L1_H2 (no extension).
    QString suggestedFileName() const;

private:
    bool refuseWhileMapPending();  // true (and a dialog) while the heat map waits for its values
    void offerAlignmentFigures(ExportDialog& dialog) const;
    void offerBatchFigures(ExportDialog& dialog) const;
    void rememberFigureSettings();  // the export dialog's width and dpi (QSettings) into the state

    WindowParts& p_;
};
