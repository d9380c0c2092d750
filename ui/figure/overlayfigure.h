// Attention over the image as a picture: the input image with one value per patch drawn over it
// in a colour map at an opacity, the patch grid and a marked patch optionally, and (for the
// exported figure) a title and a colour bar. The window's image view paints with paintOverlay()
// too, so the figure shows exactly what the screen shows. The values come from core
// (attnscope::patchOverlay); nothing here computes attention.
//
// Colours: a patch of value v gets colormapColor(v / maxValue), i.e. the colour bar runs from 0
// to maxValue (the largest patch weight unless set otherwise), labelled in the values' own units.
//
// Needs a QGuiApplication (fonts); no widgets, no display (the offscreen platform works).
#pragma once

#include "figure/colormaps.h"

#include <QImage>
#include <QRectF>
#include <QSizeF>
#include <QString>

#include <functional>
#include <vector>

class QPainter;

struct OverlayPicture {
    QImage image;  // the input image (any size; drawn stretched to the target rectangle)
    int gridRows = 0, gridCols = 0;
    std::vector<double> values;  // gridRows × gridCols, row-major
    double maxValue = 1.0;       // the colour bar's top (> 0)
    Colormap colormap = Colormap::Viridis;
    double opacity = 0.6;  // of the overlay, 0..1
    bool smooth = false;   // bilinear between patch centres instead of flat patches
    bool grid = false;     // draw the patch grid
    int markedPatch = -1;  // r * gridCols + c outlined (the query patch); -1: none
    // Window attention (Swin): each patch's window at the shown layer (gridRows × gridCols; empty:
    // none). The windows' borders are drawn, and the marked patch's window outlined.
    std::vector<int> windows;
    // Signed values (an image–text model's contributions to its logit): -maxValue .. maxValue on
    // RdBu, 0 white, whatever the colormap says.
    bool diverging = false;
};

// The colour of a value (clamped to [0, maxValue], or [-maxValue, maxValue] when diverging) in
// the picture's colour map (RdBu when diverging).
QColor overlayColor(const OverlayPicture& picture, double value);
Colormap overlayColormap(const OverlayPicture& picture);
// Where a value sits on the colour bar, 0 (bottom) to 1 (top), and the bar's tick values:
// overlayTicks(maxValue), mirrored below 0 when diverging.
double overlayBarPosition(const OverlayPicture& picture, double value);
std::vector<double> overlayBarTicks(const OverlayPicture& picture);

// The image stretched to target with the overlay (and grid, mark) on top.
void paintOverlay(QPainter& painter, const QRectF& target, const OverlayPicture& picture);

struct OverlayFigure {
    OverlayPicture picture;
    QString title;  // above the image; may hold a second line after '\n'
    QString colorbarLabel = QStringLiteral("attention weight");
    double widthIn = 3.25;
    QString fontFamily = QStringLiteral("DejaVu Sans");
};

// The figure's size in points (width = widthIn·72).
QSizeF overlayFigureSizePoints(const OverlayFigure& figure);
// Paints the figure filling the painter's device width (the device must have the figure's aspect).
void paintOverlayFigure(QPainter& painter, const OverlayFigure& figure);
// The colour bar's tick values: 0, then about four round steps up to maxValue.
std::vector<double> overlayTicks(double maxValue);

// Writes PDF, SVG or PNG (by extension; dpi for PNG) through a temporary file, so a failure
// leaves an existing file unchanged. Throws attnscope::Error naming the file and the problem
// (unknown extension, no image or values, width or dpi out of range, unwritable folder).
void writeOverlayFigure(const OverlayFigure& figure, const QString& path, int dpi = 300);
