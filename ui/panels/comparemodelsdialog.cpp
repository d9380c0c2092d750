#include "panels/comparemodelsdialog.h"

#include "figure/comparisonfigure.h"
#include "panels/modelbrowser.h"
#include "panels/modelpicker.h"
#include "state/recentfiles.h"

#include "attnscope/models/model_catalog.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPixmap>
#include <QPushButton>
#include <QVBoxLayout>

CompareModelsDialog::CompareModelsDialog(std::shared_ptr<const attnscope::Model> a, const QString& nameA,
                                         std::vector<std::int64_t> ids, QWidget* parent)
    : QDialog(parent), a_(std::move(a)), nameA_(nameA), ids_(std::move(ids)), service_(new OtherModelsService(this)) {
    setObjectName(QStringLiteral("compareModelsDialog"));
    setWindowTitle(tr("Compare %1 with Another Model").arg(nameA_));
    spec_ = new QLineEdit(this);
    spec_->setObjectName(QStringLiteral("compareModelSpec"));
    spec_->setPlaceholderText(tr("A GGUF file, a model folder, org/name, ollama:NAME…"));
    auto* browseButton = new QPushButton(tr("Browse…"), this);
    run_ = new QPushButton(tr("Compare"), this);
    run_->setObjectName(QStringLiteral("compareModelsRun"));
    run_->setDefault(true);
    auto* row = new QHBoxLayout;
    row->addWidget(new QLabel(tr("%1 (A) with B:").arg(nameA_), this));
    row->addWidget(spec_, 1);
    row->addWidget(browseButton);
    row->addWidget(run_);

    status_ = new QLabel(tr("Both models run on the %1 tokens %2 last ran on; each head's map is compared as the "
                            "mean over query rows of KL(A ‖ B).")
                                 .arg(ids_.size())
                                 .arg(nameA_),
                         this);
    status_->setObjectName(QStringLiteral("compareModelsStatus"));
    status_->setWordWrap(true);
    figure_ = new QLabel(this);
    figure_->setAlignment(Qt::AlignCenter);
    figure_->setMinimumSize(420, 300);
    summary_ = new QLabel(this);
    summary_->setObjectName(QStringLiteral("compareModelsSummary"));
    summary_->setWordWrap(true);
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    save_ = new QPushButton(tr("Save Figure…"), this);
    save_->setEnabled(false);
    auto* bottom = new QHBoxLayout;
    bottom->addWidget(summary_, 1);
    bottom->addWidget(save_);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(row);
    layout->addWidget(status_);
    layout->addWidget(figure_, 1);
    layout->addLayout(bottom);
    resize(720, 620);

    connect(browseButton, &QPushButton::clicked, this, &CompareModelsDialog::browse);
    connect(run_, &QPushButton::clicked, this, [this] { compareWith(spec_->text().trimmed()); });
    connect(spec_, &QLineEdit::returnPressed, this, [this] { compareWith(spec_->text().trimmed()); });
    connect(save_, &QPushButton::clicked, this, &CompareModelsDialog::saveFigure);
}

void CompareModelsDialog::compareWith(const QString& spec) {
    if (spec.isEmpty()) {
        status_->setText(tr("Name the model to compare with (B)."));
        return;
    }
    spec_->setText(spec);
    result_.reset();
    error_.clear();
    run_->setEnabled(false);
    status_->setText(tr("Loading %1 and running both models…").arg(spec));
    service_->compare(a_, ids_, spec, [this, spec](const ModelComparisonOutcome& out) {
        run_->setEnabled(true);
        if (!out.comparison) {
            error_ = out.error;
            status_->setText(tr("Cannot compare with %1: %2").arg(spec, out.error));
        } else {
            result_ = *out.comparison;
            showResult(*out.comparison, spec.startsWith(QLatin1String("ollama:")) ? spec : QFileInfo(spec).fileName());
        }
        emit comparisonDone();
    });
}

void CompareModelsDialog::showResult(const attnscope::ModelComparison& c, const QString& nameB) {
    nameB_ = nameB.isEmpty() ? tr("B") : nameB;
    status_->setText(tr("%1 (A) against %2 (B) on %3 tokens.").arg(nameA_, nameB_).arg(c.tokens));
    summary_->setText(modelComparisonSummary(c));
    Figure f = modelComparisonFigure(c.blocks.front(), nameA_, nameB_);
    f.widthIn = 6.0;
    image_ = renderFigure(f, 100);
    figure_->setPixmap(
            QPixmap::fromImage(image_).scaled(figure_->size(), Qt::KeepAspectRatio, Qt::SmoothTransformation));
    save_->setEnabled(true);
}

void CompareModelsDialog::browse() {
    std::vector<std::string> recents;
    for (const QString& r : ModelPicker::recentFolders()) recents.push_back(r.toStdString());
    std::vector<std::filesystem::path> folders;
    for (const QString& f : ModelBrowser::savedFolders()) folders.emplace_back(f.toStdString());
    auto* browser = new ModelBrowser(attnscope::defaultCatalogSources(recents, folders), this);
    browser->setAttribute(Qt::WA_DeleteOnClose);
    connect(browser, &ModelBrowser::modelChosen, this, &CompareModelsDialog::compareWith);
    browser->open();
}

void CompareModelsDialog::saveFigure() {
    if (!result_) return;
    const QString path = QFileDialog::getSaveFileName(
            this, tr("Save Figure"), recent::lastFolder(QStringLiteral("export")) + QStringLiteral("/kl.pdf"),
            tr("Figures (*.pdf *.svg *.png)"));
    if (path.isEmpty()) return;
    recent::rememberFolder(QStringLiteral("export"), path);
    try {
        writeFigure(modelComparisonFigure(result_->blocks.front(), nameA_, nameB_), path);
        status_->setText(tr("Saved %1").arg(path));
    } catch (const std::exception& e) {
        status_->setText(QString::fromUtf8(e.what()));
    }
}
