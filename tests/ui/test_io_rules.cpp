// The GUI's files follow core's output and input rules (issue 37): figure and map-data exports
// replace a link's target and keep the link, refuse a FIFO or a folder with "PATH: not a regular
// file" (the message the export dialog shows), and File > Open Workspace refuses a FIFO or a
// device instead of waiting on it or reading it without end. Special files are made in the
// test's own folder only; /dev/null is only read.
#include "figure/figure.h"
#include "figure/mapdata.h"
#include "figure/workspace.h"

#include "attnscope/runtime/error.h"
#include "gpt2_fixture.h"
#include "special_files.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>

namespace test_io_rules {

using namespace attnscope::testing;
namespace fs = std::filesystem;

namespace {

QString qpath(const fs::path& p) { return QString::fromStdString(p.string()); }

std::string errorOf(const std::function<void()>& f) {
    try {
        f();
    } catch (const attnscope::Error& e) {
        return e.what();
    }
    return "(no error)";
}

Figure oneMapFigure() {
    attnscope::HeadMap m;
    m.rows = m.cols = 2;
    m.values = {1.0f, 0.0f, 0.5f, 0.5f};
    Figure f;
    f.panels.push_back({m, {"a", "b"}, {"a", "b"}, QString()});
    return f;
}

}  // namespace

TEST_CASE("GUI exports: a link's target is replaced, FIFOs and folders are refused", "[ui][rules]") {
    const auto dir = freshDir("ui-rules-out");
    fs::create_directories(dir / "real");
    writeText(dir / "real" / "f.png", "old");
    fs::create_symlink("real/f.png", dir / "f.png");
    writeFigure(oneMapFigure(), qpath(dir / "f.png"));
    CHECK(fs::is_symlink(dir / "f.png"));
    std::ifstream in(dir / "real" / "f.png", std::ios::binary);
    const std::string png{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    CHECK(png.rfind("\x89PNG", 0) == 0);

    REQUIRE(makeFifo(dir / "pipe.svg"));
    CHECK(errorOf([&] { writeFigure(oneMapFigure(), qpath(dir / "pipe.svg")); }) ==
          (dir / "pipe.svg").string() + ": not a regular file");
    CHECK(isFifo(dir / "pipe.svg"));
    fs::create_directories(dir / "folder.csv");
    CHECK(errorOf([&] {
              writeMapData(oneMapFigure().panels[0].map, {"a", "b"}, {"a", "b"}, qpath(dir / "folder.csv"));
          }) == (dir / "folder.csv").string() + ": not a regular file");
    CHECK(fs::is_directory(dir / "folder.csv"));
}

TEST_CASE("GUI Open Workspace refuses FIFOs and devices", "[ui][rules][workspace]") {
    const auto dir = freshDir("ui-rules-in");
    REQUIRE(makeFifo(dir / "w.attnscope"));
    const FifoUnblocker unblock(dir / "w.attnscope");  // without the rule the open would wait forever
    CHECK(errorOf([&] { readWorkspace(qpath(dir / "w.attnscope")); }) ==
          (dir / "w.attnscope").string() + ": not a regular file");
    CHECK(errorOf([&] { readWorkspace(QStringLiteral("/dev/null")); }) == "/dev/null: not a regular file");
}

}  // namespace test_io_rules
