#include "commands.h"
#include "common.h"

#include "attnscope/io/input_file.h"
#include "attnscope/runtime/error.h"
#include "attnscope/io/model_location.h"
#include "attnscope/tokenizer/tokenizer.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>
#include <sstream>

namespace attnscope::cli {

namespace {

// A tokenizer path (Tokenizer::fromPath), or a model id in the Hugging Face cache.
std::unique_ptr<Tokenizer> openTokenizer(const std::string& path) {
    std::error_code ec;
    if (path.rfind("ollama:", 0) == 0) return Tokenizer::fromPath(ollamaModel(path));
    if (!std::filesystem::exists(path, ec) && isModelId(path)) return Tokenizer::fromPath(hubSnapshot(path));
    return Tokenizer::fromPath(path);
}

std::string inputText(const Args& args) {
    const auto text = args.value("text");
    const auto file = args.value("text-file");
    if (text && file) throw UsageError("give either --text or --text-file, not both");
    if (text) return *text;
    if (!file) throw UsageError("missing input: --text STRING or --text-file FILE");
    refuseNonRegularFile(*file);  // opening a FIFO without a writer waits forever; it is refused
    std::ifstream in(*file, std::ios::binary);
    if (!in) throw Error("--text-file " + *file + ": cannot be read");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

int runTokenize(const std::vector<std::string>& argv) {
    Args args(argv, {"text", "text-file"}, {"no-special"});
    args.expectPositionals(1);
    const std::string text = inputText(args);
    const auto tok = openTokenizer(args.positional(0, "PATH (a tokenizer.json or a model folder)"));
    const Encoding e = tok->encode(text, !args.flag("no-special"));
    nlohmann::json offsets = nlohmann::json::array();
    for (const auto& [b, en] : e.offsets) offsets.push_back({b, en});
    nlohmann::ordered_json out;
    out["ids"] = e.ids;
    out["tokens"] = e.tokens;
    out["offsets"] = offsets;
    out["tokenizer"] = tok->origin();  // which file of the folder was read
    std::cout << out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return 0;
}

}  // namespace

Command tokenizeCommand() {
    return {"tokenize", "text -> token ids, exactly as Hugging Face's tokenizers",
            "usage: attnscope-cli tokenize PATH (--text STRING | --text-file FILE) [--no-special]\n\n"
            "PATH is a tokenizer file (a tokenizer.json, or a SentencePiece model such as spiece.model read with its\n"
            "folder's tokenizer_config.json), a GGUF file or ollama:NAME[:TAG] (its tokenizer.ggml.*), a model folder\n"
            "or another file in one, or a model id in the Hugging Face cache. A folder reads tokenizer.json, else a SentencePiece model (spiece.model, tokenizer.model,\n"
            "sentencepiece.bpe.model or Marian's source.spm + vocab.json), else vocab.json + merges.txt, else\n"
            "vocab.txt. Prints one JSON line {\"ids\": [...], \"tokens\": [...], \"offsets\":\n"
            "[[begin, end], ...], \"tokenizer\": FILE}: raw vocabulary tokens, byte offsets into the UTF-8 text\n"
            "((0, 0) for tokens the post-processor adds) and the file read. Special tokens ([CLS], <s>, ...) are\n"
            "added as the post-processor (or the family's slow tokenizer) says unless --no-special.\n",
            runTokenize};
}

}  // namespace attnscope::cli
