#include "views/temperatureslider.h"

#include <QGridLayout>
#include <QLabel>
#include <QSlider>
#include <QToolButton>

#include <algorithm>
#include <cmath>

double TemperatureSlider::temperatureAt(int position) {
    return std::pow(10.0, (position - kSteps / 2) / double(kSteps / 2));
}

int TemperatureSlider::positionOf(double temperature) {
    const double t = std::clamp(temperature, 0.1, 10.0);
    return int(std::lround(std::log10(t) * (kSteps / 2))) + kSteps / 2;
}

TemperatureSlider::TemperatureSlider(QWidget* parent) : QWidget(parent) {
    slider_ = new QSlider(Qt::Horizontal);
    slider_->setObjectName(QStringLiteral("temperatureSlider"));
    slider_->setRange(0, kSteps);
    slider_->setValue(kSteps / 2);
    slider_->setTickPosition(QSlider::TicksBelow);
    slider_->setTickInterval(kSteps / 2);  // ticks at 0.1, 1 and 10
    slider_->setPageStep(10);
    slider_->setToolTip(tr("Display temperature: softmax(logits / T). 1 is the model's own attention."));
    value_ = new QLabel;
    value_->setObjectName(QStringLiteral("temperatureValue"));
    value_->setMinimumWidth(value_->fontMetrics().horizontalAdvance(QStringLiteral("T = 0.000")));
    reset_ = new QToolButton;
    reset_->setText(QStringLiteral("1"));
    reset_->setToolTip(tr("Back to T = 1 (the model's own attention)"));
    note_ = new QLabel;
    note_->setObjectName(QStringLiteral("temperatureNote"));
    note_->setWordWrap(true);
    note_->setVisible(false);

    auto* marks = new QWidget;
    auto* markRow = new QGridLayout(marks);
    markRow->setContentsMargins(0, 0, 0, 0);
    const QString marksText[] = {QStringLiteral("0.1"), QStringLiteral("1"), QStringLiteral("10")};
    const Qt::Alignment align[] = {Qt::AlignLeft, Qt::AlignHCenter, Qt::AlignRight};
    for (int i = 0; i < 3; ++i) {
        auto* l = new QLabel(marksText[i]);
        QFont f = l->font();
        f.setPointSizeF(f.pointSizeF() * 0.85);
        if (i == 1) f.setBold(true);
        l->setFont(f);
        markRow->addWidget(l, 0, i, align[i]);
    }

    auto* grid = new QGridLayout(this);
    grid->setContentsMargins(0, 0, 0, 0);
    grid->setVerticalSpacing(0);
    grid->addWidget(slider_, 0, 0);
    grid->addWidget(value_, 0, 1);
    grid->addWidget(reset_, 0, 2);
    grid->addWidget(marks, 1, 0);
    grid->addWidget(note_, 2, 0, 1, 3);
    grid->setColumnStretch(0, 1);

    connect(slider_, &QSlider::valueChanged, this, [this] {
        updateLabel();
        emit temperatureChanged(temperature());
    });
    connect(reset_, &QToolButton::clicked, this, [this] { setTemperature(1.0); });
    updateLabel();
}

double TemperatureSlider::temperature() const { return temperatureAt(slider_->value()); }

void TemperatureSlider::setTemperature(double t) { slider_->setValue(positionOf(t)); }

void TemperatureSlider::setApplicable(bool applicable, const QString& reason) {
    slider_->setEnabled(applicable);
    reset_->setEnabled(applicable);
    note_->setText(reason);
    note_->setVisible(!applicable && !reason.isEmpty());
}

void TemperatureSlider::updateLabel() { value_->setText(QStringLiteral("T = %1").arg(temperature(), 0, 'g', 3)); }
