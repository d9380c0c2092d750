// File > Capture Q/K In (window/windowmenus.cpp): the choice reaches the next forward, whose
// maps then come from a half-precision capture (close to, but not exactly, the float32 ones),
// and the compute dtype gives the exact maps back.
#include "window_fixture.h"

#include <QAction>

#include <algorithm>
#include <cmath>

namespace test_capture_menu {

using namespace uitest;

namespace {

double maxMapDiff(const attnscope::Trace& a, const attnscope::Trace& b) {
    double worst = 0;
    const attnscope::BlockInfo& block = a.blocks().front();
    for (int l = 0; l < block.layers; ++l)
        for (int h = 0; h < block.heads; ++h) {
            const attnscope::HeadMap x = a.map(0, l, h), y = b.map(0, l, h);
            REQUIRE(x.values.size() == y.values.size());
            for (std::size_t i = 0; i < x.values.size(); ++i)
                worst = std::max(worst, static_cast<double>(std::abs(x.values[i] - y.values[i])));
        }
    return worst;
}

}  // namespace

TEST_CASE_METHOD(WindowFixture, "File > Capture Q/K In sets how the next run keeps Q and K", "[ui][capture]") {
    openStandIn();
    const auto exact = session->trace();
    const QString text = input->text();
    REQUIRE(!text.isEmpty());
    auto* compute = window.findChild<QAction*>(QStringLiteral("captureComputeAction"));
    auto* bf16 = window.findChild<QAction*>(QStringLiteral("captureBFloat16Action"));
    REQUIRE(compute);
    REQUIRE(bf16);
    CHECK(compute->isChecked());

    bf16->trigger();
    CHECK(bf16->isChecked());
    CHECK_FALSE(compute->isChecked());
    CHECK(session->captureDtype() == attnscope::CaptureDtype::BFloat16);
    runText(text);
    const auto half = session->trace();
    REQUIRE(half != exact);
    const double diff = maxMapDiff(*exact, *half);
    INFO("max |map(bfloat16 capture) - map(float32 capture)| " << diff);
    CHECK(diff > 0);     // the capture really was rounded
    CHECK(diff < 2e-2);  // the tolerance test_streamed_weights gives a BF16 capture

    compute->trigger();
    CHECK(session->captureDtype() == attnscope::CaptureDtype::Compute);
    runText(text);
    CHECK(maxMapDiff(*exact, *session->trace()) == 0);
}

}  // namespace test_capture_menu
