#include "commands.h"
#include "common.h"

#include "attnscope/error.h"
#include "attnscope/model.h"
#include "attnscope/npy.h"
#include "attnscope/trace.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <iostream>

namespace attnscope::cli {

namespace {

// Writes one block's maps as [layers, heads, queries, keys] float32.
void writeBlock(const Trace& trace, int b, const MapOptions& mapOptions, const std::filesystem::path& file) {
    const BlockInfo& block = trace.blocks()[b];
    const auto rows = static_cast<std::int64_t>(block.queryTokens.size());
    const auto cols = static_cast<std::int64_t>(block.keyTokens.size());
    NpyWriter npy(file, {block.layers, block.heads, rows, cols});
    for (int l = 0; l < block.layers; ++l)
        for (int h = 0; h < block.heads; ++h) {
            const HeadMap map = trace.map(b, l, h, mapOptions);
            npy.append(map.values.data(), map.values.size());
        }
    npy.finish();
    std::cerr << "wrote " << file.string() << " [" << block.layers << ", " << block.heads << ", " << rows << ", " << cols
              << "]\n";
}

int runAttention(const std::vector<std::string>& argv) {
    Args args(argv, {"ids", "text", "out", "device", "temperature"}, {});
    args.expectPositionals(1);
    const std::string outArg = args.required("out");
    if (args.value("ids")) parseIds(*args.value("ids"));  // malformed ids fail before loading
    MapOptions mapOptions;
    mapOptions.temperature = args.number("temperature").value_or(1.0);
    if (!(mapOptions.temperature > 0) || !std::isfinite(mapOptions.temperature))
        throw Error("--temperature must be a finite number > 0");

    auto model = loadModel(args);
    const std::vector<std::int64_t> ids = inputIds(args, *model);
    auto trace = model->forward(ids);
    const std::filesystem::path out = prepareOutDir(outArg);

    // One block ("self") is attention.npy; models with several write one file per block.
    const auto& blocks = trace->blocks();
    for (int b = 0; b < static_cast<int>(blocks.size()); ++b)
        writeBlock(*trace, b, mapOptions, out / (blocks.size() == 1 ? std::string("attention.npy") : blocks[b].name + ".npy"));

    nlohmann::json tokens = {{"ids", trace->ids()}, {"tokens", trace->tokens()}};
    // Encoder-decoder: "source" labels the columns of cross.npy, "target" its rows (the decoder's
    // inputs, starting with the start symbol); "output" is the decoded text without marks.
    for (const auto& block : blocks)
        if (block.name == "cross") {
            tokens["source"] = block.keyTokens;
            tokens["target"] = block.queryTokens;
            tokens["output"] = trace->outputTokens();
            tokens["output_ids"] = trace->outputIds();
        }
    if (!trace->classLabels().empty()) {
        const auto& p = trace->classProbabilities();
        const auto best = std::max_element(p.begin(), p.end()) - p.begin();
        tokens["label"] = trace->classLabels()[best];
        tokens["labels"] = trace->classLabels();
        tokens["probabilities"] = p;
    }
    for (const auto& block : blocks) tokens["blocks"][block.name] = {{"kind", kindName(block.kind)}, {"queries", block.queryTokens}, {"keys", block.keyTokens}};
    writeTextFile(out / "tokens.json", tokens.dump(2) + "\n");
    std::cerr << "wrote " << (out / "tokens.json").string() << "\n";
    return 0;
}

}  // namespace

Command attentionCommand() {
    return {"attention", "run a model and write its attention maps (.npy)",
    "usage: attnscope-cli attention MODEL (--ids 3,17,42 | --text STRING) --out DIR [--device cpu|cuda|auto]\n"
    "                               [--temperature T]\n\n"
    "Runs the model on the token ids (used exactly as given) or on the text (through the model's\n"
    "tokenizer) and writes\n"
    "  DIR/attention.npy  float32, C order, [layers, heads, seq, seq]; row = query, column = key\n"
    "                     (models with several attention blocks write BLOCK.npy per block, e.g.\n"
    "                     encoder.npy, decoder.npy, cross.npy [layers, heads, target, source])\n"
    "  DIR/tokens.json    ids, tokens, the labels of each block's rows and columns, and the\n"
    "                     model's outputs: for an encoder-decoder \"source\" (one label per\n"
    "                     column), \"target\" (one per row: the start symbol <s>, then each\n"
    "                     decoded symbol as fed back to the decoder) and \"output\" (the greedy\n"
    "                     decode); for a classifier \"label\" and \"probabilities\"\n"
    "MODEL is a model folder or builtin:NAME.\n"
    "--temperature T divides the attention logits by T before the softmax (display only).\n"
    "Invalid input exits with code 2 and one 'error: ...' line.\n",
            runAttention};
}

}  // namespace attnscope::cli
