// DockBuilder: places the window's widgets. The central tabs (Explore: the overview grid beside
// the heat map, which takes most of the space; Compare; the training curves and kinds reports)
// and the Controls dock first; then each controller is made with the state and the services it
// needs, its widgets placed in a tab or a slim, closable dock on the right (tabbed with the
// Lab's), and its few outward signals (status lines, errors) routed to the window.
#pragma once

#include <QObject>
#include <QString>

struct WindowParts;
class QDockWidget;
class QWidget;

class DockBuilder : public QObject {
    Q_OBJECT
public:
    DockBuilder(WindowParts& parts, QObject* parent);  // parts must outlive it

    void buildCentral();  // the tabs, the overview and heat map, the Controls dock, the job widgets
    // The controllers and their docks and tabs, in this order (each after the map presenter, so
    // that on a shared signal the window's maps react first).
    void buildLab();
    void buildImageViews();
    void buildViews();
    void buildGenerate();
    void buildCorpus();
    void buildCausal();
    void buildLong();
    // The first start's sizes: most of the screen, never more than it; slim docks.
    void finishLayout();

    // Shows a corpus result folder in the Corpus tab; false (a message there) when unreadable.
    bool openCorpusResult(const QString& dir);

private:
    QDockWidget* addPanelDock(QWidget* content, const QString& title, const QString& name, bool scroll);

    WindowParts& p_;
};
