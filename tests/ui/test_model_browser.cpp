// The model browser (panels/modelbrowser.h) over a tree made here: a hub cache, a GGUF file
// written by the tests' GGUF writer in an LM Studio folder, a folder AttnScope cannot open. The
// filter narrows the rows, Enter opens the first one shown, an unopenable row says why; in the
// window, File > Open Model… opens the browser and the row chosen loads. The Compare Models
// dialog shows core's per-head KL of a Q8_0 GGUF copy.
#include "figure/comparisonfigure.h"
#include "panels/comparemodelsdialog.h"
#include "panels/modelbrowser.h"
#include "panels/modelpicker.h"
#include "window_fixture.h"

#include "family_checks.h"
#include "gguf_writer.h"

#include <QDir>
#include <QLabel>
#include <QSettings>
#include <QTreeView>

namespace test_model_browser {

using namespace attnscope;
using namespace attnscope::testing;
namespace fs = std::filesystem;

namespace {

// hub/models--org--tiny (a GPT-2 folder copied into a snapshot), lmstudio/pub/repo/tiny-Q8_0.gguf,
// mine/mamba (an unsupported model_type).
CatalogSources browserTree(const std::string& name) {
    const fs::path root = freshDir(name);
    const std::string commit(40, 'c');
    const fs::path snapshot = root / "hub" / "models--org--tiny" / "snapshots" / commit;
    fs::create_directories(snapshot);
    writeText(root / "hub" / "models--org--tiny" / "refs" / "main", commit);
    Gpt2Spec spec;
    writeGpt2Folder(snapshot, makeGpt2(spec, 2));
    LlamaSpec llama;
    llama.hidden = 64;  // whole Q8_0 blocks
    llama.inner = 64;
    fs::create_directories(root / "lmstudio" / "pub" / "repo");
    ggufFromCheckpoint(makeLlama(llama, 4), "llama", Ggml::Q8_0)
            .write(root / "lmstudio" / "pub" / "repo" / "tiny-Q8_0.gguf");
    fs::create_directories(root / "mine" / "mamba");
    writeText(root / "mine" / "mamba" / "config.json", R"({"model_type": "mamba"})");
    CatalogSources s;
    s.hubCache = root / "hub";
    s.lmStudio = {root / "lmstudio"};
    s.folders = {root / "mine"};
    s.builtins = false;
    return s;
}

// Environment variables set for one scope, restored after.
class EnvScope {
public:
    explicit EnvScope(const std::vector<std::pair<const char*, std::string>>& vars) {
        for (const auto& [name, value] : vars) {
            saved_.push_back({name, qgetenv(name), qEnvironmentVariableIsSet(name)});
            qputenv(name, QByteArray::fromStdString(value));
        }
    }
    ~EnvScope() {
        for (const auto& s : saved_)
            if (s.set)
                qputenv(s.name, s.value);
            else
                qunsetenv(s.name);
    }

private:
    struct Saved {
        const char* name;
        QByteArray value;
        bool set;
    };
    std::vector<Saved> saved_;
};

void waitForScan(ModelBrowser& b) {
    if (!b.isScanning()) return;
    QSignalSpy done(&b, &ModelBrowser::scanFinished);
    REQUIRE(done.wait(20000));
}

}  // namespace

TEST_CASE("Model browser: rows say what each model is, the filter narrows them, Enter opens", "[ui][browser]") {
    ModelBrowser browser(browserTree("ui-browser"));
    browser.show();
    waitForScan(browser);
    REQUIRE(browser.entries().size() == 3);
    CHECK(browser.shownRows() == 3);
    auto* view = browser.findChild<QTreeView*>(QStringLiteral("modelList"));
    REQUIRE(view);
    const auto cell = [&](int row, int col) { return view->model()->index(row, col).data().toString(); };
    CHECK(cell(0, ModelBrowser::Name) == QStringLiteral("mamba"));
    CHECK(cell(0, ModelBrowser::Status).startsWith(QStringLiteral("no: no weights: no model.safetensors")));
    CHECK(cell(1, ModelBrowser::Name) == QStringLiteral("org/tiny"));
    CHECK(cell(1, ModelBrowser::Source) == QStringLiteral("HF cache"));
    CHECK(cell(1, ModelBrowser::Family) == QStringLiteral("gpt2"));
    CHECK(cell(1, ModelBrowser::Type) == QStringLiteral("F32"));
    CHECK(cell(1, ModelBrowser::Status) == QStringLiteral("yes"));
    CHECK(cell(2, ModelBrowser::Type) == QStringLiteral("Q8_0"));
    CHECK(cell(2, ModelBrowser::Source) == QStringLiteral("LM Studio"));
    CHECK(cell(2, ModelBrowser::Size) == QLocale::c().formattedDataSize(qint64(browser.entries()[2].bytes), 2));
    CHECK(cell(2, ModelBrowser::Parameters) == formatParameters(browser.entries()[2].parameters));

    auto* filter = browser.findChild<QLineEdit*>(QStringLiteral("modelFilter"));
    REQUIRE(filter);
    QSignalSpy chosen(&browser, &ModelBrowser::modelChosen);

    // Typing narrows (every word, any column, any case); Enter on an unopenable row says why.
    QTest::keyClicks(filter, QStringLiteral("MAMBA"));
    CHECK(browser.shownRows() == 1);
    QTest::keyClick(filter, Qt::Key_Return);
    CHECK(chosen.isEmpty());
    CHECK(browser.findChild<QLabel*>(QStringLiteral("browserStatus"))
                  ->text()
                  .contains(QStringLiteral("cannot be opened")));
    CHECK(browser.isVisible());

    filter->clear();
    QTest::keyClicks(filter, QStringLiteral("llama q8"));
    CHECK(browser.shownRows() == 1);
    QTest::keyClick(filter, Qt::Key_Return);
    REQUIRE(chosen.size() == 1);  // once: the dialog's default button does not open it again
    CHECK(chosen.at(0).at(0).toString() == QString::fromStdString(browser.entries()[2].spec));
    CHECK_FALSE(browser.isVisible());
}

TEST_CASE_METHOD(uitest::WindowFixture, "File > Open Model… browses the models and opens the chosen one",
                 "[ui][browser][window]") {
    const CatalogSources tree = browserTree("ui-browser-window");
    const EnvScope env({{"HF_HUB_CACHE", tree.hubCache.string()},
                        {"HF_HOME", ""},
                        {"HOME", (tree.hubCache.parent_path() / "home").string()},
                        {"OLLAMA_MODELS", (tree.hubCache.parent_path() / "no-ollama").string()}});
    auto* action = window.findChild<QAction*>(QStringLiteral("browseModelsAction"));
    REQUIRE(action);
    action->trigger();
    auto* browser = window.findChild<ModelBrowser*>(QStringLiteral("modelBrowser"));
    REQUIRE(browser);
    waitForScan(*browser);
    browser->setFilter(QStringLiteral("org/tiny"));
    REQUIRE(browser->shownRows() == 1);
    QSignalSpy loaded(session, &Session::modelLoaded);
    QTest::keyClick(browser->findChild<QLineEdit*>(QStringLiteral("modelFilter")), Qt::Key_Enter);
    REQUIRE(loaded.wait(20000));
    CHECK(session->model()->info().family == "gpt2");
    CHECK(session->modelSpec().contains(QStringLiteral("models--org--tiny")));  // the id's snapshot in $HF_HUB_CACHE
}

TEST_CASE("Recent models keep ids and ollama:NAME as given, paths absolute", "[ui][browser]") {
    const QStringList before = ModelPicker::recentFolders();
    const fs::path folder = freshDir("ui-recent-spec");
    ModelPicker picker;
    // Opened through a model id or an Ollama name: reopening must resolve them again, so they are
    // not turned into paths under the current folder.
    for (const QString& id : {QStringLiteral("ollama:tiny:q4"), QStringLiteral("org-x/never-a-folder")}) {
        picker.setCurrentSpec(id);
        CHECK(ModelPicker::recentFolders().value(0) == id);
        CHECK(picker.currentSpec() == id);
        CHECK(picker.currentData().toString() == id);
    }
    // A path that exists is kept absolute and clean.
    const QString dotted = uitest::qpath(folder) + QStringLiteral("/./");
    picker.setCurrentSpec(dotted);
    const QString clean = QDir::cleanPath(QFileInfo(uitest::qpath(folder)).absoluteFilePath());
    CHECK(ModelPicker::recentFolders().value(0) == clean);
    CHECK(picker.currentData().toString() == clean);
    QSettings().setValue(QStringLiteral("recentModelFolders"), before);
    fs::remove_all(folder);
}

TEST_CASE("Compare with another model: a Q8_0 GGUF copy's per-head KL, shown as a figure", "[ui][compare_models]") {
    LlamaSpec spec;
    spec.hidden = 64;  // whole Q8_0 blocks
    spec.inner = 64;
    const Checkpoint c = makeLlama(spec, 12);
    const fs::path dir = freshDir("ui-compare-models");
    writeCheckpoint(dir / "full", c);
    ggufFromCheckpoint(c, "llama", Ggml::Q8_0).write(dir / "q8.gguf");
    const auto a = loadCpu(dir / "full");
    const std::vector<std::int64_t> ids = {3, 1, 4, 1, 5, 9, 2, 6};
    CompareModelsDialog dialog(a, QStringLiteral("full"), ids);
    dialog.show();

    QSignalSpy done(&dialog, &CompareModelsDialog::comparisonDone);
    dialog.compareWith(QStringLiteral("/no/such/model"));
    REQUIRE(done.wait(20000));
    CHECK_FALSE(dialog.result());
    CHECK(dialog.error().contains(QStringLiteral("no such model folder")));

    dialog.compareWith(QString::fromStdString((dir / "q8.gguf").string()));
    REQUIRE(done.wait(20000));
    REQUIRE(dialog.result());
    const ModelComparison want = compareModels(*a, *loadCpu(dir / "q8.gguf"), ids);
    REQUIRE(dialog.result()->blocks.at(0).kl.size() == want.blocks.at(0).kl.size());
    for (std::size_t i = 0; i < want.blocks[0].kl.size(); ++i) {
        CHECK(dialog.result()->blocks[0].kl[i] == Approx(want.blocks[0].kl[i]).epsilon(1e-6));
        CHECK(want.blocks[0].kl[i] > 0);
    }
    CHECK(dialog.findChild<QLabel*>(QStringLiteral("compareModelsSummary"))->text() == modelComparisonSummary(want));
    CHECK_FALSE(dialog.figureImage().isNull());
}

// Screenshots for the notes (not run by ctest): ATTNSCOPE_SHOTS=DIR attnscope_ui_tests "[.shots]".
TEST_CASE("Model browser and model comparison screenshots", "[.shots]") {
    const QString dir = qEnvironmentVariable("ATTNSCOPE_SHOTS");
    REQUIRE_FALSE(dir.isEmpty());
    CatalogSources tree = browserTree("ui-browser-shots");
    tree.builtins = true;
    ModelBrowser browser(tree);
    browser.resize(1000, 420);
    browser.show();
    waitForScan(browser);
    QTest::qWait(200);
    CHECK(browser.grab().save(dir + QStringLiteral("/browser.png")));
    browser.setFilter(QStringLiteral("llama"));
    QTest::qWait(100);
    CHECK(browser.grab().save(dir + QStringLiteral("/browser-filtered.png")));

    LlamaSpec spec;
    spec.hidden = 128;
    spec.inner = 128;
    spec.layers = 6;
    spec.heads = 8;
    spec.kvHeads = 4;
    const Checkpoint c = makeLlama(spec, 5);
    const fs::path models = freshDir("ui-compare-shots");
    writeCheckpoint(models / "llama-f32", c);
    ggufFromCheckpoint(c, "llama", Ggml::Q4_0).write(models / "llama-Q4_0.gguf");
    std::vector<std::int64_t> ids;
    for (int i = 0; i < 24; ++i) ids.push_back((i * 7 + 3) % spec.vocab);
    CompareModelsDialog dialog(loadCpu(models / "llama-f32"), QStringLiteral("llama-f32"), ids);
    dialog.show();
    QSignalSpy done(&dialog, &CompareModelsDialog::comparisonDone);
    dialog.compareWith(QString::fromStdString((models / "llama-Q4_0.gguf").string()));
    REQUIRE(done.wait(60000));
    QTest::qWait(200);
    CHECK(dialog.grab().save(dir + QStringLiteral("/compare-q4_0-vs-f32.png")));
}

}  // namespace test_model_browser
