#include "panels/imageinput.h"

#include <QFileInfo>
#include <QHBoxLayout>
#include <QImageReader>
#include <QLabel>
#include <QPixmap>
#include <QPushButton>
#include <QVBoxLayout>

QImage readImageFile(const QString& path, QString* error) {
    try {
        return decodeImageFile(path);
    } catch (const ImageFileError& e) {
        if (error) *error = QObject::tr("%1: cannot read the image (%2)").arg(path, QString::fromStdString(e.reason()));
    }
    return {};
}

bool isImageFile(const QString& path) {
    const QFileInfo info(path);
    if (!info.isFile()) return false;
    return QImageReader::supportedImageFormats().contains(info.suffix().toLower().toLatin1());
}

QString imageFileFilter() {
    QStringList patterns;
    for (const QByteArray& format : QImageReader::supportedImageFormats())
        patterns << QStringLiteral("*.") + QString::fromLatin1(format);
    return QObject::tr("Images (%1);;All files (*)").arg(patterns.join(QLatin1Char(' ')));
}

ImageInputBar::ImageInputBar(QWidget* parent) : QWidget(parent) {
    open_ = new QPushButton(tr("Open image…"));
    open_->setObjectName(QStringLiteral("openImageButton"));
    open_->setToolTip(
            tr("Choose a PNG or JPEG file (or drop one on the window); the model resizes and normalises it."));
    name_ = new QLabel;
    name_->setObjectName(QStringLiteral("imageLabel"));
    name_->setWordWrap(true);
    thumbnail_ = new QLabel;
    thumbnail_->setObjectName(QStringLiteral("imageThumbnail"));
    thumbnail_->setFixedSize(56, 56);
    thumbnail_->setAlignment(Qt::AlignCenter);
    auto* text = new QVBoxLayout;
    text->addWidget(open_);
    text->addWidget(name_);
    auto* row = new QHBoxLayout(this);
    row->setContentsMargins(0, 0, 0, 0);
    row->addLayout(text, 1);
    row->addWidget(thumbnail_);
    connect(open_, &QPushButton::clicked, this, &ImageInputBar::openRequested);
    clearImage();
}

void ImageInputBar::setImage(const QString& path, const QImage& image) {
    name_->setText(tr("%1 (%2 × %3)").arg(QFileInfo(path).fileName()).arg(image.width()).arg(image.height()));
    name_->setToolTip(path);
    thumbnail_->setPixmap(
            QPixmap::fromImage(image.scaled(thumbnail_->size(), Qt::KeepAspectRatio, Qt::SmoothTransformation)));
}

void ImageInputBar::clearImage() {
    name_->setText(tr("<i>No image: open one or drop it on the window.</i>"));
    name_->setToolTip(QString());
    thumbnail_->clear();
}
