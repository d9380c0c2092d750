// Corpus plots through ui/figure (see cmd_corpus_plots.h).
#include "cmd_corpus_plots.h"

#include "attnscope/runtime/error.h"

#include <iostream>
#include <memory>

#ifdef ATTNSCOPE_CLI_EXPORT
#include "figure/corpusfigures.h"
#include "headless_qt.h"
#endif

namespace attnscope::cli {

#ifdef ATTNSCOPE_CLI_EXPORT

void writePruningComparison(const std::vector<CorpusResult>& results, const std::vector<std::string>& names,
                            const std::filesystem::path& file) {
    const HeadlessQt qt;
    std::vector<QString> qnames;
    for (const auto& n : names) qnames.push_back(QString::fromStdString(n));
    CurveFigure f = pruningFigure(results, qnames);
    writeCurveFigure(f, QString::fromStdString(file.string()));
}

void writeCorpusPlots(const CorpusResult& r, const std::filesystem::path& dir) {
    const HeadlessQt qt;
    if (auto fig = importanceFigure(r)) {
        writeFigure(*fig, QString::fromStdString((dir / "importance.pdf").string()));
        std::cerr << "wrote " << (dir / "importance.pdf").string() << "\n";
    }
    if (!r.pruning.empty()) {
        writeCurveFigure(pruningFigure({r}, {}), QString::fromStdString((dir / "pruning.pdf").string()));
        std::cerr << "wrote " << (dir / "pruning.pdf").string() << "\n";
    }
}

#else

void writePruningComparison(const std::vector<CorpusResult>&, const std::vector<std::string>&,
                            const std::filesystem::path&) {
    throw Error("corpus-plot is unavailable: this attnscope-cli was built without the Qt UI (ATTNSCOPE_BUILD_UI=OFF)");
}

void writeCorpusPlots(const CorpusResult&, const std::filesystem::path&) {
    std::cerr << "plots skipped: this attnscope-cli was built without the Qt UI (ATTNSCOPE_BUILD_UI=OFF)\n";
}

#endif

}  // namespace attnscope::cli
