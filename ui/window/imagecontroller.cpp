#include "window/imagecontroller.h"

#include "figure/overlayfigure.h"
#include "panels/controlpanel.h"
#include "panels/imageoverlaypanel.h"
#include "services/session.h"
#include "views/imageoverlay.h"
#include "window/labcontroller.h"
#include "window/mainwindow.h"

#include "attnscope/io/input.h"
#include "attnscope/runtime/error.h"
#include "attnscope/models/model.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QTabWidget>

#include <algorithm>
#include <cmath>

namespace {

QImage toQImage(const attnscope::RgbImage& rgb) {
    QImage image(rgb.width, rgb.height, QImage::Format_RGB888);
    for (int y = 0; y < rgb.height; ++y)
        std::copy_n(rgb.pixels.data() + std::size_t(y) * rgb.width * 3, std::size_t(rgb.width) * 3, image.scanLine(y));
    return image;
}

}  // namespace

ImageController::ImageController(MainWindow* window, std::function<void(const QString&, const QString&)> onError)
    : QObject(window), window_(window), onError_(std::move(onError)) {
    panel_ = new ImageOverlayPanel;
    panel_->setObjectName(QStringLiteral("imageOverlayPanel"));
    service_ = new OverlayService(this);
    connect(service_, &OverlayService::overlayReady, this, &ImageController::onOverlay);
    connect(panel_, &ImageOverlayPanel::overlayWanted, this, &ImageController::refresh);
    connect(panel_, &ImageOverlayPanel::exportRequested, this, &ImageController::chooseExportFile);
    Session* session = window->session();
    connect(session, &Session::modelLoaded, this, [this] {
        panel_->setQuery(0);
        image_ = {};
        shown_ = {};
        service_->cancel();
        refresh();
    });
    connect(session, &Session::traceReady, this, [this] {
        if (const auto image = window_->image(); image && window_->session()->model() && window_->session()->model()->info().imageInput)
            image_ = toQImage(*image);
        refresh();  // the window asked for the new trace's maps before this image was known here
    });
    connect(window, &MainWindow::selectionChanged, this, &ImageController::refresh);
    connect(window->tabs(), &QTabWidget::currentChanged, this, &ImageController::refresh);
}

bool ImageController::shownNow() const { return window_->tabs()->currentWidget() == panel_; }

void ImageController::refresh() {
    if (!shownNow()) return;
    const auto model = window_->session()->model();
    if (!model || !model->info().imageInput) {
        service_->cancel();
        panel_->showMessage(tr("This model reads tokens, not images. Attention over the image needs an image model: open a "
                               "ViT folder (config.json with model_type vit) and an image (Ctrl+I)."));
        return;
    }
    const TracePtr trace = window_->lab()->shownTrace();
    const MapKey key = window_->currentKey();
    if (!trace || key.block < 0 || image_.isNull()) {
        panel_->showMessage(tr("Open an image (Ctrl+I, or drop one on the window) to run %1 on it.")
                                .arg(QFileInfo(window_->session()->modelSpec()).fileName()));
        return;
    }
    attnscope::OverlayOptions o;
    o.source = panel_->source();
    o.layer = key.layer;
    o.head = key.head;
    o.query = panel_->query();
    o.map.temperature = window_->lab()->displayTemperature(window_->sliderTemperature());
    o.rollout.discardRatio = panel_->discardRatio();
    o.rollout.fusion = panel_->fusion();
    service_->requestOverlay(trace, key.block, o);
}

QString ImageController::describe(const OverlayResult& r) const {
    const auto& o = r.options;
    QString row = QStringLiteral("[CLS]");
    const auto& pos = r.overlay.grid.positions;
    if (const auto it = std::find(pos.begin(), pos.end(), o.query); it != pos.end())
        row = QStringLiteral("r%1c%2").arg(int(it - pos.begin()) / r.overlay.grid.cols).arg(int(it - pos.begin()) % r.overlay.grid.cols);
    else if (o.query != 0)
        row = tr("token %1").arg(o.query);
    QString what;
    switch (o.source) {
        case attnscope::OverlaySource::Head: what = tr("layer %1 · head %2").arg(o.layer).arg(o.head); break;
        case attnscope::OverlaySource::LayerMean: what = tr("layer %1 · mean of the heads").arg(o.layer); break;
        case attnscope::OverlaySource::Rollout:
            what = tr("rollout of layers 0–%1 · %2 fusion · discard %3")
                       .arg(o.layer)
                       .arg(QString::fromLatin1(attnscope::fusionName(o.rollout.fusion)))
                       .arg(o.rollout.discardRatio, 0, 'g', 3);
            break;
    }
    QString text = tr("%1 row · %2").arg(row, what);
    if (std::abs(o.map.temperature - 1.0) > 1e-9) text += QStringLiteral(" · T = %1").arg(o.map.temperature, 0, 'g', 3);
    return text;
}

void ImageController::onOverlay(const OverlayResult& r) {
    if (r.trace != window_->lab()->shownTrace()) return;  // an older run's
    if (!r.error.isEmpty()) {
        shown_ = {};
        panel_->showMessage(r.error);
        return;
    }
    shown_ = r;
    const QString caption = describe(r) + QLatin1Char('\n') +
                            tr("largest patch weight %1 · weight on the other tokens ([CLS]) %2 · click a patch to show its row")
                                .arg(r.overlay.maxPatch, 0, 'g', 3)
                                .arg(r.overlay.otherWeight, 0, 'g', 3);
    panel_->showOverlay(r.overlay, image_, caption);
}

OverlayFigure ImageController::figure() const {
    OverlayFigure f;
    f.picture = panel_->picture();
    const QString spec = window_->session()->modelSpec();
    f.title = QFileInfo(spec).fileName() + QStringLiteral("\n") + (shown_.trace ? describe(shown_) : QString());
    f.colorbarLabel = shown_.options.source == attnscope::OverlaySource::Rollout ? tr("rollout weight") : tr("attention weight");
    return f;
}

bool ImageController::exportFigure(const QString& path) {
    try {
        if (!shown_.trace) throw attnscope::Error("there is no overlay to export yet");
        writeOverlayFigure(figure(), path);
        window_->showStatus(tr("Wrote %1.").arg(QFileInfo(path).fileName()), 5000);
        return true;
    } catch (const std::exception& e) {
        onError_(tr("The figure could not be written."), QString::fromUtf8(e.what()));
        return false;
    }
}

void ImageController::chooseExportFile() {
    auto* dialog = new QFileDialog(window_, tr("Export Attention over the Image"));
    dialog->setObjectName(QStringLiteral("overlayExportDialog"));
    dialog->setAcceptMode(QFileDialog::AcceptSave);
    dialog->setNameFilters({tr("PDF (*.pdf)"), tr("SVG (*.svg)"), tr("PNG (*.png)")});
    dialog->setDefaultSuffix(QStringLiteral("pdf"));
    dialog->selectFile(QFileInfo(window_->session()->modelSpec()).fileName() + QStringLiteral("-image.pdf"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QFileDialog::fileSelected, this, [this](const QString& path) { exportFigure(path); });
    dialog->open();
}
