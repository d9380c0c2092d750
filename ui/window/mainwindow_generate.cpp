// MainWindow, continued: generation. The Generate dock (GeneratePanel) sits with the Lab dock;
// GenerateController runs the model and shows each step through the session, so the window's
// own views follow without knowing about generation.
#include "window/mainwindow.h"

#include "panels/generatepanel.h"
#include "panels/metricspanel.h"
#include "services/session.h"
#include "window/labcontroller.h"
#include "window/generatecontroller.h"
#include "window/modelviewcontroller.h"

#include <QAction>
#include <QDockWidget>
#include <QMenu>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QStatusBar>

void MainWindow::buildGenerate() {
    generate_ = new GenerateController(session_, this);
    auto* scroll = new QScrollArea;
    scroll->setWidget(generate_->panel());
    scroll->setWidgetResizable(true);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    auto* dock = new QDockWidget(tr("Generate"), this);
    dock->setObjectName(QStringLiteral("generateDock"));
    dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable |
                      QDockWidget::DockWidgetClosable);
    dock->setWidget(scroll);
    addDockWidget(Qt::RightDockWidgetArea, dock);
    if (auto* lab = findChild<QDockWidget*>(QStringLiteral("labDock"))) tabifyDockWidget(lab, dock);
    QAction* toggle = dock->toggleViewAction();
    toggle->setText(tr("&Generate Panel"));
    toggle->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_G));
    toggle->setObjectName(QStringLiteral("generatePanelAction"));
    viewMenu()->addAction(toggle);
    connect(generate_, &GenerateController::failed, this,
            [this](const QString& message) { showError(tr("The model could not generate."), message); });
    // Head detectors fill the Metrics table's detector columns for the current model.
    MetricsPanel* metrics = lab_->metrics();
    connect(metrics->detectorsButton(), &QPushButton::clicked, generate_, [this, metrics] {
        metrics->setDetectors({}, tr("Running the detectors…"));
        generate_->startDetectors();
    });
    connect(generate_, &GenerateController::detectorsReady, metrics,
            [this, metrics](const auto& heads, const QString& text) {
                metrics->setDetectors(heads, text);
                if (modelView_) modelView_->setDetectors(heads);  // the Model tab orders and maps by them too
            });
    if (modelView_)
        connect(modelView_, &ModelViewController::detectorsWanted, generate_, [this, metrics] {
            metrics->setDetectors({}, tr("Running the detectors…"));
            generate_->startDetectors();
        });
    connect(session_, &Session::modelLoaded, metrics, [metrics] { metrics->setDetectors({}, {}); });
    connect(generate_, &GenerateController::finished, this, [this, dock] {
        dock->raise();
        statusBar()->showMessage(tr("Generated; step with the slider or ← → in the text."), 5000);
    });
}
