// The window with its attention lab (window/labcontroller.h): the lab tests' fixture, and the
// developer tools' (tools/devtools) lab screenshots and timings. The destructor stops the lab's
// jobs before WindowFixture's waits for the window's.
#pragma once

#include "window_fixture.h"

#include "panels/labpanel.h"
#include "views/outputchangeview.h"
#include "window/labcontroller.h"

#include "attnscope/lab/interventions.h"

namespace uitest {

struct LabFixture : WindowFixture {
    LabController* lab = window.lab();
    LabPanel* panel = lab->panel();

    ~LabFixture() { lab->shutdown(); }

    MapKey key() const { return {controls->blockCombo()->currentIndex(), layer->value(), head->value()}; }

    // Waits for the lab's re-run of the current trace (the change display shows it).
    void waitForRerun() {
        REQUIRE(QTest::qWaitFor([&] { return lab->shownTrace() != session->trace() && lab->changeView()->hasChange(); },
                                20000));
    }

    void requireSameChange(const attnscope::OutputChange& expected) {
        const attnscope::OutputChange& shown = lab->changeView()->change();
        CHECK(shown.kind == expected.kind);
        CHECK(shown.kl == Approx(expected.kl).margin(1e-12));
        CHECK(shown.sameTop == expected.sameTop);
        CHECK(shown.changedOutput == expected.changedOutput);
        CHECK(shown.changedProbabilities == expected.changedProbabilities);
        REQUIRE(shown.changedTop.size() == expected.changedTop.size());
        for (std::size_t i = 0; i < shown.changedTop.size(); ++i)
            CHECK(shown.changedTop[i].id == expected.changedTop[i].id);
        const QString text = lab->changeView()->text();
        if (expected.kind == "next-token" || expected.kind == "class")
            CHECK(text.contains(QString::number(expected.kl, 'g', 4)));
        CHECK(shown.meanCosineDistance == Approx(expected.meanCosineDistance).margin(1e-12));
        CHECK(shown.mostChangedToken == expected.mostChangedToken);
        if (expected.kind == "hidden") {  // encoders without a head: the final hidden states' change
            CHECK(text.contains(QStringLiteral("mean cosine distance %1").arg(expected.meanCosineDistance, 0, 'g', 4)));
            CHECK(text.contains(QStringLiteral("max %1").arg(expected.maxCosineDistance, 0, 'g', 4)));
            CHECK(text.contains(QStringLiteral("at token %1 %2")
                                        .arg(expected.mostChangedToken)
                                        .arg(QString::fromStdString(expected.mostChangedLabel))));
        }
        CHECK_FALSE(text.contains(QStringLiteral("no outputs")));
        for (const auto& t : expected.changedOutput) CHECK(text.contains(QString::fromStdString(t)));
        for (const auto& t : expected.changedTop) CHECK(text.contains(QString::fromStdString(t.label)));
    }
};

}  // namespace uitest
