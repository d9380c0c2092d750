// Image input for image models (ViT): the window's side of figure/imagefile.h (which decodes
// files and gives toRgbImage), and ImageInputBar, the "Open image…" button with the chosen
// file's name, size and a thumbnail.
#pragma once

#include "figure/imagefile.h"

#include <QImage>
#include <QString>
#include <QWidget>

class QLabel;
class QPushButton;

// decodeImageFile for the window: a null image with *error set (naming the file) when it cannot.
QImage readImageFile(const QString& path, QString* error);
// Whether the file's extension is an image format Qt reads (for drops: image vs model folder).
bool isImageFile(const QString& path);
// The file dialog filter: "Images (*.png *.jpg …)".
QString imageFileFilter();

class ImageInputBar : public QWidget {
    Q_OBJECT
public:
    explicit ImageInputBar(QWidget* parent = nullptr);

    QPushButton* openButton() const { return open_; }
    QLabel* nameLabel() const { return name_; }
    // Shows the file and a thumbnail of image.
    void setImage(const QString& path, const QImage& image);
    void clearImage();

signals:
    void openRequested();

private:
    QPushButton* open_ = nullptr;
    QLabel* name_ = nullptr;
    QLabel* thumbnail_ = nullptr;
};
