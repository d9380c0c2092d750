#include "views/cellimageplottable.h"

void CellImagePlottable::setColoring(Colormap colormap, const ColorScale& scale) {
    colormap_ = colormap;
    scale_ = scale;
    touch();
}

// QCPColorMap::draw calls this whenever its data may have changed (QCustomPlot keeps that flag
// to itself), so the image is cached by generation. Layout as QCustomPlot's own: one pixel per
// cell, value index 0 on the bottom scanline (draw() mirrors for a reversed axis), and small maps
// magnified without smoothing so that no renderer blurs them.
void CellImagePlottable::updateMapImage() {
    mMapImageInvalidated = false;
    if (drawn_ == generation_ && !mMapImage.isNull()) return;
    drawn_ = generation_;
    QCPColorMapData* d = data();  // cell() is not const in QCustomPlot 2.1
    const int keys = d->keySize(), values = d->valueSize();
    if (keys <= 0 || values <= 0) {
        mMapImage = QImage();
        return;
    }
    QImage image(keys, values, QImage::Format_RGB32);
    for (int v = 0; v < values; ++v) {
        auto* line = reinterpret_cast<QRgb*>(image.scanLine(values - 1 - v));
        for (int k = 0; k < keys; ++k) line[k] = colormapColor(colormap_, scale_.position(d->cell(k, v))).rgb();
    }
    const int fk = 1 + 100 / keys, fv = 1 + 100 / values;
    mMapImage = fk > 1 || fv > 1 ? image.scaled(keys * fk, values * fv, Qt::IgnoreAspectRatio, Qt::FastTransformation)
                                 : image;
}
