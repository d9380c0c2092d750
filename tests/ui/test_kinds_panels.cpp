// The Compare tab's training curves and kinds report panels, through the real widgets: the curves
// hold the monitors.csv values (read here independently of core's reader), flagged heads are
// listed, the kinds figures and tables hold the kinds.csv / scaling.csv values (unmeasured rows
// with their reason), the figures export, and bad folders say why.
#include "panels/kindspanel.h"
#include "panels/trainingcurvespanel.h"
#include "views/figurecanvas.h"
#include "window_fixture.h"

#include "gpt2_fixture.h"

#include <qcustomplot.h>

#include <QImage>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableWidget>

#include <cmath>
#include <fstream>

namespace test_kinds_panels {

using namespace uitest;

namespace {

// Two epochs, one layer of two heads; head 1 is collapsed (uniform) in epoch 2 and both are duplicates.
const char* kMonitors =
        "epoch,step,loss,accuracy,block,layer,head,entropy,max_entropy,distance,similarity,max_similarity,"
        "layer_similarity,flags\n"
        "1,10,0.9,0.25,self,0,0,1.25,2.5,1.5,0.5,0.5,0.5,\n"
        "1,10,0.9,0.25,self,0,1,2.0,2.5,2.25,0.5,0.5,0.5,\n"
        "2,20,0.4,0.75,self,0,0,0.75,2.5,1.0,0.97,0.97,0.97,duplicated\n"
        "2,20,0.4,0.75,self,0,1,2.45,2.5,2.5,0.97,0.97,0.97,collapsed-uniform+duplicated\n";

std::vector<std::pair<double, double>> points(QCPGraph* g) {
    std::vector<std::pair<double, double>> out;
    for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it) out.emplace_back(it->key, it->value);
    return out;
}

using P = std::vector<std::pair<double, double>>;

}  // namespace

TEST_CASE("Training curves show monitors.csv per epoch and list the flagged heads", "[ui][kinds]") {
    const auto dir = attnscope::testing::freshDir("ui-curves");
    std::ofstream(dir / "monitors.csv") << kMonitors;
    TrainingCurvesPanel panel;
    panel.resize(1200, 700);
    panel.show();
    REQUIRE(panel.openRun(QString::fromStdString(dir.string())));
    using C = TrainingCurvesPanel;
    REQUIRE(panel.plot(C::Loss)->graphCount() == 1);
    CHECK(points(panel.plot(C::Loss)->graph(0)) == P{{1, 0.9}, {2, 0.4}});
    CHECK(points(panel.plot(C::Accuracy)->graph(0)) == P{{1, 0.25}, {2, 0.75}});
    REQUIRE(panel.plot(C::Entropy)->graphCount() == 2);
    CHECK(panel.plot(C::Entropy)->graph(1)->name() == "self L0 H1");
    CHECK(points(panel.plot(C::Entropy)->graph(0)) == P{{1, 1.25}, {2, 0.75}});
    CHECK(points(panel.plot(C::Entropy)->graph(1)) == P{{1, 2.0}, {2, 2.45}});
    CHECK(points(panel.plot(C::Distance)->graph(1)) == P{{1, 2.25}, {2, 2.5}});
    REQUIRE(panel.plot(C::Similarity)->graphCount() == 1);  // one layer
    CHECK(points(panel.plot(C::Similarity)->graph(0)) == P{{1, 0.5}, {2, 0.97}});
    // Accuracy is drawn on its whole range 0-1 (not the data's 0.25-0.75), epochs on whole ticks.
    const QCPRange accuracyRange = panel.plot(C::Accuracy)->yAxis->range();
    CHECK(accuracyRange.lower < 0);
    CHECK(accuracyRange.lower > -0.1);
    CHECK(accuracyRange.upper > 1);
    CHECK(accuracyRange.upper < 1.1);
    CHECK(panel.plot(C::Loss)->yAxis->range().upper < 1.0);  // others keep the data's range
    const auto ticker = panel.plot(C::Loss)->xAxis->ticker().dynamicCast<QCPAxisTickerFixed>();
    REQUIRE(ticker);
    CHECK(ticker->tickStep() == 1.0);
    // Flagged heads are dashed; the table lists each head's flags with their epochs.
    CHECK(panel.plot(C::Entropy)->graph(1)->pen().style() == Qt::DashLine);
    QTableWidget* t = panel.flagsTable();
    REQUIRE(t->rowCount() == 3);
    CHECK(t->item(0, 0)->text() == "self L0 H0");
    CHECK(t->item(0, 1)->text() == "duplicated");
    CHECK(t->item(0, 2)->text() == "2");
    CHECK(t->item(1, 0)->text() == "self L0 H1");
    CHECK(t->item(1, 1)->text() == "collapsed-uniform");

    QSignalSpy failed(&panel, &TrainingCurvesPanel::failed);
    CHECK_FALSE(panel.openRun(QString::fromStdString((dir / "nowhere").string())));
    CHECK(failed.count() == 1);
    CHECK(panel.statusLabel()->text().startsWith("error: "));
    CHECK(panel.plot(C::Loss)->graph(0)->dataCount() == 2);  // what was shown stays
}

TEST_CASE("Kinds panel shows kinds.csv and scaling.csv as tables and figures and exports them", "[ui][kinds]") {
    const auto dir = attnscope::testing::freshDir("ui-kinds");
    std::ofstream(dir / "kinds.csv")
            << "kind,parameters,parameter_count,accuracy_mean,accuracy_spread,length_buckets,accuracy_short,"
               "accuracy_medium,accuracy_long,seconds_per_epoch,peak_rss_mib,mean_entropy\n"
               "dot,scale 1/sqrt(d),1234,0.8,0.05,2-6|7-11|12-16,0.9,0.8,0.7,1.5,300,1.1\n"
               "linear,elu+1,1234,0.6,0.1,2-6|7-11|12-16,0.7,0.6,-1,1.2,280,1.9\n";
    std::ofstream(dir / "scaling.csv") << "kind,n,seconds,peak_extra_mib,note\n"
                                          "dot,128,0.001,1,\n"
                                          "dot,256,0.004,3,\n"
                                          "linear,128,0.002,0.5,\n"
                                          "linear,256,-1,-1,not measured: needs ~9.0 GiB; 2.0 GiB available\n";
    KindsPanel panel;
    panel.resize(1200, 700);
    panel.show();
    REQUIRE(QTest::qWaitForWindowExposed(&panel));
    REQUIRE(panel.openReport(QString::fromStdString(dir.string())));
    QTableWidget* k = panel.kindsTable();
    REQUIRE(k->rowCount() == 2);
    CHECK(k->item(1, 0)->text() == "linear");
    CHECK(k->item(0, 3)->text() == "0.8");
    CHECK(k->item(0, 5)->text() == "0.9 / 0.8 / 0.7");
    QTableWidget* s = panel.scalingTable();
    REQUIRE(s->rowCount() == 4);
    CHECK(s->item(3, 4)->text() == "not measured: needs ~9.0 GiB; 2.0 GiB available");
    REQUIRE(panel.figures().size() == 3);
    const CurveFigure& accuracy = panel.figures()[0];
    CHECK(accuracy.integerX);  // length buckets 1, 2, 3: no ticks at 1.5
    REQUIRE(accuracy.series.size() == 2);
    CHECK(accuracy.series[0].y == std::vector<double>{0.9, 0.8, 0.7});
    CHECK(accuracy.series[1].x == std::vector<double>{1, 2});  // the long bucket had no examples (-1)
    const CurveFigure& seconds = panel.figures()[1];
    REQUIRE(seconds.series.size() == 2);
    CHECK(seconds.series[0].x == std::vector<double>{7, 8});  // log2 128, log2 256
    REQUIRE(seconds.series[0].y.size() == 2);
    CHECK(seconds.series[0].y[0] == Approx(-3));  // log10 0.001
    CHECK(seconds.series[0].y[1] == Approx(std::log10(0.004)));
    REQUIRE(seconds.series[1].y.size() == 1);  // the unmeasured row left out
    CHECK(seconds.series[1].y[0] == Approx(std::log10(0.002)));
    REQUIRE(panel.figures()[2].series[0].y.size() == 2);
    CHECK(panel.figures()[2].series[0].y[1] == Approx(std::log10(3)));
    // The canvases paint the figures (not blank).
    const QImage shot = panel.canvas(1)->grab().toImage();
    int dark = 0;
    for (int y = 0; y < shot.height(); y += 2)
        for (int x = 0; x < shot.width(); x += 2) dark += qGray(shot.pixel(x, y)) < 128;
    CHECK(dark > 50);

    const auto out = attnscope::testing::freshDir("ui-kinds-export");
    const QStringList written = panel.exportFigures(QString::fromStdString(out.string()));
    REQUIRE(written.size() == 3);
    for (const QString& f : written) CHECK_FALSE(QImage(f).isNull());

    QSignalSpy failed(&panel, &KindsPanel::failed);
    CHECK_FALSE(panel.openReport(QString::fromStdString((dir / "nowhere").string())));
    CHECK(failed.count() == 1);
    CHECK(panel.statusLabel()->text().contains("kinds.csv"));
}

TEST_CASE("Kinds panel shows a distil --per-head folder: per-head KL, loss and output change", "[ui][kinds]") {
    attnscope::HedgehogResult r;
    r.block = "self";
    r.layers = {2, 3};
    r.heads = 2;
    r.dim = 1;
    r.trainInputs = 8;
    r.evalInputs = 2;
    r.heldOut = true;
    r.klElu = {0.5, 0.4, 0.3, 0.2};
    r.klInitial = {0.25, 0.2, 0.15, 0.1};
    r.klFitted = {0.05, 0.04, 0.03, 0.02};
    r.trainKl = {0.01, 0.01, 0.01, 0.01};
    r.lossHistory = {0.3, 0.2, 0.1};
    for (int l : r.layers)
        for (int h = 0; h < 2; ++h) r.fitted.push_back(attnscope::identityLinearHead({"self", l, h}, 1));
    r.changeFitted = {"next-token", 0.125, 0.5, 0.125, 2};
    r.changeInitial = {"next-token", 1.5, 0, 1.5, 2};
    const auto dir = attnscope::testing::freshDir("ui-hedgehog");
    attnscope::writeHedgehogReport(dir, r, attnscope::HedgehogOptions{}, "builtin:x");
    KindsPanel panel;
    panel.resize(1200, 700);
    panel.show();
    REQUIRE(QTest::qWaitForWindowExposed(&panel));
    REQUIRE(panel.openReport(QString::fromStdString(dir.string())));
    QTableWidget* k = panel.kindsTable();
    REQUIRE(k->rowCount() == 4);
    CHECK(k->item(3, 0)->text() == "3");
    CHECK(k->item(3, 1)->text() == "1");
    CHECK(k->item(3, 2)->text() == "0.2");
    CHECK(k->item(3, 4)->text() == "0.02");
    QTableWidget* s = panel.scalingTable();
    REQUIRE(s->rowCount() == 2);
    CHECK(s->item(0, 2)->text() == "0.125");
    CHECK(s->item(0, 3)->text() == "0.5");
    CHECK(s->item(1, 2)->text() == "1.5");
    REQUIRE(panel.figures()[0].series.size() == 3);
    CHECK(panel.figures()[0].series[2].y[3] == Approx(std::log10(0.02)));
    CHECK(panel.figures()[1].series[0].y == std::vector<double>{0.3, 0.2, 0.1});
    CHECK(panel.statusLabel()->text().contains("per-head distillation of 4 heads"));
    const auto out = attnscope::testing::freshDir("ui-hedgehog-export");
    const QStringList written = panel.exportFigures(QString::fromStdString(out.string()));
    REQUIRE(written.size() == 2);
    for (const QString& f : written) CHECK_FALSE(QImage(f).isNull());
    // A broken folder keeps what is shown and says why.
    std::ofstream(dir / "report.json") << "{}";
    CHECK_FALSE(panel.openReport(QString::fromStdString(dir.string())));
    CHECK(panel.statusLabel()->text().contains("report.json"));
    CHECK(panel.kindsTable()->rowCount() == 4);
}

TEST_CASE("The window's Compare tabs include the training curves and the kinds report", "[ui][kinds]") {
    WindowFixture f;
    auto* tabs = f.window.findChild<QTabWidget*>(QStringLiteral("viewTabs"));
    REQUIRE(tabs);
    CHECK(f.window.findChild<TrainingCurvesPanel*>());
    CHECK(f.window.findChild<KindsPanel*>());
    QStringList names;
    for (int i = 0; i < tabs->count(); ++i) names << tabs->tabText(i);
    CHECK(names.contains(QStringLiteral("Compare · training curves")));
    CHECK(names.contains(QStringLiteral("Compare · kinds")));
}

}  // namespace test_kinds_panels
