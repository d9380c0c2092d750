// The views dock (line, neuron, query–key views) on the real window: raise it, show one view,
// wait for core's values; and checks that an exported figure parses.
#pragma once

#include "window_fixture.h"

#include "figure/paintedfigure.h"
#include "views/figurecanvas.h"
#include "views/lineview.h"
#include "views/neuronview.h"
#include "views/qkspaceview.h"
#include "controllers/viewscontroller.h"

#include <QDockWidget>
#include <QFile>
#include <QImage>
#include <QRegularExpression>
#include <QXmlStreamReader>

namespace uitest {

struct ViewsFixture : WindowFixture {
    ViewsController* views = window.views();

    ViewsFixture() {
        auto* dock = window.findChild<QDockWidget*>(QStringLiteral("viewsDock"));
        REQUIRE(dock);
        dock->show();
        dock->raise();
        window.resize(1500, 950);
        // The dock starts slim (the map gets the space) and scrolls: widen it as a user would.
        window.resizeDocks({dock}, {700}, Qt::Horizontal);
    }
    ~ViewsFixture() { views->waitForWorkers(); }

    // Shows `view` and waits for `shown` (linesShown, neuronShown, qkShown) after asking again.
    template <typename Signal>
    void show(QWidget* view, Signal shown) {
        QSignalSpy spy(views, shown);
        views->tabs()->setCurrentWidget(view);
        views->refresh();
        REQUIRE(spy.wait(20000));
        QTest::qWait(20);
    }
    // Runs `action` and waits for the view's next values.
    template <typename Signal, typename Fn>
    void after(Signal shown, Fn action) {
        QSignalSpy spy(views, shown);
        action();
        REQUIRE(QTest::qWaitFor([&] { return spy.count() > 0; }, 20000));
        QTest::qWait(20);
    }
};

inline QByteArray readAll(const QString& path) {
    QFile f(path);
    REQUIRE(f.open(QIODevice::ReadOnly));
    return f.readAll();
}

// A PDF with a page of width widthPt that keeps its text as text; an SVG whose root is <svg> and
// whose texts include `text`; a PNG that decodes at the width widthPt at 300 dpi.
inline void requireFigureFiles(const QString& pdf, const QString& svg, const QString& png, double widthPt,
                               const QString& text) {
    const QByteArray p = readAll(pdf);
    CHECK(p.startsWith("%PDF-"));
    const auto box =
            QRegularExpression(QStringLiteral("/MediaBox \\[0 0 ([0-9.]+) ([0-9.]+)\\]")).match(QString::fromLatin1(p));
    REQUIRE(box.hasMatch());
    CHECK(box.captured(1).toDouble() == Approx(widthPt).margin(1));
    CHECK(box.captured(2).toDouble() > 20);
    CHECK(p.contains("/FontFile2"));
    QFile file(svg);
    REQUIRE(file.open(QIODevice::ReadOnly));
    QXmlStreamReader xml(&file);
    REQUIRE(xml.readNextStartElement());
    CHECK(xml.name() == QLatin1String("svg"));
    QStringList texts;
    while (!xml.atEnd()) {
        xml.readNext();
        if (xml.isStartElement() && xml.name() == QLatin1String("text"))
            texts << xml.readElementText(QXmlStreamReader::IncludeChildElements).trimmed();
    }
    CHECK_FALSE(xml.hasError());
    INFO("SVG texts: " << texts.join(QStringLiteral(" | ")).toStdString());
    CHECK(texts.contains(text));
    const QImage image(png);
    REQUIRE_FALSE(image.isNull());
    CHECK(image.width() == int(std::lround(widthPt * 300 / 72)));
    CHECK(image.dotsPerMeterX() == int(std::lround(300 / 0.0254)));
}

}  // namespace uitest
