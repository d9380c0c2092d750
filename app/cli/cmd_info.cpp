#include "commands.h"
#include "common.h"

#include "attnscope/runtime/error.h"
#include "attnscope/models/model.h"

#include <nlohmann/json.hpp>

#include <iostream>

namespace attnscope::cli {

namespace {

int runInfo(const std::vector<std::string>& argv) {
    Args args(argv, {"device", "weights", "revision"}, {"json", "progress"});
    args.expectPositionals(1);
    auto model = loadModel(args);
    const ModelInfo& i = model->info();
    if (args.flag("json")) {
        nlohmann::json j = {{"family", i.family},         {"layers", i.layers},
                            {"heads", i.heads},           {"kv_heads", i.kvHeads},
                            {"head_dim", i.headDim},      {"hidden", i.hidden},
                            {"vocab_size", i.vocabSize},  {"max_positions", i.maxPositions},
                            {"parameters", i.parameters}, {"dtype", i.dtype},
                            {"device", i.device},         {"weights", i.weights}};
        if (!i.task.empty()) j["task"] = i.task;
        if (!i.attention.empty()) j["attention"] = i.attention;
        if (i.imageInput) j["image"] = {{"size", i.imageSize}, {"patch", i.patchSize}};
        j["notes"] = i.notes;
        std::cout << j.dump(2) << "\n";
        return 0;
    }
    std::cout << "family:        " << i.family << "\n"
              << "layers:        " << i.layers << "\n"
              << "heads:         " << i.heads
              << (i.kvHeads != i.heads ? " (" + std::to_string(i.kvHeads) + " key/value heads)" : "") << "\n"
              << "head dim:      " << i.headDim << "\n"
              << "hidden:        " << i.hidden << "\n"
              << "vocab size:    " << i.vocabSize << "\n"
              << "parameters:    " << i.parameters << "\n"
              << "dtype:         " << i.dtype << "\n"
              << "max positions: "
              << (i.maxPositions > 0 ? std::to_string(i.maxPositions) : std::string("no limit (no position table)"))
              << "\n"
              << "device:        " << i.device << "\n"
              << "weights:       " << i.weights << "\n";
    if (!i.task.empty()) std::cout << "task:          " << i.task << "\n";
    if (!i.attention.empty()) std::cout << "attention:     " << i.attention << "\n";
    if (i.imageInput)
        std::cout << "image input:   " << i.imageSize << "×" << i.imageSize << " pixels, " << i.patchSize << "×"
                  << i.patchSize << " patches\n";
    // What the family does to its maps (windows, soft-cap, ALiBi, partial rotary, kv groups).
    for (std::size_t k = 0; k < i.notes.size(); ++k)
        std::cout << (k ? "               " : "maps:          ") << i.notes[k] << "\n";
    return 0;
}

}  // namespace

Command infoCommand() {
    return {"info", "describe a model",
            "usage: attnscope-cli info MODEL [--revision REV] [--device cpu|cuda|auto] [--weights auto|convert|stream]\n"
            "                              [--progress] [--json]\n\n"
            "Prints the model's family, layers, heads, head dim, parameters, dtype and max positions, and\n"
            "what the family does to its maps (sliding windows, soft-cap, ALiBi, partial rotary, kv groups), and\n"
            "how the weights are held (converted to float32, or streamed from the file one layer at a time).\n"
            "MODEL is a folder with config.json and model.safetensors (or pytorch_model.bin), a file in one, builtin:NAME,\n"
            "a GGUF file (llama.cpp, LM Studio; recognised by its content), ollama:NAME[:TAG] (Ollama's store:\n"
            "$OLLAMA_MODELS, else ~/.ollama/models; TAG defaults to latest),\n"
            "or a Hugging Face model id (org/name) already in the local hub cache ($HF_HUB_CACHE, $HF_HOME/hub,\n"
            "~/.cache/huggingface/hub) at --revision (a ref or a commit; default main). Nothing is downloaded.\n",
            runInfo};
}

}  // namespace attnscope::cli
