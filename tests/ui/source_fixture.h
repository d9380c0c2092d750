// What the Show selector's tests share (test_map_sources*.cpp, test_score_terms.cpp): choosing a
// source as a user does, and waiting for the re-run that records what it reads.
#pragma once

#include "window_fixture.h"

#include "panels/sourcepicker.h"

#include "attnscope/analysis/map_source.h"
#include "attnscope/analysis/value_norm.h"
#include "attnscope/attention/score_terms.h"

namespace uitest {

// Chooses the source in the Show selector's combo box (its item, as a click would).
inline void choose(WindowFixture& w, attnscope::MapSource source) {
    QComboBox* combo = w.controls->sourcePicker()->showCombo();
    const int i = combo->findData(int(source));
    REQUIRE(i >= 0);
    combo->setCurrentIndex(i);
}

// Waits until the session is idle on a trace for which `recorded` holds; returns that trace.
inline std::shared_ptr<const attnscope::Trace> waitForTrace(WindowFixture& w,
                                                           bool (*recorded)(const attnscope::Trace&)) {
    REQUIRE(QTest::qWaitFor(
            [&] {
                const auto t = w.session->trace();
                return t && recorded(*t) && !w.session->isBusy();
            },
            20000));
    return w.session->trace();
}

// The re-run a value or ALTI source asks for: the values recorded.
inline std::shared_ptr<const attnscope::Trace> waitForValues(WindowFixture& w) {
    return waitForTrace(w, [](const attnscope::Trace& t) { return attnscope::hasValues(t, 0); });
}

// The re-run a score-term source asks for: DeBERTa's terms recorded.
inline std::shared_ptr<const attnscope::Trace> waitForTerms(WindowFixture& w) {
    return waitForTrace(w, [](const attnscope::Trace& t) { return !attnscope::traceScoreTerms(t).empty(); });
}

}  // namespace uitest
