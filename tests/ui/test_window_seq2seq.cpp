// Encoder-decoder models in the window: the target box (teacher forcing; empty = generate), the
// generated or forced output, the cross block by default, and the alignment figure of the export
// dialog (SVG/PDF that parse and hold the tokens, marks on core's argmax cells).
#include "window_fixture.h"

#include "figure/alignment.h"
#include "figure/figure.h"
#include "panels/exportdialog.h"
#include "panels/outputpanel.h"

#include "attnscope/analysis/alignment.h"
#include "attnscope/models/model.h"
#include "gpt2_fixture.h"

#include <QDialogButtonBox>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QXmlStreamReader>

namespace test_window_seq2seq {

using namespace uitest;
using namespace attnscope::testing;
namespace fs = std::filesystem;

namespace {

QLineEdit* targetBox(WindowFixture& w) { return w.controls->targetInput(); }

QStringList svgTexts(const QString& path) {
    QFile file(path);
    REQUIRE(file.open(QIODevice::ReadOnly));
    QXmlStreamReader xml(&file);
    REQUIRE(xml.readNextStartElement());
    REQUIRE(xml.name() == QLatin1String("svg"));
    QStringList texts;
    while (!xml.atEnd())
        if (xml.readNext() == QXmlStreamReader::StartElement && xml.name() == QLatin1String("text"))
            texts << xml.readElementText(QXmlStreamReader::IncludeChildElements).trimmed();
    REQUIRE_FALSE(xml.hasError());
    return texts;
}

}  // namespace

TEST_CASE_METHOD(WindowFixture, "encoder-decoder: a typed target is forced, an empty one generates",
                 "[ui][window][seq2seq]") {
    open(QStringLiteral("builtin:reverse-dot"));
    QLineEdit* target = targetBox(*this);
    REQUIRE(target->isVisible());
    CHECK(target->placeholderText().contains(QStringLiteral("empty")));
    CHECK(target->placeholderText().contains(QStringLiteral("generate")));
    CHECK(controls->blockCombo()->currentText() == QStringLiteral("cross"));  // cross by default

    SECTION("a target: the cross block has its rows, the maps are the forced run's") {
        runPair(*this, QStringLiteral("kq83mz0a"), QStringLiteral("zzz1x"));
        const auto trace = session->trace();
        const auto& cross = trace->blocks()[std::size_t(trace->blockIndex("cross"))];
        REQUIRE(cross.queryTokens == std::vector<std::string>{"<s>", "z", "z", "z", "1", "x"});
        CHECK(controls->blockCombo()->currentText() == QStringLiteral("cross"));
        // An independent forced forward of the same pair gives the map on screen.
        const auto model = attnscope::Model::load("builtin:reverse-dot");
        attnscope::TextInput in;
        in.ids = model->encodeText("kq83mz0a");
        in.targetIds = model->encodeTarget("zzz1x");
        const auto ref = model->forwardText(in);
        waitForMap(ref->map(ref->blockIndex("cross"), layer->value(), head->value()));
        CHECK(heatmap->map().rows == 6);
        const QString out = controls->outputs()->text();
        CHECK(out.contains(QStringLiteral("Target (forced): zzz1x")));
        CHECK(out.contains(QStringLiteral("Model's choice per row")));

        SECTION("then emptied: the model generates its own output again") {
            runPair(*this, QStringLiteral("kq83mz0a"), QString());
            const auto greedy = session->trace();
            CHECK(greedy->blocks()[std::size_t(greedy->blockIndex("cross"))].queryTokens.size() == 9);  // <s> + 8
            CHECK(controls->outputs()->text().contains(QStringLiteral("Generated: a0zm38qk")));
        }
    }
    SECTION("a target with a symbol the model lacks: the error names it") {
        target->setText(QStringLiteral("ab!"));
        QTest::mouseClick(run, Qt::LeftButton);
        const QString error = takeErrorDialog();
        CHECK(error.contains(QStringLiteral("'!'")));
        CHECK(error.contains(QStringLiteral("target")));
    }
    SECTION("models that are no encoder-decoder show no target box") {
        open(QStringLiteral("builtin:sentiment-dot"));
        CHECK_FALSE(target->isVisible());
        CHECK(controls->targetText().isEmpty());
    }
}

TEST_CASE_METHOD(WindowFixture, "export dialog: the alignment figure as SVG and PDF, marks on core's argmax",
                 "[ui][window][seq2seq][export]") {
    open(QStringLiteral("builtin:reverse-dot"));
    runPair(*this, QStringLiteral("q7k2m9"), QString());
    const fs::path dir = freshDir("ui-alignment");
    ExportDialog* dialog = openExportDialog(*this);
    auto* choice = dialog->findChild<QComboBox*>(QStringLiteral("figureChoice"));
    REQUIRE(choice);
    REQUIRE(choice->isVisible());
    // The map, this cross head's alignment, the last layer's mean, then the batch figures
    // (the layer's heads, every layer).
    REQUIRE(choice->count() == 5);
    CHECK(choice->itemText(2).contains(QStringLiteral("mean")));

    SECTION("SVG of the mean: parses, source along the top and target down the side as text") {
        choice->setCurrentIndex(2);
        CHECK(dialog->path().endsWith(QStringLiteral("_alignment_mean.pdf")));
        const QString svg = qpath(dir / "align.svg");
        dialog->setPath(svg);
        clickSave(dialog);
        REQUIRE(QFile::exists(svg));
        const QStringList texts = svgTexts(svg);
        for (const char* t : {"source", "target", "q", "7", "k", "2", "m", "9", "<s>"}) {
            INFO(t);
            CHECK(texts.contains(QString::fromLatin1(t)));
        }
        CHECK(texts.join(QLatin1Char(' ')).contains(QStringLiteral("every head of the last layer")));
    }
    SECTION("PDF of this head: a PDF with its fonts") {
        choice->setCurrentIndex(1);
        const QString pdf = qpath(dir / "align.pdf");
        dialog->setPath(pdf);
        clickSave(dialog);
        QFile f(pdf);
        REQUIRE(f.open(QIODevice::ReadOnly));
        const QByteArray bytes = f.readAll();
        CHECK(bytes.startsWith("%PDF-"));
        CHECK(bytes.contains("/FontFile2"));
    }
    SECTION("the marks sit on the cells core's alignment picks, and nowhere else") {
        const auto trace = session->trace();
        Figure f = alignmentFigure(*trace, {}, QStringLiteral("reverse-dot"));
        const attnscope::Alignment a = attnscope::alignTrace(*trace);
        REQUIRE(f.panels[0].rowMarks == a.rowArgmax);
        // Known alignment: the row that writes target token i marks source token 5 - i.
        for (int r = 0; r < 6; ++r) CHECK(a.rowArgmax[std::size_t(r)] == 5 - r);
        CHECK(a.rowArgmax[6] == -1);  // the row that predicts </s>
        f.widthIn = 4;
        const QImage image = renderFigure(f, 200);
        // Find the map's frame from the mark colour: every marked cell has it at its centre.
        int marked = 0;
        for (int y = 0; y < image.height(); ++y)
            for (int x = 0; x < image.width(); ++x)
                if (QColor(image.pixel(x, y)) == kFigureMarkColor) ++marked;
        CHECK(marked > 6 * 10);  // six dots of more than a few pixels each
        f.panels[0].rowMarks.clear();
        const QImage plain = renderFigure(f, 200);
        int none = 0;
        for (int y = 0; y < plain.height(); ++y)
            for (int x = 0; x < plain.width(); ++x)
                if (QColor(plain.pixel(x, y)) == kFigureMarkColor) ++none;
        CHECK(none == 0);
    }
    dialog->close();
    fs::remove_all(dir);
}

}  // namespace test_window_seq2seq
