// attnscope-cli compare-models: two models on the same ids, head by head
// (lab/model_comparison.h): a GGUF file against the safetensors copy of the same model, or any
// two checkpoints of one architecture. The figure is drawn through ui/figure (the Qt build).
#include "commands.h"
#include "common.h"

#include "attnscope/io/atomic_file.h"
#include "attnscope/io/npy.h"
#include "attnscope/lab/model_comparison.h"
#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"

#include <nlohmann/json.hpp>

#include <iostream>

#ifdef ATTNSCOPE_CLI_EXPORT
#include "figure/comparisonfigure.h"
#include "headless_qt.h"
#endif

namespace attnscope::cli {

namespace {

nlohmann::json topJson(const std::vector<TokenProbability>& top) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& t : top) out.push_back({{"id", t.id}, {"token", t.label}, {"probability", t.probability}});
    return out;
}

nlohmann::json reportJson(const ModelComparison& c, const Model& a, const Model& b,
                          const std::vector<std::string>& specs, bool tokenizersAgree) {
    nlohmann::json blocks = nlohmann::json::array();
    for (const auto& x : c.blocks)
        blocks.push_back({{"block", x.block},
                          {"layers", x.layers},
                          {"heads", x.heads},
                          {"mean_kl", x.meanKl},
                          {"max_kl", x.maxKl},
                          {"max_kl_layer", x.worstLayer},
                          {"max_kl_head", x.worstHead}});
    const auto model = [](const Model& m, const std::string& spec) {
        return nlohmann::json{{"model", spec},
                              {"family", m.info().family},
                              {"dtype", m.info().dtype},
                              {"parameters", m.info().parameters}};
    };
    const OutputChange& o = c.output;
    return {{"a", model(a, specs[0])},
            {"b", model(b, specs[1])},
            {"tokens", c.tokens},
            {"tokenizers_agree", tokenizersAgree},
            {"map_kl", "mean over query rows of KL(A || B), nats, per head: kl.npy [layers, heads]"},
            {"blocks", blocks},
            {"output",
             {{"kind", o.kind},
              {"kl", o.kl},
              {"top1_agree", o.sameTop},
              {"top_a", topJson(o.originalTop)},
              {"top_b", topJson(o.changedTop)}}}};
}

int runCompareModels(const std::vector<std::string>& argv) {
    Args args(argv, {"ids", "text", "out", "device", "weights", "capture-dtype"}, {"progress"});
    args.expectPositionals(2);
    const std::string outArg = args.required("out");
    const std::vector<std::string> specs = {args.positional(0, "MODEL_A"), args.positional(1, "MODEL_B")};
    const auto a = loadModel(args, 0);
    const auto b = loadModel(args, 1);
    const std::vector<std::int64_t> ids = inputIds(args, *a);
    bool tokenizersAgree = true;
    if (const auto text = args.value("text"); text && b->hasTokenizer()) {
        tokenizersAgree = b->encodeText(*text) == ids;
        if (!tokenizersAgree)
            std::cerr << "note: the second model's tokenizer splits the text differently; both run on the first "
                         "model's ids\n";
    }
    RunOptions options;
    applyRunFlags(args, options, "forward");
    const ModelComparison c = compareModels(*a, *b, ids, options);

    const std::filesystem::path out = prepareOutDir(outArg);
    StagedOutputs staged(out);  // every file, or none
    std::vector<std::string> written;
    for (std::size_t i = 0; i < c.blocks.size(); ++i) {
        const BlockComparison& x = c.blocks[i];
        const std::string stem = c.blocks.size() == 1 ? "" : x.block + "_";
        writeNpy(staged.path(stem + "kl.npy"), {x.layers, x.heads}, std::vector<float>(x.kl.begin(), x.kl.end()));
        written.push_back(stem + "kl.npy");
    }
    writeFileAtomically(staged.path("report.json"), reportJson(c, *a, *b, specs, tokenizersAgree).dump(2) + "\n");
    written.push_back("report.json");
#ifdef ATTNSCOPE_CLI_EXPORT
    {
        const HeadlessQt qt;
        for (const BlockComparison& x : c.blocks) {
            const std::string name = (c.blocks.size() == 1 ? std::string() : x.block + "_") + "kl.pdf";
            writeFigure(modelComparisonFigure(x, QString::fromStdString(a->info().path.filename().string()),
                                              QString::fromStdString(b->info().path.filename().string())),
                        QString::fromStdString(staged.path(name).string()));
            written.push_back(name);
        }
    }
#else
    std::cerr << "figure skipped: this attnscope-cli was built without the Qt UI (ATTNSCOPE_BUILD_UI=OFF)\n";
#endif
    staged.commit();
    const OutputChange& o = c.output;
    std::cout << c.tokens << " tokens: output KL " << o.kl << " nats, top-1 " << (o.sameTop ? "agrees" : "differs");
    for (const auto& x : c.blocks)
        std::cout << "; " << x.block << " map KL mean " << x.meanKl << ", max " << x.maxKl << " at layer "
                  << x.worstLayer << " head " << x.worstHead;
    std::cout << "\n";
    for (const std::string& name : written) std::cerr << "wrote " << (out / name).string() << "\n";
    return 0;
}

}  // namespace

Command compareModelsCommand() {
    return {"compare-models", "two models on one input: per-head map KL and the output change (quantised vs full)",
            "usage: attnscope-cli compare-models MODEL_A MODEL_B (--ids IDS | --text TEXT) --out DIR\n"
            "                                    [--device cpu|cuda|auto] [--weights auto|convert|stream]\n"
            "                                    [--capture-dtype compute|float16|bfloat16] [--progress]\n\n"
            "Runs both models (folders, GGUF files, ollama:NAME[:TAG], hub ids, builtin:NAME) on the same ids\n"
            "(--text is tokenized by MODEL_A; a note says when MODEL_B's tokenizer splits it differently) and\n"
            "compares them head by head: for each layer and head the mean over query rows of KL(A || B) of the\n"
            "two maps, in nats. The models must have the same blocks, layers and heads.\n"
            "Writes DIR/kl.npy float32 [layers, heads] (BLOCK_kl.npy per block for encoder-decoders),\n"
            "DIR/report.json (each model's family and dtype; per block the mean and largest KL and where;\n"
            "the output: next-token KL(A || B), whether the top-1 tokens agree, the top-5 of each) and\n"
            "DIR/kl.pdf (layer x head, log colour scale).\n",
            runCompareModels};
}

}  // namespace attnscope::cli
