// DeBERTa's score terms in the Show selector (issue 34): choosing c2c, c2p or p2c re-runs the model
// recording the terms and makes the heat map, the overview and the exported figure show core's
// term of the shown head (attnscope::sourceMap), on a diverging colour map centred at 0; the
// headless workspace figure shows the same; models without the terms disable them with the reason.
#include "source_fixture.h"

#include "figure/headfigure.h"
#include "figure/sourceview.h"
#include "family_checks.h"
#include "fixtures_deberta.h"
#include "panels/sourcepicker.h"
#include "state/viewstate.h"

#include "attnscope/analysis/map_source.h"
#include "attnscope/attention/score_terms.h"
#include "attnscope/models/model.h"

#include <QStandardItemModel>

namespace test_score_terms {

using namespace uitest;
using namespace attnscope::testing;
using attnscope::MapSource;

TEST_CASE_METHOD(WindowFixture, "Show: DeBERTa's c2c, c2p and p2c terms as maps, diverging around 0, in the export",
                 "[ui][sources][deberta]") {
    DebertaSpec spec;
    spec.buckets = 4;
    spec.maxRelative = 16;
    spec.layers = 2;
    const auto dir = freshDir("ui-deberta-terms");
    writeCheckpoint(dir, makeDeberta(spec, 21));
    open(qpath(dir));
    CHECK(attnscope::traceScoreTerms(*session->trace()).empty());  // the weights alone record no terms
    for (MapSource s : {MapSource::ScoreC2C, MapSource::ScoreC2P, MapSource::ScoreP2C})
        CHECK(window.state()->unavailableReason(s).isEmpty());

    choose(*this, MapSource::ScoreC2P);
    const auto trace = waitForTerms(*this);
    layer->setValue(1);
    head->setValue(2);
    const attnscope::HeadMap c2p = attnscope::sourceMap(*trace, MapSource::ScoreC2P, 0, 1, 2);
    waitForMap(c2p);
    CHECK(heatmap->title().contains(QStringLiteral("c2p")));
    CHECK(heatmap->colormap() == Colormap::RdBu);
    CHECK(heatmap->colorScale().lo == -heatmap->colorScale().hi);  // centred at 0
    CHECK(head->isEnabled());                                       // one map per head
    {
        const Figure f = window.currentFigure();
        CHECK(f.panels.front().map.values == c2p.values);
        CHECK(f.colormap == Colormap::RdBu);
        CHECK(f.colorbarLabel == sourceValueName(MapSource::ScoreC2P));
    }
    // The other terms of the same head, and the three sum to the scores whose softmax is the map.
    choose(*this, MapSource::ScoreP2C);
    const attnscope::HeadMap p2c = attnscope::sourceMap(*session->trace(), MapSource::ScoreP2C, 0, 1, 2);
    waitForMap(p2c);
    choose(*this, MapSource::ScoreC2C);
    const attnscope::HeadMap c2c = attnscope::sourceMap(*session->trace(), MapSource::ScoreC2C, 0, 1, 2);
    waitForMap(c2c);
    const attnscope::HeadMap weights = session->trace()->map(0, 1, 2);
    const int n = weights.cols;
    double worst = 0;
    for (int i = 0; i < n; ++i) {
        std::vector<double> row(static_cast<std::size_t>(n));
        for (int j = 0; j < n; ++j) row[j] = double(c2c.at(i, j)) + c2p.at(i, j) + p2c.at(i, j);
        const std::vector<double> p = softmax(row);
        for (int j = 0; j < n; ++j) worst = std::max(worst, std::abs(p[j] - weights.at(i, j)));
    }
    CHECK(worst < 1e-5);

    // The headless figure of the window's workspace (export --workspace) shows the same term.
    const auto model = attnscope::Model::load(dir);
    const Figure f = workspaceFigure(*model, window.state()->workspace());
    CHECK(f.panels.front().map.values == c2c.values);

    // Back to the weights: the map and the unit colour scale again.
    choose(*this, MapSource::Weights);
    waitForMap(session->trace()->map(0, 1, 2));
    CHECK(heatmap->colorScale().hi == 1.0);
}

TEST_CASE_METHOD(WindowFixture, "Show: the score terms are disabled, with the reason, for a model without them",
                 "[ui][sources][deberta]") {
    openStandIn();
    SourcePicker* picker = controls->sourcePicker();
    auto* items = qobject_cast<QStandardItemModel*>(picker->showCombo()->model());
    REQUIRE(items);
    for (MapSource s : {MapSource::ScoreC2C, MapSource::ScoreC2P, MapSource::ScoreP2C}) {
        const int i = picker->showCombo()->findData(int(s));
        REQUIRE(i >= 0);
        CHECK_FALSE(items->item(i)->isEnabled());
        CHECK(items->item(i)->toolTip().contains(QStringLiteral("DeBERTa")));
        choose(*this, s);  // chosen anyway: refused, the weights stay
        CHECK(window.state()->mapSource() == MapSource::Weights);
    }
    CHECK_FALSE(session->captureTerms());
}

}  // namespace test_score_terms
