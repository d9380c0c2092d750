// CompareModelsDialog: File > Compare with Another Model…: the open model (A) and another one (B:
// a GGUF file, a safetensors folder, a hub id, ollama:NAME; typed, or picked in the model
// browser) run on the input A last ran on, compared head by head by core
// (lab/model_comparison.h): the layer × head map of KL(A ‖ B) (figure/comparisonfigure.h, the
// figure `attnscope-cli compare-models` writes), the output change in one line, and Save Figure….
// B is loaded and both models run on a worker (OtherModelsService); B is dropped when the
// comparison is done.
#pragma once

#include "figure/figure.h"
#include "services/othermodelsservice.h"

#include "attnscope/lab/model_comparison.h"

#include <QDialog>

#include <memory>
#include <optional>
#include <vector>

namespace attnscope {
class Model;
}

class QLabel;
class QLineEdit;
class QPushButton;

class CompareModelsDialog : public QDialog {
    Q_OBJECT
public:
    CompareModelsDialog(std::shared_ptr<const attnscope::Model> a, const QString& nameA, std::vector<std::int64_t> ids,
                        QWidget* parent = nullptr);

    // Loads spec (anything the model picker opens) and compares; comparisonDone() when done.
    void compareWith(const QString& spec);
    const std::optional<attnscope::ModelComparison>& result() const { return result_; }
    QString error() const { return error_; }
    bool isBusy() const { return service_->isComparing(); }
    QImage figureImage() const { return image_; }

signals:
    void comparisonDone();

private:
    void browse();
    void saveFigure();
    void showResult(const attnscope::ModelComparison& c, const QString& nameB);

    std::shared_ptr<const attnscope::Model> a_;
    QString nameA_, nameB_;
    std::vector<std::int64_t> ids_;
    QLineEdit* spec_;
    QPushButton* run_;
    QPushButton* save_;
    QLabel* status_;
    QLabel* figure_;
    QLabel* summary_;
    std::optional<attnscope::ModelComparison> result_;
    QString error_;
    QImage image_;
    OtherModelsService* service_;
};
