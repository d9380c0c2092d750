// ExportDialog: File > Export figure… Picks the file (PDF, SVG or PNG), the physical width
// (one column 3.25 in, two columns 6.75 in, or custom) and the PNG's dpi, shows a preview and
// the resulting size, and writes the figure with writeFigure (ui/figure.h). Non-modal: open()
// it; exported(path) follows a successful write, errors show in the dialog and keep it open.
// Other figures of the same run (an encoder-decoder's alignment figure) can be offered with
// addFigure(); a "Figure:" choice then picks which one is written.
#pragma once

#include "figure/figure.h"
#include "figure/paintedfigure.h"

#include <QDialog>
#include <QStringList>

#include <vector>

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QSpinBox;

class ExportDialog : public QDialog {
    Q_OBJECT
public:
    ExportDialog(Figure figure, const QString& suggestedPath, QWidget* parent = nullptr);

    // Offers another figure; the first (the constructor's) is "the map on screen". The file name
    // gets `suffix` (e.g. "_alignment") while that figure is chosen.
    void addFigure(const QString& name, Figure figure, const QString& suffix);
    // Offers several figures written as the pages of one PDF (batch figures: every layer); the
    // preview shows the first. Grids (Figure::columns) get their columns again for the width.
    void addPages(const QString& name, std::vector<Figure> pages, const QString& suffix);
    // Writes a painted figure (a view of the Views dock: File > Export View…) instead of the map
    // figure: the same file, format, width and dpi choices; the preview paints it.
    void setPainted(PaintedFigure figure);
    void setFigureIndex(int index);
    int figureIndex() const;

    void setPath(const QString& path);
    void setWidthInches(double inches);  // picks the matching preset or Custom
    void setDpi(int dpi);
    QString path() const;
    double widthInches() const;
    int dpi() const;
    // Writes the figure; false (with the message shown) when it failed.
    bool exportNow();

    static constexpr double kOneColumnIn = 3.25;
    static constexpr double kTwoColumnIn = 6.75;

signals:
    void exported(const QString& path);

private:
    void resizeEvent(QResizeEvent* event) override;
    void browse();
    void updatePreview();
    void syncFormat();

    void chooseFigure(int index);

    Figure figure_;                           // the chosen one, with the dialog's width
    PaintedFigure painted_;                   // when set, written instead of figure_
    std::vector<Figure> figures_;             // every offered figure
    std::vector<std::vector<Figure>> pages_;  // per offered figure: its pages (empty: one figure)
    QStringList suffixes_;                    // file-name suffix of each
    int chosen_ = 0;
    QComboBox* choice_ = nullptr;
    QLabel* choiceLabel_ = nullptr;
    QLineEdit* path_ = nullptr;
    QComboBox* format_ = nullptr;
    QComboBox* preset_ = nullptr;
    QDoubleSpinBox* width_ = nullptr;
    QSpinBox* dpi_ = nullptr;
    QLabel* preview_ = nullptr;
    QLabel* size_ = nullptr;
    QLabel* error_ = nullptr;
};
