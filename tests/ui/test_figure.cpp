// Colormaps, colour scales and the figure renderer without a window: colours against the
// published stops, crisp cells in the PNG, sizes, and the errors of writeFigure / writeMapData.
#include "figure/colormaps.h"
#include "services/comparesession.h"
#include "figure/figure.h"
#include "figure/mapdata.h"
#include "services/mapservice.h"
#include "views/temperatureslider.h"

#include "attnscope/runtime/error.h"
#include "gpt2_fixture.h"

#include <catch2/catch.hpp>

#include <QFile>
#include <QImage>

#include <cmath>
#include <set>

namespace test_figure {

using namespace attnscope::testing;
namespace fs = std::filesystem;

namespace {

QString qpath(const fs::path& p) { return QString::fromStdString(p.string()); }

// 3 queries x 4 keys with distinct weights (rows sum to 1).
attnscope::HeadMap smallMap() {
    attnscope::HeadMap m;
    m.rows = 3;
    m.cols = 4;
    m.values = {0.7f, 0.1f, 0.1f, 0.1f, 0.05f, 0.6f, 0.3f, 0.05f, 0.0f, 0.2f, 0.35f, 0.45f};
    return m;
}

Figure smallFigure() {
    Figure f;
    f.panels.push_back({smallMap(), {"the", "movie", "was"}, {"a", "b", "c", "d"}, QString()});
    f.title = QStringLiteral("test figure");
    return f;
}

}  // namespace

TEST_CASE("Colormaps follow the published stops", "[ui][colormap]") {
    // Ends and middle of matplotlib's tables (entries 0, 128 and 255).
    CHECK(colormapColor(Colormap::Viridis, 0.0) == QColor("#440154"));
    CHECK(colormapColor(Colormap::Viridis, 0.5) == QColor("#21918c"));
    CHECK(colormapColor(Colormap::Viridis, 1.0) == QColor("#fde725"));
    CHECK(colormapColor(Colormap::Magma, 0.0) == QColor("#000004"));
    CHECK(colormapColor(Colormap::Magma, 1.0) == QColor("#fcfdbf"));
    CHECK(colormapColor(Colormap::Cividis, 0.0) == QColor("#00224e"));
    CHECK(colormapColor(Colormap::Cividis, 1.0) == QColor("#fee838"));
    CHECK(colormapColor(Colormap::Gray, 0.5) == QColor(128, 128, 128));
    // Between two stops: linear in RGB (viridis stops 0 and 1 are at 0 and 1/16).
    const QColor mid = colormapColor(Colormap::Viridis, 1.0 / 32);
    CHECK(mid == QColor((0x44 + 0x48 + 1) / 2, (0x01 + 0x18 + 1) / 2, (0x54 + 0x6a) / 2));
    // Out of range and NaN clamp.
    CHECK(colormapColor(Colormap::Viridis, -3) == QColor("#440154"));
    CHECK(colormapColor(Colormap::Viridis, std::nan("")) == QColor("#440154"));
    CHECK(parseColormap(QStringLiteral("Magma")) == Colormap::Magma);
    CHECK_FALSE(parseColormap(QStringLiteral("jet")));
}

TEST_CASE("Colour scales: linear 0..1 and log 1e-4..1", "[ui][colormap]") {
    ColorScale lin;
    CHECK(lin.position(0.25) == 0.25);
    CHECK(lin.position(2.0) == 1.0);
    CHECK(lin.ticks() == QList<double>{0, 0.25, 0.5, 0.75, 1});
    ColorScale log;
    log.type = ColorScaleType::Log;
    CHECK(log.position(1e-2) == Approx(0.5));
    CHECK(log.position(0.0) == 0.0);
    CHECK(log.position(1e-7) == 0.0);
    CHECK(log.valueAt(0.25) == Approx(1e-3));
    CHECK(log.ticks().size() == 5);
    CHECK(tickLabel(log, 1e-4) == QStringLiteral("10\u207b\u2074"));
    CHECK(tickLabel(log, 1.0) == QStringLiteral("1"));
}

TEST_CASE("Temperature slider positions are a log scale", "[ui][temperature]") {
    CHECK(TemperatureSlider::positionOf(1.0) == 100);
    CHECK(TemperatureSlider::positionOf(0.1) == 0);
    CHECK(TemperatureSlider::positionOf(10.0) == 200);
    CHECK(TemperatureSlider::positionOf(50.0) == 200);
    CHECK(TemperatureSlider::temperatureAt(150) == Approx(std::sqrt(10.0)));
}

TEST_CASE("Thumbnails pool large maps by the mean", "[ui][thumbnail]") {
    attnscope::HeadMap m;
    m.rows = m.cols = 100;
    for (int i = 0; i < 100 * 100; ++i) m.values.push_back(float((i * 37) % 101) / 100.f);
    const QImage img = mapImage(m, Colormap::Gray, ColorScale{}, 48);
    REQUIRE(img.width() == 34);  // ceil(100 / 3)
    REQUIRE(img.height() == 34);
    double sum = 0;
    for (int q = 3; q < 6; ++q)
        for (int k = 6; k < 9; ++k) sum += m.at(q, k);
    CHECK(img.pixelColor(2, 1) == colormapColor(Colormap::Gray, sum / 9));
    CHECK(mapImage(smallMap(), Colormap::Viridis, ColorScale{}, 48).size() ==
          QSize(4, 3));  // small: one pixel per cell
}

TEST_CASE("Compare tasks are the built-in reverse and sentiment models", "[ui][compare]") {
    CHECK(compareTaskOf(QStringLiteral("builtin:sentiment-linear")) == QStringLiteral("sentiment"));
    CHECK_FALSE(compareTaskOf(QStringLiteral("/models/gpt2")));
    CHECK(compareSpecs(QStringLiteral("reverse"))[1] == QStringLiteral("builtin:reverse-additive"));
}

TEST_CASE("A figure PNG has crisp cells in the map's colours and its dpi", "[ui][figure]") {
    const Figure f = smallFigure();
    const QImage img = renderFigure(f, 150);
    CHECK(img.width() == std::lround(3.25 * 150));
    CHECK(img.height() == std::lround(figureSizePoints(f).height() / 72 * 150));
    CHECK(img.dotsPerMeterX() == std::lround(150 / 0.0254));
    // Every cell's exact colour covers most of a cell: no smoothing between cells.
    const auto m = smallMap();
    std::map<QRgb, int> counts;
    for (int y = 0; y < img.height(); ++y)
        for (int x = 0; x < img.width(); ++x) ++counts[img.pixel(x, y)];
    std::map<QRgb, int> cellsOfColour;
    for (float v : m.values) ++cellsOfColour[colormapColor(Colormap::Viridis, v).rgb()];
    for (const auto& [rgb, cells] : cellsOfColour) {
        INFO("colour " << std::hex << rgb);
        CHECK(counts[rgb] > cells * 50 * 50);  // cells are over 60 px wide at this size
    }
}

TEST_CASE("Figures keep labels legible: fonts in points, fewer labels when cells are small", "[ui][figure]") {
    Figure f;
    attnscope::HeadMap big;
    big.rows = big.cols = 300;  // 90,000 cells: drawn as one image
    big.values.assign(300 * 300, 1.f / 300);
    f.panels.push_back({big, {}, {}, QString()});
    const QSizeF one = figureSizePoints(f);
    CHECK(one.width() == 234);
    f.widthIn = 6.75;
    CHECK(figureSizePoints(f).width() == 486);
    const fs::path dir = freshDir("ui-figure-big");
    writeFigure(f, qpath(dir / "big.pdf"));
    QFile pdf(qpath(dir / "big.pdf"));
    REQUIRE(pdf.open(QIODevice::ReadOnly));
    CHECK(pdf.readAll().contains("/Subtype /Image"));  // many cells: one image, not 90,000 rectangles
    CHECK(pdf.size() < 400 * 1024);
    fs::remove_all(dir);
}

TEST_CASE("writeFigure and writeMapData refuse bad requests and leave files alone", "[ui][figure]") {
    const fs::path dir = freshDir("ui-figure-errors");
    const QString keep = qpath(dir / "keep.pdf");
    {
        QFile f(keep);
        REQUIRE(f.open(QIODevice::WriteOnly));
        f.write("keep");
    }
    const auto message = [](auto&& fn) {
        try {
            fn();
        } catch (const attnscope::Error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK_THAT(message([&] { writeFigure(smallFigure(), qpath(dir / "x.jpg")); }),
               Catch::Contains("unknown figure format"));
    CHECK_THAT(message([&] { writeFigure(Figure{}, keep); }), Catch::Contains("no attention map"));
    Figure narrow = smallFigure();
    narrow.widthIn = 0.2;
    CHECK_THAT(message([&] { writeFigure(narrow, keep); }), Catch::Contains("width"));
    CHECK_THAT(message([&] { writeFigure(smallFigure(), keep, 5); }), Catch::Contains("dpi"));
    CHECK_THAT(message([&] { writeFigure(smallFigure(), qpath(dir / "no" / "x.svg")); }), Catch::Contains("no/x.svg"));
    QFile f(keep);
    REQUIRE(f.open(QIODevice::ReadOnly));
    CHECK(f.readAll() == "keep");

    CHECK_THAT(message([&] { writeMapData(attnscope::HeadMap{}, {}, {}, qpath(dir / "m.npy")); }),
               Catch::Contains("no attention map"));
    CHECK_THAT(message([&] { writeMapData(smallMap(), {}, {}, qpath(dir / "m.txt")); }),
               Catch::Contains("unknown data format"));
    fs::remove_all(dir);
}

TEST_CASE("CSV fields are quoted when they must be", "[ui][mapdata]") {
    CHECK(csvField(QStringLiteral("movie")) == QStringLiteral("movie"));
    CHECK(csvField(QStringLiteral(",")) == QStringLiteral("\",\""));
    CHECK(csvField(QStringLiteral("say \"hi\"")) == QStringLiteral("\"say \"\"hi\"\"\""));
    CHECK(csvField(QStringLiteral(" the")) == QStringLiteral("\" the\""));
    CHECK(csvField(QStringLiteral("a\nb")) == QStringLiteral("\"a\nb\""));
}

TEST_CASE("mapTitle names the map", "[ui][figure]") {
    CHECK(mapTitle(QStringLiteral("reverse-dot"), QStringLiteral("cross"), 1, 2, 0.5) ==
          QStringLiteral("reverse-dot \u00b7 cross \u00b7 layer 1 \u00b7 head 2 \u00b7 T = 0.5"));
    CHECK(mapTitle(QString(), QString(), 0, 3, 1.0) == QStringLiteral("layer 0 \u00b7 head 3"));
}

}  // namespace test_figure
