// ImageOverlayPanel: the image view (ImageOverlayView) with its settings: what the overlay shows
// (the [CLS] row of the shown head, the layer's mean, or the rollout with vit-explain's head
// fusion and discard ratio), opacity, colour map, flat or smooth patches, the grid, which row
// (a clicked patch's, or [CLS] again) and Export figure…. Settings that change the numbers emit
// overlayWanted() (the window asks core again); the look only redraws what it has.
#pragma once

#include "figure/overlayfigure.h"

#include "attnscope/analysis/overlay.h"

#include <QWidget>

#include <string>
#include <vector>

class ImageOverlayView;
class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QSlider;

class ImageOverlayPanel : public QWidget {
    Q_OBJECT
public:
    explicit ImageOverlayPanel(QWidget* parent = nullptr);

    ImageOverlayView* view() const { return view_; }
    QComboBox* sourceCombo() const { return source_; }
    QComboBox* fusionCombo() const { return fusion_; }
    QDoubleSpinBox* discardSpin() const { return discard_; }
    QSlider* opacitySlider() const { return opacity_; }
    QComboBox* colormapCombo() const { return colormap_; }
    QCheckBox* smoothCheck() const { return smooth_; }
    QCheckBox* gridCheck() const { return grid_; }
    QCheckBox* patchesOnlyCheck() const { return patchesOnly_; }
    QPushButton* clsButton() const { return cls_; }
    QPushButton* exportButton() const { return export_; }

    attnscope::OverlaySource source() const;
    // Whether the model is an image–text one (CLIP, SigLIP): only then can the overlay show each
    // patch's contribution to the image–text logit; otherwise that choice is greyed out (and left).
    void setSimilarityAvailable(bool available);
    attnscope::HeadFusion fusion() const;
    double discardRatio() const;
    // The token whose row is shown (0 = [CLS] until a patch is clicked).
    int query() const { return query_; }
    void setQuery(int token);
    // The trace's token labels: a row that is not a patch is named by its label ([CLS], DeiT's
    // [DIST], a DINOv2 register).
    void setTokenLabels(const std::vector<std::string>& labels);

    // Shows core's overlay over image with the panel's look; caption above it.
    void showOverlay(const attnscope::PatchOverlay& overlay, const QImage& image, const QString& caption);
    void showMessage(const QString& message);
    const attnscope::PatchOverlay& overlay() const { return overlay_; }
    // The picture as drawn now (what the figure exports).
    OverlayPicture picture() const;

signals:
    void overlayWanted();
    void exportRequested();

private:
    void redraw();
    void updateEnabled();

    ImageOverlayView* view_ = nullptr;
    QComboBox* source_ = nullptr;
    QComboBox* fusion_ = nullptr;
    QDoubleSpinBox* discard_ = nullptr;
    QSlider* opacity_ = nullptr;
    QComboBox* colormap_ = nullptr;
    QCheckBox* smooth_ = nullptr;
    QCheckBox* grid_ = nullptr;
    QCheckBox* patchesOnly_ = nullptr;
    QPushButton* cls_ = nullptr;
    QPushButton* export_ = nullptr;
    QLabel* rowLabel_ = nullptr;
    attnscope::PatchOverlay overlay_;
    QImage image_;
    int query_ = 0;
    std::vector<std::string> labels_;
};
