// CorpusController: the Corpus tab kept in step with the window. It makes the tab's panel
// (CorpusPanel, which the window places) and runs the corpus file the user chose through the
// open model on CorpusService, feeding the panel its progress and its end; the panel's Cancel
// stops the run (resumable), and another model or an attention file ends it (the old model's
// work is dropped, the panel says so).
#pragma once

#include <QObject>
#include <QString>

class CorpusPanel;
class CorpusService;
class Session;

class CorpusController : public QObject {
    Q_OBJECT
public:
    // session outlives the controller. The panel is made without a parent: the window places it
    // and owns it from then on.
    CorpusController(Session* session, QObject* parent);
    ~CorpusController() override;

    CorpusPanel* panel() const { return panel_; }
    CorpusService* service() const { return service_; }

    // Runs the corpus file data through the session's model into outDir (what the panel's
    // "Run corpus…" asks for once both are chosen); failed() when no model is open.
    void run(const QString& data, const QString& outDir);
    // Stops and waits for the run (window shutdown, tests).
    void shutdown();

signals:
    void failed(const QString& title, const QString& message);
    void status(const QString& message, int timeoutMs);

private:
    void onModelChanged();

    Session* session_;
    CorpusPanel* panel_;
    CorpusService* service_;
};
