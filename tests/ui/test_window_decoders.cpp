// The window on the decoder families of issue 11: every family's folder opens, runs and shows its
// heads (overview shape, the heat map equal to the Trace's map); Gemma-2's local layers are marked
// in the overview and its soft-cap and windows are on the model line.
#include "window_fixture.h"

#include "fixtures_alibi.h"
#include "fixtures_gemma.h"
#include "fixtures_neox.h"

#include <QLabel>

#include <functional>

namespace test_window_decoders {

using namespace uitest;
using namespace attnscope::testing;

TEST_CASE_METHOD(WindowFixture, "Gemma-2: local layers marked in the overview, soft-cap and windows on the model line",
                 "[ui][window][gemma]") {
    RmsFamilySpec spec;
    spec.type = "gemma2";
    spec.attnSoftcap = 50;
    spec.window = 4;
    const auto dir = freshDir("ui-gemma2");
    writeCheckpoint(dir, makeRmsFamily(spec, 31));
    open(qpath(dir));
    CHECK(overview->layers() == spec.layers);
    CHECK(overview->heads() == spec.heads);
    // Hugging Face's default order: even layers slide, odd ones are global.
    CHECK(overview->layerWindows() == std::vector<long long>{4, 0, 4});
    const QString line = controls->modelLabel()->text();
    CHECK(line.contains(QStringLiteral("sliding window 4 on layers 0, 2")));
    CHECK(line.contains(QStringLiteral("soft-cap")));
}

TEST_CASE_METHOD(WindowFixture, "Every new decoder family opens and shows its heads", "[ui][window][families]") {
    struct Case {
        const char* name;
        std::function<Checkpoint()> make;
    };
    const std::vector<Case> cases = {
            {"gpt_neox", [] { return makeNeox(NeoxSpec{}, 41); }},
            {"gptj", [] { return makeGptj(GptjSpec{}, 42); }},
            {"gpt_neo", [] { return makeNeo(NeoSpec{}, 43); }},
            {"phi", [] { return makePhi(PhiSpec{}, 44); }},
            {"opt", [] { return makeOpt(OptSpec{}, 45); }},
            {"bloom", [] { return makeBloom(BloomSpec{}, 46); }},
            {"falcon", [] { return makeFalcon(FalconSpec{}, 47); }},
            {"gemma",
             [] {
                 RmsFamilySpec s;
                 s.type = "gemma";
                 return makeRmsFamily(s, 48);
             }},
            {"gemma3_text",
             [] {
                 RmsFamilySpec s;
                 s.type = "gemma3_text";
                 return makeRmsFamily(s, 49);
             }},
            {"qwen3",
             [] {
                 RmsFamilySpec s;
                 s.type = "qwen3";
                 return makeRmsFamily(s, 50);
             }},
            {"olmo2",
             [] {
                 RmsFamilySpec s;
                 s.type = "olmo2";
                 return makeRmsFamily(s, 51);
             }},
            {"phi3",
             [] {
                 RmsFamilySpec s;
                 s.type = "phi3";
                 return makeRmsFamily(s, 52);
             }},
    };
    for (const Case& c : cases) {
        INFO(c.name);
        const Checkpoint checkpoint = c.make();
        const auto dir = freshDir(std::string("ui-family-") + c.name);
        writeCheckpoint(dir, checkpoint);
        open(qpath(dir));  // waits for the example run and its map on the heat map
        const auto& block = session->trace()->blocks()[0];
        CHECK(session->model()->info().family == c.name);
        CHECK(overview->layers() == block.layers);
        CHECK(overview->heads() == block.heads);
        CHECK(controls->modelLabel()->text().contains(QStringLiteral("<b>%1</b>").arg(QString::fromLatin1(c.name))));
        // The last head of the last layer draws too.
        layer->setValue(block.layers - 1);
        head->setValue(block.heads - 1);
        waitForMap(session->trace()->map(0, block.layers - 1, block.heads - 1));
    }
}

}  // namespace test_window_decoders
