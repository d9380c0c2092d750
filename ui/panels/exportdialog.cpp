#include "panels/exportdialog.h"

#include "figure/gridfigure.h"
#include "state/recentfiles.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace {

const QString kFormats[] = {QStringLiteral("pdf"), QStringLiteral("svg"), QStringLiteral("png")};

}  // namespace

ExportDialog::ExportDialog(Figure figure, const QString& suggestedPath, QWidget* parent)
    : QDialog(parent), figure_(std::move(figure)), figures_{figure_}, pages_(1), suffixes_{QString()} {
    setObjectName(QStringLiteral("exportDialog"));
    setWindowTitle(tr("Export figure"));
    setAttribute(Qt::WA_DeleteOnClose);

    path_ = new QLineEdit;
    path_->setObjectName(QStringLiteral("exportPath"));
    auto* browse = new QPushButton(tr("Browse…"));
    auto* pathRow = new QHBoxLayout;
    pathRow->addWidget(path_, 1);
    pathRow->addWidget(browse);

    format_ = new QComboBox;
    format_->setObjectName(QStringLiteral("exportFormat"));
    format_->addItem(tr("PDF (vector, fonts embedded)"), kFormats[0]);
    format_->addItem(tr("SVG (vector)"), kFormats[1]);
    format_->addItem(tr("PNG (raster, dpi stored)"), kFormats[2]);

    preset_ = new QComboBox;
    preset_->setObjectName(QStringLiteral("widthPreset"));
    preset_->addItem(tr("One column (3.25 in)"), kOneColumnIn);
    preset_->addItem(tr("Two columns (6.75 in)"), kTwoColumnIn);
    preset_->addItem(tr("Custom"), 0.0);
    width_ = new QDoubleSpinBox;
    width_->setObjectName(QStringLiteral("widthSpin"));
    width_->setRange(kMinFigureWidthIn, kMaxFigureWidthIn);
    width_->setDecimals(2);
    width_->setSingleStep(0.25);
    width_->setSuffix(tr(" in"));
    dpi_ = new QSpinBox;
    dpi_->setObjectName(QStringLiteral("dpiSpin"));
    dpi_->setRange(kMinFigureDpi, kMaxFigureDpi);
    dpi_->setSingleStep(50);
    auto* widthRow = new QHBoxLayout;
    widthRow->addWidget(preset_, 1);
    widthRow->addWidget(width_);

    preview_ = new QLabel;
    preview_->setObjectName(QStringLiteral("exportPreview"));
    preview_->setAlignment(Qt::AlignCenter);
    preview_->setMinimumSize(360, 300);
    preview_->setFrameShape(QFrame::StyledPanel);
    size_ = new QLabel;
    size_->setObjectName(QStringLiteral("exportSize"));
    error_ = new QLabel;
    error_->setObjectName(QStringLiteral("exportError"));
    error_->setWordWrap(true);
    error_->setStyleSheet(QStringLiteral("color: #b00020"));
    error_->setVisible(false);

    choice_ = new QComboBox;
    choice_->setObjectName(QStringLiteral("figureChoice"));
    choice_->addItem(tr("The map on screen"));
    choiceLabel_ = new QLabel(tr("Figure:"));
    choice_->setVisible(false);
    choiceLabel_->setVisible(false);

    auto* form = new QFormLayout;
    form->addRow(choiceLabel_, choice_);
    form->addRow(tr("File:"), pathRow);
    form->addRow(tr("Format:"), format_);
    form->addRow(tr("Width:"), widthRow);
    form->addRow(tr("Resolution (PNG):"), dpi_);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Save | QDialogButtonBox::Cancel);
    buttons->setObjectName(QStringLiteral("exportButtons"));
    auto* column = new QVBoxLayout(this);
    column->addLayout(form);
    column->addWidget(preview_, 1);
    column->addWidget(size_);
    column->addWidget(error_);
    column->addWidget(buttons);

    QSettings settings;
    // Several panels side by side need the width of two columns.
    const double fallback = figure_.panels.size() > 1 ? kTwoColumnIn : kOneColumnIn;
    width_->setValue(settings.value(figure_.panels.size() > 1 ? QStringLiteral("export/widthInPanels")
                                                              : QStringLiteral("export/widthIn"),
                                    fallback)
                             .toDouble());
    dpi_->setValue(settings.value(QStringLiteral("export/dpi"), 300).toInt());
    setWidthInches(width_->value());
    path_->setText(suggestedPath);
    syncFormat();

    connect(browse, &QPushButton::clicked, this, &ExportDialog::browse);
    connect(path_, &QLineEdit::textChanged, this, &ExportDialog::syncFormat);
    connect(format_, &QComboBox::activated, this, [this] {
        QFileInfo info(path_->text());
        const QString base = info.path() + QLatin1Char('/') + info.completeBaseName();
        path_->setText(QDir::cleanPath(base + QLatin1Char('.') + format_->currentData().toString()));
    });
    connect(preset_, &QComboBox::activated, this, [this] {
        const double w = preset_->currentData().toDouble();
        if (w > 0) width_->setValue(w);
        width_->setEnabled(w <= 0);
    });
    connect(choice_, &QComboBox::currentIndexChanged, this, &ExportDialog::chooseFigure);
    connect(width_, &QDoubleSpinBox::valueChanged, this, &ExportDialog::updatePreview);
    connect(dpi_, &QSpinBox::valueChanged, this, &ExportDialog::updatePreview);
    connect(buttons, &QDialogButtonBox::accepted, this, [this] {
        if (exportNow()) accept();
    });
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    updatePreview();
}

void ExportDialog::resizeEvent(QResizeEvent* event) {
    QDialog::resizeEvent(event);
    updatePreview();  // the preview fits the label's new size
}

void ExportDialog::addPages(const QString& name, std::vector<Figure> pages, const QString& suffix) {
    if (pages.empty()) return;
    addFigure(name, pages.front(), suffix);
    pages_.back() = std::move(pages);
}

void ExportDialog::addFigure(const QString& name, Figure figure, const QString& suffix) {
    figures_.push_back(std::move(figure));
    pages_.emplace_back();
    suffixes_ << suffix;
    choice_->addItem(name);
    choice_->setVisible(true);
    choiceLabel_->setVisible(true);
}

void ExportDialog::setPainted(PaintedFigure figure) {
    painted_ = std::move(figure);
    updatePreview();
}

void ExportDialog::setFigureIndex(int index) { choice_->setCurrentIndex(index); }
int ExportDialog::figureIndex() const { return choice_->currentIndex(); }

// The chosen figure at the dialog's width; the file name's suffix follows the choice.
void ExportDialog::chooseFigure(int index) {
    if (index < 0 || index >= int(figures_.size())) return;
    const QString oldSuffix = suffixes_[chosen_];
    chosen_ = index;
    figure_ = figures_[std::size_t(index)];
    QFileInfo info(path_->text());
    QString base = info.completeBaseName();
    if (!oldSuffix.isEmpty() && base.endsWith(oldSuffix)) base.chop(oldSuffix.size());
    path_->setText(QDir::cleanPath(info.path() + QLatin1Char('/') + base + suffixes_[index] + QLatin1Char('.') +
                                   info.suffix()));
    updatePreview();
}

void ExportDialog::setPath(const QString& path) { path_->setText(path); }

void ExportDialog::setWidthInches(double inches) {
    width_->setValue(inches);
    int preset = 2;
    for (int i = 0; i < 2; ++i)
        if (std::abs(preset_->itemData(i).toDouble() - inches) < 1e-9) preset = i;
    preset_->setCurrentIndex(preset);
    width_->setEnabled(preset == 2);
}

void ExportDialog::setDpi(int dpi) { dpi_->setValue(dpi); }
QString ExportDialog::path() const { return path_->text(); }
double ExportDialog::widthInches() const { return width_->value(); }
int ExportDialog::dpi() const { return dpi_->value(); }

void ExportDialog::browse() {
    const QString chosen =
            QFileDialog::getSaveFileName(this, tr("Export figure"), path_->text(), tr("Figures (*.pdf *.svg *.png)"));
    if (!chosen.isEmpty()) path_->setText(chosen);
}

void ExportDialog::syncFormat() {
    const auto format = figureFormatFor(path_->text());
    if (format) format_->setCurrentIndex(int(*format));
    dpi_->setEnabled(!format || *format == FigureFormat::Png);
    updatePreview();
}

// The figure at screen resolution, scaled to fit, and its physical and pixel size.
void ExportDialog::updatePreview() {
    figure_.widthIn = width_->value();
    if (figure_.columns > 0) figure_.columns = gridColumns(int(figure_.panels.size()), figure_.widthIn);
    try {
        const QSizeF pt = painted_ ? painted_.size(figure_.widthIn * 72.0) : figureSizePoints(figure_);
        // Rendered at twice the label's size and scaled down: the preview shows the whole figure.
        const QSize box = preview_->contentsRect().size() - QSize(8, 8);
        const double fit = std::min(box.width() / pt.width(), box.height() / pt.height()) * 72.0;
        const int dpi = std::clamp(int(2 * fit), kMinFigureDpi, kMaxFigureDpi);
        const QImage image = painted_ ? renderPainted(pt, painted_.paint, dpi) : renderFigure(figure_, dpi);
        preview_->setPixmap(QPixmap::fromImage(image.scaled(box, Qt::KeepAspectRatio, Qt::SmoothTransformation)));
        const auto format = figureFormatFor(path_->text());
        QString text = tr("%1 × %2 in").arg(pt.width() / 72, 0, 'f', 2).arg(pt.height() / 72, 0, 'f', 2);
        if (format == FigureFormat::Png)
            text += tr(" · %1 × %2 px at %3 dpi")
                            .arg(std::lround(figure_.widthIn * dpi_->value()))
                            .arg(std::lround(pt.height() / 72 * dpi_->value()))
                            .arg(dpi_->value());
        size_->setText(text);
    } catch (const std::exception& e) {
        size_->setText(QString::fromUtf8(e.what()));
    }
}

bool ExportDialog::exportNow() {
    figure_.widthIn = width_->value();
    if (figure_.columns > 0) figure_.columns = gridColumns(int(figure_.panels.size()), figure_.widthIn);
    try {
        if (painted_) {
            writePainted(path_->text(), painted_, figure_.widthIn, dpi_->value());
        } else if (pages_[std::size_t(chosen_)].empty()) {
            writeFigure(figure_, path_->text(), dpi_->value());
        } else {
            std::vector<Figure> pages = pages_[std::size_t(chosen_)];
            for (Figure& page : pages) {
                page.widthIn = figure_.widthIn;
                if (page.columns > 0) page.columns = figure_.columns;
            }
            writeFigurePages(pages, path_->text());
        }
    } catch (const std::exception& e) {
        error_->setText(QString::fromUtf8(e.what()));
        error_->setVisible(true);
        return false;
    }
    QSettings settings;
    settings.setValue(figure_.panels.size() > 1 ? QStringLiteral("export/widthInPanels")
                                                : QStringLiteral("export/widthIn"),
                      width_->value());
    settings.setValue(QStringLiteral("export/dpi"), dpi_->value());
    recent::rememberFolder(QStringLiteral("export"), path_->text());  // the next export starts there
    error_->setVisible(false);
    emit exported(path_->text());
    return true;
}
