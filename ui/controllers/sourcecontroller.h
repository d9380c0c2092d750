// SourceController: the Show selector (panels/sourcepicker.h) kept in step with the ViewState's
// map source and gradient target, and what each source needs from the session:
//   - which sources the model cannot show (services/sourceservice.h: sourceUnavailableReason),
//     set in the state when a model loads and when its trace arrives (disabled with a reason);
//   - the value-weighted and ALTI sources read the values a forward records only on request: the
//     session records them while such a source is shown, and a trace without them is run again
//     (rerunWanted, once per trace);
//   - the gradient sources run a backward pass through the model (SourceService, on the shared
//     model-run pool; a newer trace, target or source supersedes it; errors are the views');
//   - the target choices: the decoder's most likely next tokens, or the classifier's labels.
// shown() is what the views draw; shownChanged() says when it changed.
#pragma once

#include "services/sourceservice.h"

#include <QObject>
#include <QString>

#include <memory>

class Session;
class SourcePicker;
class ViewState;

class SourceController : public QObject {
    Q_OBJECT
public:
    SourceController(ViewState* state, Session* session, SourcePicker* picker, QObject* parent = nullptr);

    // The source the views draw and, for a gradient source, its maps of the current trace (null
    // while computing or after an error: see waitingMessage()).
    ShownSource shown() const;
    // Why the gradient maps are not there yet ("Computing …", or core's error); empty otherwise.
    QString waitingMessage() const { return waiting_; }
    SourcePicker* picker() const { return picker_; }
    SourceService* service() const { return service_; }
    void waitForWorkers();
    // Stops the running gradient job (the window's Cancel); the views say it was cancelled.
    void cancelGradients();

signals:
    void shownChanged();
    // A gradient job started (true) or ended: delivered, failed, cancelled or superseded by none.
    void gradientsBusy(bool busy);
    // The trace lacks what the source needs (the value vectors): run the input again; the
    // session records them now.
    void rerunWanted();

private:
    void onModelLoaded();
    void onTraceReady();
    void onSourceChanged();
    void updateAvailability();
    void updateTargets();
    void requestGradients();
    void onGradients(const GradientsResult& result);
    void updateNote();

    ViewState* state_;
    Session* session_;
    SourcePicker* picker_;
    SourceService* service_;
    std::shared_ptr<const GradientsResult> gradients_;       // the latest delivered, for its trace and target
    std::shared_ptr<const attnscope::Trace> rerunAskedFor_;  // the trace already run again for its values
    QString waiting_;
};
