// CausalController: the Causal tab (issue 32) kept in step with the window. It makes the tab's
// panel (CausalPanel, which the window places) and asks CausalService for the clean run's logit
// lens, direct logit attribution of the chosen answer and activation patching; it draws their
// results as figures (figure/causalfigure.h) and exports them through the export dialog.
//
// Results follow the window's state, never stale: another model clears them; a new main input
// clears them while the clean box follows it (empty), and runs the lens again when one was
// shown; changing the clean input, ids mode or P clears them; changing T or T2 recomputes DLA
// and clears patching. The tab's actions are disabled, with the reason shown and as their
// tooltip, for models the analyses do not apply to (encoders, encoder-decoders, image models,
// the built-in models, attention files). Clicking a head in the DLA or patching map selects that
// head in the ViewState and shows the Explore tab.
#pragma once

#include "figure/workspace.h"
#include "services/causalservice.h"

#include <QObject>

class CausalPanel;
class Session;
class ViewState;
class ExportDialog;

class CausalController : public QObject {
    Q_OBJECT
public:
    // state and session outlive the controller. The panel is made without a parent: the window
    // places it and owns it from then on.
    CausalController(ViewState* state, Session* session, QObject* parent);
    ~CausalController() override;

    CausalPanel* panel() const { return panel_; }
    CausalService* service() const { return service_; }

    // Run: the clean input's forward, its lens and the top predictions at P, then DLA.
    void run();
    // Patch: activation patching with the panel's settings (progress and Cancel in the panel).
    void patch();
    // Stops and waits for every worker (window shutdown, tests).
    void shutdown();

    // Whether the analyses apply to the open model, and why not.
    bool applicable() const { return applicable_; }
    QString refusal() const { return refusal_; }

    // The tab's settings as the panel shows them; they are the ViewState's causal section,
    // which the panel writes and follows (a change there clears the results).
    Workspace::Causal settings() const;

    // The latest results shown (null / empty before any); the traces they are of.
    const LensResult& lensResult() const { return lens_; }
    const DlaResult& dlaResult() const { return dla_; }
    const PatchJobResult& patchResult() const { return patch_; }

    // The export dialog for one of the three figures (0 lens, 1 DLA, 2 patching); null when it
    // shows nothing.
    ExportDialog* exportFigure(int which);

signals:
    void status(const QString& message, int timeoutMs);

private:
    void onModelLoaded(const attnscope::ModelInfo& info);
    void onTraceReady();
    void onTabChanged();
    void onLens(const LensResult& r);
    void onDla(const DlaResult& r);
    void onPatch(const PatchJobResult& r);
    void requestDla();
    void clearResults(bool lens, bool dla, bool patch);
    void setApplicable(bool applicable, const QString& reason);
    void openHead(int layer, int head);
    void followSettings(const Workspace::Causal& s);  // the state's section onto the panel
    CausalInput cleanInput() const;
    bool idsMode() const;  // typed inputs are token ids (ticked, or the model has no tokenizer)
    bool tabShown() const;

    ViewState* state_;
    Session* session_;
    CausalService* service_ = nullptr;
    CausalPanel* panel_ = nullptr;
    bool applicable_ = false;
    QString refusal_;
    bool refusedByModel_ = false;  // decided from the model's info (else from its first trace)
    LensResult lens_;
    DlaResult dla_;
    PatchJobResult patch_;
    std::optional<std::int64_t> wantedAnswer_, wantedWrong_;  // kept across runs (and from a workspace)
};
