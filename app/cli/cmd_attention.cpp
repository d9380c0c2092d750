#include "commands.h"
#include "common.h"
#include "image_file.h"

#include "attnscope/error.h"
#include "attnscope/model.h"
#include "attnscope/npy.h"
#include "attnscope/trace.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <optional>
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
    Args args(argv, {"ids", "text", "image", "type-ids", "attend", "out", "device", "temperature"}, {});
    args.expectPositionals(1);
    const std::string outArg = args.required("out");
    if (args.value("image") && (args.value("ids") || args.value("text")))
        throw UsageError("give one input: --ids, --text or --image");
    if (args.value("ids")) parseIds(*args.value("ids"));  // malformed ids fail before loading
    std::optional<RgbImage> image;
    if (args.value("image")) image = readImageFile(*args.value("image"));
    MapOptions mapOptions;
    mapOptions.temperature = args.number("temperature").value_or(1.0);
    if (!(mapOptions.temperature > 0) || !std::isfinite(mapOptions.temperature))
        throw Error("--temperature must be a finite number > 0");

    auto model = loadModel(args);
    if (model->info().imageInput && !image)
        throw UsageError(model->info().family + " models take an image: --image FILE.png|.jpg");
    std::shared_ptr<const Trace> trace;
    if (image) {
        trace = model->forwardImage(*image);
    } else if (args.value("type-ids") || args.value("attend")) {  // encoder extras (BERT family)
        TextInput in{inputIds(args, *model), {}, {}};
        if (auto types = args.value("type-ids")) in.typeIds = parseIntegers(*types, "--type-ids", "token type");
        if (auto attend = args.value("attend"))
            for (auto a : parseIntegers(*attend, "--attend", "0/1 value")) {
                if (a != 0 && a != 1) throw Error("--attend: values must be 0 (padding) or 1, found " + std::to_string(a));
                in.attend.push_back(static_cast<std::uint8_t>(a));
            }
        trace = model->forwardText(in);
    } else {
        trace = model->forward(inputIds(args, *model));
    }
    const std::filesystem::path out = prepareOutDir(outArg);

    // One block ("self") is attention.npy; models with several write one file per block.
    const auto& blocks = trace->blocks();
    for (int b = 0; b < static_cast<int>(blocks.size()); ++b)
        writeBlock(*trace, b, mapOptions, out / (blocks.size() == 1 ? std::string("attention.npy") : blocks[b].name + ".npy"));

    nlohmann::json tokens = {{"ids", trace->ids()}, {"tokens", trace->tokens()}};
    if (!trace->outputTokens().empty()) {
        tokens["source"] = trace->tokens();
        tokens["target"] = trace->outputTokens();
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
    "usage: attnscope-cli attention MODEL (--ids 3,17,42 | --text STRING | --image FILE) --out DIR\n"
    "                               [--device cpu|cuda|auto] [--temperature T]\n"
    "                               [--type-ids 0,0,1,1] [--attend 1,1,1,0]\n\n"
    "Runs the model on the token ids (used exactly as given), on the text (through the model's\n"
    "tokenizer) or, for image models (ViT), on an image file (PNG, JPEG, ...; resized and normalised\n"
    "as the model's preprocessor_config.json says), and writes\n"
    "  DIR/attention.npy  float32, C order, [layers, heads, seq, seq]; row = query, column = key\n"
    "                     (models with several attention blocks write BLOCK.npy per block, e.g.\n"
    "                     encoder.npy, decoder.npy, cross.npy [layers, heads, target, source])\n"
    "  DIR/tokens.json    ids, tokens, the labels of each block's rows and columns, and the\n"
    "                     model's outputs (generated target, or class label and probabilities);\n"
    "                     an image's tokens are [CLS] and its patches rRcC (row R, column C)\n"
    "MODEL is a model folder or builtin:NAME.\n"
    "--temperature T divides the attention logits by T before the softmax (display only).\n"
    "--type-ids gives BERT-family models one token type per id; --attend marks padding (0) that\n"
    "no query may attend to (1 = real token).\n"
    "Invalid input exits with code 2 and one 'error: ...' line.\n",
            runAttention};
}

}  // namespace attnscope::cli
