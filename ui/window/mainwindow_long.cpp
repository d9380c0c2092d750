// The Long context tab (issue 33): needle scans, retrieval heads and KV-eviction what-ifs. Its
// controller follows the state and the session like the Causal tab's.
#include "window/mainwindow.h"

#include "controllers/longcontroller.h"

#include <QStatusBar>
#include <QTabWidget>

void MainWindow::buildLong() {
    long_ = new LongController(state_, session_, this);
    tabs_->addTab(long_->panel(), tr("&Long context"));
    connect(long_, &LongController::status, statusBar(), &QStatusBar::showMessage);
}
