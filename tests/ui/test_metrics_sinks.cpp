// The Metrics tab and the model view on a soft-capped model (Gemma-2): the table fills (it used to
// stop at "linear attention has no place for a tanh soft-cap"), shows core's sink score per head
// and "–" for KL dot‖linear; the model view offers the sink score among its metrics.
#include "lab_fixture.h"
#include "controllers/modelviewcontroller.h"
#include "panels/metricspanel.h"
#include "panels/modelviewpanel.h"

#include "attnscope/analysis/head_metric_list.h"
#include "attnscope/analysis/trace_metrics.h"
#include "fixtures_gemma.h"

#include <QComboBox>

#include <cmath>

namespace test_metrics_sinks {

using namespace uitest;
using namespace attnscope::testing;

TEST_CASE_METHOD(LabFixture, "Metrics tab on Gemma-2: sink scores, KL dot‖linear not defined", "[ui][lab][sinks]") {
    RmsFamilySpec spec;
    spec.type = "gemma2";
    spec.attnSoftcap = 1.5;
    spec.finalSoftcap = 2.0;
    spec.window = 3;
    spec.prefix = false;
    const auto dir = freshDir("ui-sinks-gemma2");
    writeCheckpoint(dir, makeRmsFamily(spec, 5));
    open(qpath(dir));
    const auto trace = session->trace();
    MetricsPanel* metrics = lab->metrics();
    window.tabs()->setCurrentWidget(metrics);
    const auto expected = attnscope::headMetrics(*trace);
    REQUIRE(expected.size() == 12u);
    REQUIRE(QTest::qWaitFor([&] { return metrics->model()->rowCount() == int(expected.size()); }, 20000));
    auto* model = metrics->model();
    CHECK(model->headerData(HeadMetricsModel::Sink, Qt::Horizontal).toString().contains(QStringLiteral("Sink")));
    for (int r = 0; r < int(expected.size()); ++r) {
        const auto& e = expected[std::size_t(r)];
        CHECK(model->index(r, HeadMetricsModel::Sink).data(Qt::UserRole).toDouble() == e.sink);
        CHECK(model->index(r, HeadMetricsModel::Sink).data().toString() == QString::number(e.sink, 'f', 3));
        CHECK(model->index(r, HeadMetricsModel::Entropy).data(Qt::UserRole).toDouble() == e.entropy);
        CHECK(model->index(r, HeadMetricsModel::KlLinear).data().toString() == QStringLiteral("–"));
    }

    // The model view lists the sink score and maps core's values.
    ModelViewController* mv = window.modelView();
    ModelViewPanel* view = mv->panel();
    window.tabs()->setCurrentWidget(view);
    QComboBox* combo = view->metricCombo();
    const auto& list = attnscope::headMetricList();
    int sinkIndex = -1;
    for (int i = 0; i < int(list.size()); ++i)
        if (std::string(list[std::size_t(i)].key) == "sink") sinkIndex = i;
    REQUIRE(sinkIndex >= 0);
    REQUIRE(combo->count() == int(list.size()));
    combo->setCurrentIndex(sinkIndex);
    REQUIRE(QTest::qWaitFor([&] { return mv->metricsTrace() == trace && view->metricsOf(2, 3); }, 20000));
    for (int l = 0; l < 3; ++l)
        for (int h = 0; h < 4; ++h) CHECK(view->metricsOf(l, h)->sink == expected[std::size_t(l * 4 + h)].sink);
}

}  // namespace test_metrics_sinks
