// MainWindow, continued: the attention lab. The window places the lab's widgets (the Lab dock,
// the Metrics tab, the rows under the temperature slider and the output), passes it the events
// of its own widgets, and is the lab's LabHost.
#include "window/mainwindow.h"

#include "panels/controlpanel.h"
#include "panels/labpanel.h"
#include "panels/metricspanel.h"
#include "views/heatmapview.h"
#include "views/outputchangeview.h"
#include "views/overviewgrid.h"
#include "views/temperatureslider.h"
#include "window/labcontroller.h"

#include <QAction>
#include <QComboBox>
#include <QDockWidget>
#include <QMenu>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>
#include <QStatusBar>
#include <QTabWidget>

// After the window's own connections: on a shared signal (session, slider, block, tab) the
// window reacts first, then the lab.
void MainWindow::buildLab() {
    lab_ = new LabController(this, this);

    LabPanel* panel = lab_->panel();
    auto* scroll = new QScrollArea;
    scroll->setWidget(panel);
    scroll->setWidgetResizable(true);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    // Wide enough for the panel itself: the dock never clips its controls.
    scroll->setMinimumWidth(panel->minimumSizeHint().width() + scroll->verticalScrollBar()->sizeHint().width() + 4);
    auto* dock = new QDockWidget(tr("Lab"), this);
    dock->setObjectName(QStringLiteral("labDock"));
    dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable |
                      QDockWidget::DockWidgetClosable);
    dock->setWidget(scroll);
    addDockWidget(Qt::RightDockWidgetArea, dock);
    QAction* toggle = dock->toggleViewAction();
    toggle->setText(tr("&Lab Panel"));
    toggle->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_L));
    toggle->setObjectName(QStringLiteral("labPanelAction"));
    viewMenu()->addAction(toggle);

    tabs_->addTab(lab_->metrics(), tr("&Metrics · rollout"));
    controls_->addOutputWidget(lab_->changeView());
    controls_->addTemperatureRow(lab_->temperatureRow());

    connect(controls_->temperature(), &TemperatureSlider::temperatureChanged, lab_,
            &LabController::onTemperatureChanged);
    connect(controls_->blockCombo(), &QComboBox::currentIndexChanged, lab_, &LabController::onBlockChanged);
    connect(tabs_, &QTabWidget::currentChanged, lab_, &LabController::onTabChanged);
    connect(lab_, &LabController::temperatureInsideChanged, controls_, &ControlPanel::setTemperatureInside);
    // Ctrl+click and the context menu on a thumbnail mask heads of the shown block.
    connect(overview_, &OverviewGrid::headToggleRequested, lab_,
            [this](int layer, int head) { lab_->toggleMask(currentBlockName(), layer, head); });
    connect(overview_, &OverviewGrid::headContextMenuRequested, lab_,
            [this](int layer, int head, const QPoint& globalPos) {
                if (QMenu* menu = lab_->headMenu(layer, head, overview_)) menu->popup(globalPos);
            });
}

QString MainWindow::currentBlockName() const {
    const QString block = controls_->blockCombo()->currentText();
    return block.isEmpty() ? QStringLiteral("self") : block;
}

void MainWindow::selectHead(const QString& block, int layer, int head) {
    QComboBox* blocks = controls_->blockCombo();
    const int index = blocks->findText(block);
    if (index >= 0 && index != blocks->currentIndex()) blocks->setCurrentIndex(index);
    controls_->layerSpin()->setValue(layer);
    controls_->headSpin()->setValue(head);
}

double MainWindow::sliderTemperature() const { return controls_->temperature()->temperature(); }

void MainWindow::showStatus(const QString& message, int timeoutMs) { statusBar()->showMessage(message, timeoutMs); }

void MainWindow::showDetailMap(const attnscope::HeadMap& map, const QStringList& queryLabels,
                               const QStringList& keyLabels, const QString& title) {
    heatmap_->setLevelOfDetailEnabled(false);  // a lab variant: no Trace pools it, so cells are drawn
    heatmap_->setMap(map, queryLabels, keyLabels, title);
}

void MainWindow::showDetailMessage(const QString& message) { heatmap_->clear(message); }

void MainWindow::showMaskedHeads(const std::vector<std::pair<int, int>>& heads) { overview_->setCrossedOut(heads); }

bool MainWindow::metricsShown() const { return tabs_->currentWidget() == lab_->metrics(); }

void MainWindow::showExplore() { tabs_->setCurrentIndex(0); }
