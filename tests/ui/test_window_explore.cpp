// The window on the shipped built-in models (default start, blocks, tokenizer errors, linear
// attention) and on a GPT-2 stand-in folder (builtin_fixture.h): the example run,
// layer/head/temperature changes, the overview, hover, errors, drag and drop, cancel. Every map
// on screen is checked against Trace::map cell by cell.
#include "window_fixture.h"

#include "services/mapservice.h"
#include "panels/modelpicker.h"
#include "panels/outputpanel.h"

#include "attnscope/models/model.h"
#include "gpt2_fixture.h"

#include <qcustomplot.h>

#include <QMenu>
#include <QMenuBar>
#include <QElapsedTimer>
#include <QFile>
#include <QLabel>
#include <QMimeData>
#include <QUrl>

#include <algorithm>
#include <cmath>
#include <iostream>

namespace test_window_explore {

using namespace uitest;
using namespace attnscope::testing;
namespace fs = std::filesystem;

TEST_CASE_METHOD(WindowFixture, "A built-in model opens with an example run, its map, overview and outputs",
                 "[ui][window]") {
    // The default start: the shipped reverse-dot model (encoder-decoder) on its example text.
    open(QStringLiteral("builtin:reverse-dot"));
    const auto trace = session->trace();
    CHECK(session->modelSpec() == QStringLiteral("builtin:reverse-dot"));
    CHECK(session->hasTokenizer());  // a per-character vocabulary: text goes in as text
    CHECK_FALSE(controls->idsCheck()->isChecked());
    CHECK(controls->idsCheck()->isEnabled());
    CHECK(input->text() == QStringLiteral("attention2026"));
    CHECK(controls->picker()->currentText().startsWith(QStringLiteral("reverse-dot")));
    CHECK(QFile::exists(QStringLiteral(":/attnscope/attnscope.svg")));  // the compiled-in icon
    CHECK_FALSE(window.windowIcon().isNull());

    // Three blocks; the window starts on cross-attention (output character -> input character).
    QComboBox* blocks = controls->blockCombo();
    REQUIRE(blocks->count() == 3);
    CHECK(blocks->itemText(0) == QStringLiteral("encoder"));
    CHECK(blocks->itemText(1) == QStringLiteral("decoder"));
    CHECK(blocks->itemText(2) == QStringLiteral("cross"));
    CHECK(blocks->isVisibleTo(controls));
    CHECK(blocks->currentText() == QStringLiteral("cross"));
    const int cross = trace->blockIndex("cross");
    CHECK(layer->maximum() == 1);
    CHECK(head->maximum() == 1);
    waitForMap(trace->map(cross, 0, 0));
    const auto& info = trace->blocks()[std::size_t(cross)];
    CHECK(heatmap->keyLabels() == QString("attention2026").split(QString(), Qt::SkipEmptyParts));  // keys: the input
    CHECK(heatmap->queryLabels().size() == int(info.queryTokens.size()));

    // Overview: one thumbnail per (layer, head) of the cross block, coloured from Trace::map.
    REQUIRE(QTest::qWaitFor([&] { return overview->images().size() == 4; }, 20000));
    CHECK(overview->layers() == 2);
    CHECK(overview->heads() == 2);
    for (int l = 0; l < 2; ++l)
        for (int h = 0; h < 2; ++h)
            CHECK(sameImage(overview->images()[std::size_t(l * 2 + h)],
                            mapImage(trace->map(cross, l, h), Colormap::Viridis, ColorScale{}, 48)));

    // Outputs: the trained model reverses the text (the task's answer, computed here).
    QString reversed = QStringLiteral("attention2026");
    std::reverse(reversed.begin(), reversed.end());
    CHECK(controls->outputs()->text().contains(QStringLiteral("Generated: ") + reversed));

    // Switching blocks shows the encoder's self-attention over the input characters.
    blocks->setCurrentIndex(0);
    waitForMap(trace->map(0, layer->value(), head->value()));
    CHECK(heatmap->queryLabels() == heatmap->keyLabels());
}

TEST_CASE_METHOD(WindowFixture, "A built-in model's tokenizer refuses symbols outside its alphabet", "[ui][window]") {
    open(QStringLiteral("builtin:reverse-dot"));
    const auto good = session->trace();
    input->setText(QStringLiteral("abC"));
    QTest::mouseClick(run, Qt::LeftButton);
    const QString text = takeErrorDialog();
    CHECK(text.contains(QStringLiteral("The model could not run this input.")));
    CHECK(text.contains(QStringLiteral("symbol 'C'")));
    CHECK(session->trace() == good);
    runText(QStringLiteral("abc"));
    CHECK(session->trace()->tokens().size() >= 3);
}

TEST_CASE_METHOD(WindowFixture, "The temperature slider is off for linear attention blocks",
                 "[ui][window][temperature]") {
    open(QStringLiteral("builtin:reverse-linear"));
    TemperatureSlider* t = controls->temperature();
    const auto trace = session->trace();
    const auto& shown = trace->blocks()[std::size_t(controls->blockCombo()->currentIndex())];
    CHECK(shown.kind == attnscope::AttentionKind::Linear);
    CHECK_FALSE(slider->isEnabled());
    auto* note = t->findChild<QLabel*>(QStringLiteral("temperatureNote"));
    REQUIRE(note);
    CHECK(note->isVisibleTo(t));
    CHECK(note->text().contains(QStringLiteral("no softmax")));

    // The dot model's blocks take a temperature again.
    open(QStringLiteral("builtin:reverse-dot"));
    CHECK(slider->isEnabled());
    CHECK_FALSE(note->isVisibleTo(t));
}

TEST_CASE_METHOD(WindowFixture, "Typed ids run; hovering names the query, key and weight", "[ui][window]") {
    // A laptop's window (the offscreen screen is 800x600): every token's tick fits on the square map.
    window.resize(1366, 768);
    openStandIn();
    layer->setValue(1);
    head->setValue(2);
    runText(QStringLiteral("3, 1 4 1 5"));
    const auto trace = session->trace();
    REQUIRE(trace->ids() == std::vector<std::int64_t>{3, 1, 4, 1, 5});
    CHECK(layer->value() == 1);  // the chosen head survives a re-run
    CHECK(head->value() == 2);
    const attnscope::HeadMap expected = trace->map(0, 1, 2);
    waitForMap(expected);

    // The same map from an independent load and forward of the same ids.
    const auto model = attnscope::Model::load(standInModel());
    const attnscope::HeadMap reference = model->forward({3, 1, 4, 1, 5})->map(0, 1, 2);
    REQUIRE(reference.values.size() == expected.values.size());
    for (std::size_t i = 0; i < reference.values.size(); ++i)
        CHECK(expected.values[i] == Approx(reference.values[i]).margin(1e-6));

    const QStringList tokens = toQt(trace->tokens());
    CHECK(tokens == QStringList({"t3", "t1", "t4", "t1", "t5"}));
    CHECK(heatmap->keyLabels() == tokens);
    CHECK(heatmap->queryLabels() == tokens);
    auto ticks = [](QCPAxis* axis) {
        return QStringList(axis->ticker().dynamicCast<QCPAxisTickerText>()->ticks().values());
    };
    CHECK(ticks(heatmap->plot()->xAxis) == tokens);
    CHECK(ticks(heatmap->plot()->yAxis) == tokens);
    CHECK_FALSE(heatmap->colorMap()->interpolate());  // crisp cells

    QTest::qWait(50);  // let the queued replot lay the plot out
    const QPointF p = heatmap->cellGeometry().cellCenter({3, 2});
    QMouseEvent move(QEvent::MouseMove, p, heatmap->plot()->mapToGlobal(p), Qt::NoButton, Qt::NoButton, Qt::NoModifier);
    QCoreApplication::sendEvent(heatmap->plot(), &move);
    const QString hover = heatmap->findChild<QLabel*>(QStringLiteral("hoverLabel"))->text();
    CHECK(hover.contains(QStringLiteral("query 3 't1'")));
    CHECK(hover.contains(QStringLiteral("key 2 't4'")));
    CHECK(hover.contains(QString::number(double(expected.at(3, 2)), 'f', 4)));
}

TEST_CASE_METHOD(WindowFixture, "Layer, head, arrows and thumbnails re-render from the same trace", "[ui][window]") {
    openStandIn();
    const auto trace = session->trace();
    QSignalSpy traced(session, &Session::traceReady);

    head->setFocus();
    QTest::keyClick(head, Qt::Key_Up);
    REQUIRE(head->value() == 1);
    waitForMap(trace->map(0, 0, 1));

    layer->setValue(1);
    head->setValue(3);
    waitForMap(trace->map(0, 1, 3));
    CHECK(overview->selectedLayer() == 1);
    CHECK(overview->selectedHead() == 3);

    // Arrow keys on the maps: left/right = head, up/down = layer (clamped at the edges).
    heatmap->plot()->setFocus();
    QTest::keyClick(heatmap->plot(), Qt::Key_Left);
    waitForMap(trace->map(0, 1, 2));
    QTest::keyClick(heatmap->plot(), Qt::Key_Up);
    waitForMap(trace->map(0, 0, 2));
    QTest::keyClick(heatmap->plot(), Qt::Key_Up);  // already at layer 0
    CHECK(layer->value() == 0);
    CHECK(head->value() == 2);

    // A click on a thumbnail opens that head.
    REQUIRE(QTest::qWaitFor([&] { return overview->images().size() == 8; }, 20000));
    QTest::mouseClick(overview, Qt::LeftButton, Qt::NoModifier, overview->tileRect(1, 0).center());
    CHECK(layer->value() == 1);
    CHECK(head->value() == 0);
    waitForMap(trace->map(0, 1, 0));

    QTest::qWait(20);
    CHECK(traced.count() == 0);        // no forward pass ran
    CHECK(session->trace() == trace);  // the very same trace
}

TEST_CASE_METHOD(WindowFixture, "The temperature slider re-renders the maps live without running the model",
                 "[ui][window][temperature]") {
    openStandIn();
    const auto trace = session->trace();
    layer->setValue(1);
    head->setValue(1);
    waitForMap(trace->map(0, 1, 1));
    const auto atOne = heatmap->map().values;
    QSignalSpy traced(session, &Session::traceReady);

    // Log scale: ends at 0.1 and 10, 1 in the middle.
    CHECK(TemperatureSlider::temperatureAt(slider->minimum()) == Approx(0.1));
    CHECK(TemperatureSlider::temperatureAt(slider->maximum()) == Approx(10.0));
    CHECK(TemperatureSlider::temperatureAt((slider->minimum() + slider->maximum()) / 2) == Approx(1.0));

    // Dragging through many positions: the newest request wins.
    for (int v = 100; v >= 30; v -= 5) slider->setValue(v);
    const double t = controls->temperature()->temperature();
    CHECK(t == Approx(std::pow(10.0, -0.7)));
    const attnscope::HeadMap sharp = trace->map(0, 1, 1, at(t));
    waitForMap(sharp);
    CHECK(heatmap->map().values != atOne);
    CHECK(heatmap->title().contains(QStringLiteral("T = 0.2")));
    // Lower temperature: sharper rows, i.e. a larger maximum in every row.
    const attnscope::HeadMap one = trace->map(0, 1, 1);
    for (int q = 1; q < one.rows; ++q) {
        float a = 0, b = 0;
        for (int k = 0; k < one.cols; ++k) {
            a = std::max(a, one.at(q, k));
            b = std::max(b, sharp.at(q, k));
        }
        CHECK(b >= a);
    }
    // The overview follows the temperature too.
    REQUIRE(QTest::qWaitFor(
            [&] {
                return overview->images().size() == 8 &&
                       sameImage(overview->images()[5],
                                 mapImage(trace->map(0, 1, 1, at(t)), Colormap::Viridis, ColorScale{}, 48));
            },
            20000));

    slider->setValue(slider->maximum());
    waitForMap(trace->map(0, 1, 1, at(10.0)));
    QTest::qWait(20);
    CHECK(traced.count() == 0);
    CHECK(session->trace() == trace);
}

TEST_CASE_METHOD(WindowFixture, "Colormap and log scale recolour the views", "[ui][window]") {
    openStandIn();
    const auto trace = session->trace();
    controls->colormapCombo()->setCurrentText(QStringLiteral("magma"));
    controls->scaleCombo()->setCurrentIndex(1);
    CHECK(heatmap->colormap() == Colormap::Magma);
    CHECK(heatmap->colorScale().type == ColorScaleType::Log);
    // Log scale: the cells hold max(weight, 1e-4); zeros of the causal mask sit on the floor.
    const auto map = trace->map(0, 0, 0);
    auto* data = heatmap->colorMap()->data();
    for (int q = 0; q < map.rows; ++q)
        for (int k = 0; k < map.cols; ++k) CHECK(data->cell(k, q) == std::max(double(map.at(q, k)), 1e-4));
    ColorScale log;
    log.type = ColorScaleType::Log;
    REQUIRE(QTest::qWaitFor(
            [&] {
                return overview->images().size() == 8 &&
                       sameImage(overview->images()[0], mapImage(map, Colormap::Magma, log, 48));
            },
            20000));
}

TEST_CASE_METHOD(WindowFixture, "Errors show in a non-modal dialog and the window stays usable", "[ui][window]") {
    openStandIn();
    const auto goodTrace = session->trace();

    SECTION("a folder that is not a model") {
        const fs::path empty = freshDir("ui-empty");
        window.openModel(qpath(empty));
        const QString text = takeErrorDialog();
        CHECK(text.contains(qpath(empty)));
        CHECK(text.contains(QStringLiteral("config.json")));
        fs::remove_all(empty);
    }
    SECTION("an unknown built-in model") {
        window.openModel(QStringLiteral("builtin:nonsense"));
        const QString text = takeErrorDialog();
        CHECK(text.contains(QStringLiteral("builtin:nonsense")));
        CHECK(text.contains(QStringLiteral("reverse-dot")));  // lists the ones there are
    }
    SECTION("an id outside the vocabulary") {
        input->setText(QStringLiteral("1 99"));
        QTest::mouseClick(run, Qt::LeftButton);
        CHECK(takeErrorDialog().contains(QStringLiteral("'99'")));
    }
    SECTION("an input longer than the model's positions") {
        QStringList many;
        for (int i = 0; i < 30; ++i) many << QStringLiteral("1");
        input->setText(many.join(QLatin1Char(' ')));
        QTest::mouseClick(run, Qt::LeftButton);
        const QString text = takeErrorDialog();
        CHECK(text.contains(QStringLiteral("30")));
        CHECK(text.contains(QStringLiteral("24")));
    }
    // The failed attempt changed nothing, and the window still runs.
    CHECK(session->trace() == goodTrace);
    CHECK(mismatchedCells(*heatmap, goodTrace->map(0, layer->value(), head->value())) == 0);
    runText(QStringLiteral("2 2 7"));
    CHECK(session->trace()->ids() == std::vector<std::int64_t>{2, 2, 7});
    waitForMap(session->trace()->map(0, layer->value(), head->value()));
}

TEST_CASE_METHOD(WindowFixture, "The model picker lists the built-in models and opens the chosen one", "[ui][window]") {
    open(QStringLiteral("builtin:reverse-dot"));
    ModelPicker* picker = controls->picker();
    for (const auto& name : {"reverse-dot", "reverse-additive", "reverse-linear", "sentiment-dot", "sentiment-additive",
                             "sentiment-linear"})
        CHECK(picker->findData(QStringLiteral("builtin:") + QString::fromLatin1(name)) >= 0);
    CHECK(picker->itemText(picker->count() - 1) == QStringLiteral("Open folder…"));
    QSignalSpy loaded(session, &Session::modelLoaded);
    emit picker->activated(picker->findData(QStringLiteral("builtin:sentiment-additive")));  // as a user's pick
    REQUIRE(loaded.wait(20000));
    REQUIRE(QTest::qWaitFor(
            [&] { return session->trace() && session->modelSpec() == QStringLiteral("builtin:sentiment-additive"); },
            20000));
    CHECK(picker->currentData().toString() == QStringLiteral("builtin:sentiment-additive"));
    CHECK(window.windowTitle().contains(QStringLiteral("sentiment-additive")));
    waitForMap(session->trace()->map(0, layer->value(), head->value()));
}

TEST_CASE_METHOD(WindowFixture, "A dropped folder opens and becomes a recent model", "[ui][window]") {
    const fs::path folder = freshDir("ui-dropped");
    Gpt2Spec spec;
    spec.layers = 3;
    spec.heads = 2;
    writeGpt2Folder(folder, makeGpt2(spec, 5));
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(qpath(folder))});
    QDragEnterEvent enter(QPoint(50, 50), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(&window, &enter);
    CHECK(enter.isAccepted());
    QSignalSpy loaded(session, &Session::modelLoaded);
    QDropEvent drop(QPointF(50, 50), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QCoreApplication::sendEvent(&window, &drop);
    REQUIRE(loaded.wait(20000));
    REQUIRE(QTest::qWaitFor([&] { return session->trace() != nullptr; }, 20000));
    CHECK(layer->maximum() == 2);
    CHECK(head->maximum() == 1);
    const QString canonical = QFileInfo(qpath(folder)).absoluteFilePath();
    CHECK(ModelPicker::recentFolders().value(0) == canonical);
    CHECK(controls->picker()->findData(canonical) >= 0);
    CHECK(controls->picker()->currentData().toString() == canonical);
    fs::remove_all(folder);
}

TEST_CASE_METHOD(WindowFixture, "Cancel drops the running job's result", "[ui][window]") {
    openStandIn();
    const auto trace = session->trace();
    QSignalSpy traced(session, &Session::traceReady);
    QSignalSpy busy(session, &Session::busyChanged);
    input->setText(QStringLiteral("5 6"));
    QTest::mouseClick(run, Qt::LeftButton);
    REQUIRE(session->isBusy());
    auto* cancel = window.findChild<QPushButton*>(QStringLiteral("cancelButton"));
    REQUIRE(cancel);
    QTest::mouseClick(cancel, Qt::LeftButton);
    CHECK_FALSE(session->isBusy());
    session->waitForWorkers();
    QTest::qWait(50);
    CHECK(traced.count() == 0);
    CHECK(session->trace() == trace);
    REQUIRE(busy.count() == 2);
    CHECK(busy.at(1).at(0).toBool() == false);
    CHECK(run->isEnabled());
}

TEST_CASE("MapService delivers only the newest request of each kind", "[ui][jobs]") {
    const auto trace = attnscope::Model::load(standInModel())->forward({1, 2, 3, 4, 5, 6});
    MapService maps;
    std::vector<DetailResult> details;
    std::vector<ThumbnailResult> thumbs;
    QObject::connect(&maps, &MapService::detailReady, [&](const DetailResult& r) { details.push_back(r); });
    QObject::connect(&maps, &MapService::thumbnailsReady, [&](const ThumbnailResult& r) { thumbs.push_back(r); });
    for (int i = 1; i <= 20; ++i) {
        maps.requestDetail(trace, {0, 1, 2}, 0.1 * i);
        maps.requestThumbnails(trace, 0, 0.1 * i, Colormap::Viridis, ColorScale{});
    }
    maps.waitForWorkers();
    QTest::qWait(20);
    REQUIRE(details.size() == 1);
    CHECK(details[0].temperature == Approx(2.0));
    CHECK(details[0].map.values == trace->map(0, 1, 2, at(2.0)).values);
    // The newest request fills in layer by layer: a partial result per finished layer but the
    // last (4 heads each, here 1 of 2 layers), then the whole; nothing of the older requests.
    REQUIRE(thumbs.size() == 2);
    CHECK(thumbs[0].images.size() == 4);
    CHECK_FALSE(thumbs[0].pooled);
    CHECK(sameImage(thumbs[0].images[2], mapImage(trace->map(0, 0, 2, at(2.0)), Colormap::Viridis, ColorScale{}, 48)));
    CHECK(thumbs[1].images.size() == 8);
    CHECK(thumbs[1].pooled);
    CHECK(sameImage(thumbs[1].images[6], mapImage(trace->map(0, 1, 2, at(2.0)), Colormap::Viridis, ColorScale{}, 48)));
    CHECK(maps.lastDetailLatencyMs() > 0);
}

TEST_CASE_METHOD(WindowFixture,
                 "The menu bar has one File, one View and one Help menu; View holds the lab and raw-token toggles",
                 "[ui][window]") {
    QStringList titles;
    for (QAction* a : window.menuBar()->actions()) titles << a->text();
    CHECK(titles == QStringList{QStringLiteral("&File"), QStringLiteral("&View"), QStringLiteral("&Help")});
    QStringList view;
    for (QAction* a : window.viewMenu()->actions()) view << a->objectName();
    CHECK(view.contains(QStringLiteral("labPanelAction")));
    CHECK(view.contains(QStringLiteral("rawTokensAction")));
}

}  // namespace test_window_explore
