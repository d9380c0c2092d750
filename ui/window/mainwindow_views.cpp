// MainWindow's views dock (ViewsController: line view, neuron view, query–key space): placed
// beside the lab on the right, kept on the window's selection and temperature.
#include "window/mainwindow.h"

#include "panels/controlpanel.h"
#include "panels/labpanel.h"
#include "services/session.h"
#include "views/temperatureslider.h"
#include "window/labcontroller.h"
#include "window/viewscontroller.h"

#include <QAction>
#include <QComboBox>
#include <QDockWidget>
#include <QMenu>
#include <QMenuBar>
#include <QSpinBox>
#include <QTabWidget>

void MainWindow::buildViews() {
    views_ = new ViewsController(this);
    auto* dock = new QDockWidget(tr("Views"), this);
    dock->setObjectName(QStringLiteral("viewsDock"));
    dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable |
                      QDockWidget::DockWidgetClosable);
    dock->setWidget(views_->tabs());
    addDockWidget(Qt::RightDockWidgetArea, dock);
    if (auto* lab = findChild<QDockWidget*>(QStringLiteral("labDock"))) {
        tabifyDockWidget(lab, dock);
        lab->raise();  // the lab stays in front, as before; View > Views brings these forward
    }
    QAction* toggle = dock->toggleViewAction();
    toggle->setText(tr("&Views (Lines, Neuron, Query\u2013Key)"));
    toggle->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_B));
    toggle->setObjectName(QStringLiteral("viewsPanelAction"));
    viewMenu()->addAction(toggle);
    // File > Export View…, under Export Figure…: the view shown in this dock as a paper figure.
    auto* exportView = new QAction(tr("Export &View\u2026"), this);
    exportView->setObjectName(QStringLiteral("exportViewAction"));
    exportView->setToolTip(
            tr("The line, neuron or query\u2013key view shown in the Views dock, at a venue's column width"));
    connect(exportView, &QAction::triggered, views_, [this, dock] {
        dock->show();
        dock->raise();
        views_->exportShownView();
    });
    if (auto* file = menuBar()->findChild<QMenu*>(QStringLiteral("fileMenu")))
        file->insertAction(findChild<QAction*>(QStringLiteral("exportDataAction")), exportView);
    connect(dock, &QDockWidget::visibilityChanged, views_, [this](bool visible) {
        if (visible) views_->refresh();
    });

    // Every change of what the window shows: a new trace, block, layer, head, temperature, the
    // lab's re-run, raw labels. Connected after the window's own slots, so its state is current.
    auto refresh = [this] { views_->refresh(); };
    connect(session_, &Session::traceReady, views_, [this] {
        views_->select(-1, -1);  // a new input: token indices mean other tokens
        views_->refresh();
    });
    connect(controls_->blockCombo(), &QComboBox::currentIndexChanged, views_, [this] {
        views_->select(-1, -1);
        views_->refresh();
    });
    connect(controls_->layerSpin(), &QSpinBox::valueChanged, views_, refresh);
    connect(controls_->headSpin(), &QSpinBox::valueChanged, views_, refresh);
    connect(controls_->temperature(), &TemperatureSlider::temperatureChanged, views_, refresh);
    connect(lab_, &LabController::shownTraceChanged, views_, refresh);
    // The lab's variant (dot, linear, additive, hybrid) and a new additive fit: the views draw the
    // variant's maps. Queued: the lab takes the fit in before the views ask for it.
    connect(lab_->panel(), &LabPanel::variantChanged, views_, refresh);
    connect(lab_->service(), &LabService::fitReady, views_, refresh, Qt::QueuedConnection);
    connect(rawTokensAction_, &QAction::toggled, views_, refresh);
}
