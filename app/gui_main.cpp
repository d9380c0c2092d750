// attnscope [MODEL] [--image FILE]: the desktop attention explorer. Wiring only; the window lives in attnscope_ui.
#include "window/mainwindow.h"
#include "attnscope/models/model.h"
#include "attnscope/runtime/allocator.h"
#include "attnscope/runtime/blas_kernels.h"
#include "attnscope/runtime/version.h"

#include <QApplication>
#include <QCommandLineParser>

#include <algorithm>
#include <cstring>
#include <memory>

namespace {

constexpr const char* kDefaultModel = "reverse-dot";

// --help and --version print text and exit; they get a QCoreApplication so they work without a
// display (the pattern from QApplication's documentation).
std::unique_ptr<QCoreApplication> createApplication(int& argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        for (const char* flag : {"-h", "--help", "--help-all", "-?", "-v", "--version"})
            if (std::strcmp(argv[i], flag) == 0) return std::make_unique<QCoreApplication>(argc, argv);
    }
    return std::make_unique<QApplication>(argc, argv);
}

}  // namespace

int main(int argc, char** argv) {
    attnscope::ensureBlasKernels(argv);  // may re-execute with kernels OpenBLAS did not pick itself
    attnscope::shortenBlasSpin();
    attnscope::tuneAllocator();
    const auto app = createApplication(argc, argv);
    QCoreApplication::setOrganizationName(QStringLiteral("AttnScope"));
    QCoreApplication::setApplicationName(QStringLiteral("AttnScope"));
    QCoreApplication::setApplicationVersion(QString::fromLatin1(attnscope::kVersion));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Explore what every attention head of a transformer attends to."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(
            QStringLiteral("MODEL"),
            QStringLiteral("A model folder (config.json + model.safetensors or pytorch_model.bin) or a file in "
                           "one, a model id (org/name) in the Hugging Face cache, a GGUF file, "
                           "ollama:NAME[:TAG], builtin:NAME, a workspace FILE.attnscope or an "
                           "attention file (.npy of maps, tokens.json beside it) to open (default: "
                           "builtin:reverse-dot with an example input)."),
            QStringLiteral("[MODEL]"));
    const QCommandLineOption image(QStringLiteral("image"), QStringLiteral("An image for image models (ViT)."),
                                   QStringLiteral("FILE"));
    parser.addOption(image);
    const QCommandLineOption corpus(
            QStringLiteral("corpus"),
            QStringLiteral("A corpus result folder (attnscope-cli corpus) to show in the Corpus tab."),
            QStringLiteral("DIR"));
    parser.addOption(corpus);
    parser.process(*app);  // exits for --help, --version and unknown options
    const QStringList args = parser.positionalArguments();
    if (args.size() > 1) {
        parser.showHelp(1);
    }

    MainWindow window;
    window.restoreWindowLayout();  // the size and docks of the last session
    window.show();
    if (parser.isSet(image)) window.setImageFile(parser.value(image));
    if (parser.isSet(corpus)) window.openCorpusResult(parser.value(corpus));
    if (!args.isEmpty() && args.first().endsWith(QLatin1String(".npy"), Qt::CaseInsensitive)) {
        window.openAttentionFile(args.first());
    } else if (!args.isEmpty() && args.first().endsWith(QLatin1String(".attnscope"))) {
        window.openWorkspaceFile(args.first());  // a saved workspace: its model, input and view
    } else if (!args.isEmpty()) {
        window.openModel(args.first());
    } else {
        // The default: a built-in model with an example input already run.
        const auto builtin = attnscope::builtinModels();
        const bool hasDefault = std::any_of(builtin.begin(), builtin.end(),
                                            [](const attnscope::BuiltinModel& b) { return b.name == kDefaultModel; });
        if (hasDefault)
            window.openModel(QStringLiteral("builtin:") + QString::fromLatin1(kDefaultModel));
        else if (!builtin.empty())
            window.openModel(QStringLiteral("builtin:") + QString::fromStdString(builtin.front().name));
    }
    return app->exec();
}
