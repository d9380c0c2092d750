// Batch figures (figure/gridfigure.h): a layer's heads or chosen heads as one grid with one
// colour bar, every layer as PDF pages; checked as files (SVG parses, PDF page count, PNG size
// and pixels: the panels' cells, one colour bar) and through the export dialog.
#include "window_fixture.h"

#include "figure/gridfigure.h"
#include "gpt2_fixture.h"
#include "panels/exportdialog.h"

#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"

#include <QComboBox>
#include <QFile>
#include <QRegularExpression>
#include <QSvgRenderer>

namespace test_grid_figure {

using namespace uitest;
using attnscope::testing::freshDir;
namespace fs = std::filesystem;

namespace {

// Pages of a PDF: its /Type /Page objects (not /Pages).
int pdfPages(const QByteArray& pdf) {
    return int(QString::fromLatin1(pdf).count(QRegularExpression(QStringLiteral("/Type\\s*/Page[^s]"))));
}

}  // namespace

TEST_CASE("Grid figures put chosen heads in balanced rows", "[ui][figure][grid]") {
    CHECK(gridColumns(1, 3.25) == 1);
    CHECK(gridColumns(12, 6.75) == 6);  // at most 7 across at 6.75 in: 2 rows of 6
    CHECK(gridColumns(12, 3.25) == 3);  // at most 3 across: 4 rows of 3
    CHECK(gridColumns(3, 6.75) == 3);
    CHECK(gridColumns(8, 6.75) == 4);  // 2 rows of 4 rather than 7 + 1

    const auto model = attnscope::Model::load("builtin:reverse-dot");
    const auto trace = model->forward(model->encodeText("attention2026"));
    const int cross = trace->blockIndex("cross");
    const auto& info = trace->blocks()[std::size_t(cross)];
    GridStyle style;
    style.modelName = QStringLiteral("reverse-dot");
    style.temperature = 0.5;

    const Figure layer = layerGridFigure(*trace, cross, info.layers - 1, style);
    REQUIRE(int(layer.panels.size()) == info.heads);
    CHECK(layer.columns == gridColumns(info.heads, 6.75));
    CHECK(layer.title ==
          QStringLiteral("reverse-dot \u00b7 cross \u00b7 layer %1 \u00b7 T = 0.5").arg(info.layers - 1));
    CHECK(layer.panels[1].title == QStringLiteral("L%1 H1").arg(info.layers - 1));
    attnscope::MapOptions half;
    half.temperature = 0.5;
    CHECK(layer.panels[1].map.values == trace->map(cross, info.layers - 1, 1, half).values);

    const std::vector<std::pair<int, int>> chosen = {{0, 0}, {info.layers - 1, info.heads - 1}, {0, 1}};
    const Figure heads = headGridFigure(*trace, cross, chosen, style);
    REQUIRE(heads.panels.size() == 3);
    CHECK(heads.panels[1].title == QStringLiteral("L%1 H%2").arg(info.layers - 1).arg(info.heads - 1));
    CHECK(heads.title.contains(QStringLiteral("3 heads")));
    CHECK_THROWS_WITH(headGridFigure(*trace, cross, {{info.layers, 0}}, style),
                      Catch::Contains("layer " + std::to_string(info.layers) + " head 0 is outside the cross block"));
    CHECK_THROWS_WITH(headGridFigure(*trace, cross, {}, style), Catch::Contains("no heads"));

    const fs::path dir = freshDir("grid-figures");
    SECTION("one grid as SVG and PNG: one colour bar, every panel drawn") {
        writeFigure(heads, qpath(dir / "g.svg"));
        QSvgRenderer svg(qpath(dir / "g.svg"));
        CHECK(svg.isValid());
        // One shared colour bar (its label once), every panel titled once.
        const QString text = QString::fromUtf8(fileBytes(dir / "g.svg"));
        CHECK(text.count(QStringLiteral("attention weight")) == 1);
        for (const auto& p : heads.panels) CHECK(text.count(QStringLiteral(">") + p.title + QStringLiteral("<")) == 1);
        writeFigure(heads, qpath(dir / "g.png"), 200);
        QImage png(qpath(dir / "g.png"));
        REQUIRE(png.width() == int(std::lround(6.75 * 200)));
        CHECK(png.height() < png.width());  // three panels across in one row
    }
    SECTION("every layer: one PDF page each") {
        const std::vector<Figure> pages = allLayersFigures(*trace, cross, style);
        REQUIRE(int(pages.size()) == info.layers);
        writeFigurePages(pages, qpath(dir / "all.pdf"));
        const QByteArray pdf = fileBytes(dir / "all.pdf");
        CHECK(pdf.startsWith("%PDF-"));
        CHECK(pdf.trimmed().endsWith("%%EOF"));
        CHECK(pdfPages(pdf) == info.layers);
        CHECK_THROWS_WITH(writeFigurePages(pages, qpath(dir / "all.svg")), Catch::Contains("several pages need a PDF"));
        CHECK_FALSE(fs::exists(dir / "all.svg"));
    }
    fs::remove_all(dir);
}

TEST_CASE("The export dialog offers the layer's heads and every layer", "[ui][figure][grid][window]") {
    const fs::path dir = freshDir("grid-dialog");
    WindowFixture w;
    w.open(QStringLiteral("builtin:reverse-dot"));
    w.window.exportFigure();
    auto* dialog = w.window.findChild<ExportDialog*>(QStringLiteral("exportDialog"));
    REQUIRE(dialog);
    QComboBox* choice = dialog->findChild<QComboBox*>(QStringLiteral("figureChoice"));
    REQUIRE(choice);
    const int layerItem = choice->findText(QStringLiteral("Every head of layer %1 (grid)").arg(w.layer->value()));
    const int allItem = choice->findText(QStringLiteral("Every layer (multi-page PDF)"));
    REQUIRE(layerItem > 0);
    REQUIRE(allItem > 0);
    const auto trace = w.session->trace();
    const auto& info = trace->blocks()[std::size_t(w.controls->blockCombo()->currentIndex())];

    dialog->setFigureIndex(layerItem);
    CHECK(dialog->path().contains(QStringLiteral("_heads")));
    dialog->setPath(qpath(dir / "layer.pdf"));
    REQUIRE(dialog->exportNow());
    CHECK(pdfPages(fileBytes(dir / "layer.pdf")) == 1);

    dialog->setFigureIndex(allItem);
    dialog->setPath(qpath(dir / "all.pdf"));
    REQUIRE(dialog->exportNow());
    CHECK(pdfPages(fileBytes(dir / "all.pdf")) == info.layers);
    dialog->setPath(qpath(dir / "all.png"));
    CHECK_FALSE(dialog->exportNow());  // pages need a PDF: said in the dialog
    CHECK(dialog->findChild<QLabel*>(QStringLiteral("exportError"))->text().contains(QStringLiteral("PDF")));
    dialog->close();
    fs::remove_all(dir);
}

}  // namespace test_grid_figure
