// OutputChangeView: how an intervention (propagated temperature, masked heads) changed the
// model's output, as core's compareOutputs reports it: next-token top-k before and after with
// KL(original ‖ changed), class probabilities before and after, the two generated sequences, or
// (encoders without a head) the cosine distance of the final hidden states.
// Display only; every number comes from attnscope::OutputChange.
#pragma once

#include "attnscope/lab/interventions.h"

#include <QWidget>

class QLabel;

class OutputChangeView : public QWidget {
    Q_OBJECT
public:
    explicit OutputChangeView(QWidget* parent = nullptr);

    // what: the intervention in words; ms: how long the re-run took.
    void showChange(const attnscope::OutputChange& change, const QString& what, double ms);
    void showPending(const QString& what);
    void clear();
    QString text() const;  // the shown text (plain), for tests
    bool hasChange() const { return hasChange_; }
    const attnscope::OutputChange& change() const { return change_; }

private:
    QLabel* label_ = nullptr;
    attnscope::OutputChange change_;
    bool hasChange_ = false;
};
