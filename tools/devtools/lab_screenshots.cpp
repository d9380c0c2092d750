// Pictures of the lab for looking at by hand (not run by ctest).
#include "lab_fixture.h"

#include "panels/metricspanel.h"

#include <QTableView>

using namespace uitest;

// Pictures of the lab for looking at by hand (not part of the suite):
//   ATTNSCOPE_SHOT_DIR=/tmp/shots build/tools/attnscope-devtools "[.lab-shots]"
TEST_CASE_METHOD(LabFixture, "lab screenshots", "[.lab-shots]") {
    const QByteArray dir = qgetenv("ATTNSCOPE_SHOT_DIR");
    REQUIRE(!dir.isEmpty());
    window.resize(1500, 940);
    const QString spec = qEnvironmentVariableIsSet("ATTNSCOPE_SHOT_MODEL")
                                 ? qEnvironmentVariable("ATTNSCOPE_SHOT_MODEL")
                                 : QStringLiteral("builtin:sentiment-dot");
    open(spec);
    QTest::qWait(300);
    window.grab().save(QString::fromUtf8(dir) + QStringLiteral("/1-open.png"));
    lab->propagateCheck()->setChecked(true);
    slider->setValue(TemperatureSlider::positionOf(0.3));
    REQUIRE(QTest::qWaitFor([&] { return lab->changeView()->hasChange() && lab->shownTrace() != session->trace(); },
                            20000));
    QTest::mouseClick(overview, Qt::LeftButton, Qt::ControlModifier, overview->tileRect(0, 1).center());
    REQUIRE(QTest::qWaitFor([&] { return lab->changeView()->text().contains(QStringLiteral("masked")); }, 20000));
    panel->variantCombo()->setCurrentIndex(int(LabVariant::Linear));
    panel->featureMapCombo()->setCurrentIndex(2);
    QTest::qWait(500);
    window.grab().save(QString::fromUtf8(dir) + QStringLiteral("/2-lab.png"));
    panel->variantCombo()->setCurrentIndex(int(LabVariant::Additive));
    QTest::mouseClick(panel->fitButton(), Qt::LeftButton);
    REQUIRE(QTest::qWaitFor([&] { return lab->lastFit() != nullptr; }, 30000));
    QTest::qWait(500);
    window.grab().save(QString::fromUtf8(dir) + QStringLiteral("/3-fit.png"));
    window.tabs()->setCurrentWidget(lab->metrics());
    REQUIRE(QTest::qWaitFor([&] { return lab->metrics()->model()->rowCount() > 0; }, 20000));
    lab->metrics()->table()->sortByColumn(HeadMetricsModel::Entropy, Qt::AscendingOrder);
    QTest::qWait(800);
    window.grab().save(QString::fromUtf8(dir) + QStringLiteral("/4-metrics.png"));
}
