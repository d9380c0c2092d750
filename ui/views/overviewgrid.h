// OverviewGrid: every (layer, head) of one attention block as a thumbnail, layers as rows and
// heads as columns. Clicking a thumbnail selects it (the window's arrow keys move the
// selection too); the selected one is outlined. Ctrl+click and the context menu on a thumbnail
// only ask (headToggleRequested, headContextMenuRequested): what they do is the window's. Heads
// given to setCrossedOut() are dimmed and crossed out (the lab's masked heads). Thumbnails are
// images prepared on a worker (MapService), drawn magnified without smoothing. Layers with a
// sliding window (setLayerWindows) carry a bar and a "w" after their label, so local and
// global layers of Gemma-2/3, GPT-Neo or Mistral read apart at a glance.
//
// Thumbnails never shrink below kMinTile pixels: a grid that does not fit asks for that width
// (minimumSizeHint), and the scroll area around it scrolls. The caption wraps onto as many lines
// as it needs.
//
// The model view (the Model tab) uses the same grid filling its space: setFitToHeight() sizes the
// tiles to the height as well as the width (the whole model visible, as large as it fits);
// setHeadOrder() places each layer's heads in a given order (by a metric), each tile then naming
// its head; setFrameColors() draws a coloured frame around each tile (the head's pattern class).
#pragma once

#include <QColor>
#include <QImage>
#include <QWidget>

#include <utility>
#include <vector>

class OverviewGrid : public QWidget {
    Q_OBJECT
public:
    explicit OverviewGrid(QWidget* parent = nullptr);

    // The grid's shape; clears the images until setImages() brings new ones.
    void setShape(int layers, int heads);
    // Row-major images (index = layer * heads + head) for the current shape.
    void setImages(std::vector<QImage> images);
    void setSelected(int layer, int head);
    // A line shown above the grid (e.g. "decoder block · T = 0.5").
    void setCaption(const QString& caption);
    const QString& caption() const { return caption_; }
    // (layer, head) pairs drawn crossed out; pairs outside the shape are ignored.
    void setCrossedOut(std::vector<std::pair<int, int>> heads);
    const std::vector<std::pair<int, int>>& crossedOut() const { return crossedOut_; }
    // Per layer: its sliding window in keys, 0 = global (BlockInfo::layerWindows); empty = all global.
    void setLayerWindows(std::vector<long long> windows);
    const std::vector<long long>& layerWindows() const { return windows_; }
    // The window of `layer`, 0 when it is global.
    long long layerWindow(int layer) const;
    // Where a layer's label is drawn (for tooltips and tests).
    QRect layerLabelRect(int layer) const;
    // The tooltip at pos (widget coordinates): a tile's layer and head, a layer's window, or the
    // whole caption over the caption line (drawn elided when the grid is narrow); empty = none.
    QString toolTipAt(const QPoint& pos) const;

    // Tiles fit the widget's height too (no scrolling): for a grid placed without a scroll area.
    void setFitToHeight(bool fit);
    bool fitsToHeight() const { return fitHeight_; }
    // Per layer, the heads in the order their tiles are placed (a permutation of 0..heads-1);
    // empty (or a layer's list of the wrong size) = natural order.
    void setHeadOrder(std::vector<std::vector<int>> order);
    const std::vector<std::vector<int>>& headOrder() const { return order_; }
    // The column where (layer, head) is drawn.
    int slotOf(int layer, int head) const;
    // A frame colour per tile (index = layer * heads + head; invalid colours: no frame); empty = none.
    void setFrameColors(std::vector<QColor> colors);
    const std::vector<QColor>& frameColors() const { return frames_; }
    // The size of one thumbnail now, in pixels.
    int tileSize() const { return metricsFor(width()).tile; }
    // The smallest thumbnail drawn (unless fitted to the height), in pixels: legible.
    static constexpr int kMinTile = 24;
    // Where the caption is drawn (all of its wrapped lines), in widget coordinates.
    QRect captionRect() const;

    int layers() const { return layers_; }
    int heads() const { return heads_; }
    int selectedLayer() const { return layer_; }
    int selectedHead() const { return head_; }
    const std::vector<QImage>& images() const { return images_; }
    // Where a thumbnail is drawn, in widget coordinates (for clicks and tests).
    QRect tileRect(int layer, int head) const;
    // The thumbnail under pos (widget coordinates); false when there is none.
    bool tileAt(const QPoint& pos, int& layer, int& head) const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;
    bool hasHeightForWidth() const override { return !fitHeight_; }
    int heightForWidth(int width) const override;

signals:
    // The user clicked a thumbnail.
    void headChosen(int layer, int head);
    // Ctrl+left click on a thumbnail: it does not select it.
    void headToggleRequested(int layer, int head);
    // A context menu (right click) on a thumbnail, at globalPos (screen coordinates).
    void headContextMenuRequested(int layer, int head, const QPoint& globalPos);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void contextMenuEvent(QContextMenuEvent* event) override;
    bool event(QEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    struct Metrics {
        int tile = 0, gap = 0, left = 0, top = 0;
    };
    Metrics metricsFor(int width) const;
    int captionWidth(int width) const;
    bool ordered() const { return !order_.empty(); }

    int layers_ = 0;
    int heads_ = 0;
    int layer_ = 0;
    int head_ = 0;
    QString caption_;
    std::vector<QImage> images_;
    std::vector<std::pair<int, int>> crossedOut_;
    std::vector<long long> windows_;
    bool fitHeight_ = false;
    std::vector<std::vector<int>> order_;
    std::vector<QColor> frames_;
};
