#include "config.h"
#include "io/json_util.h"

#include "attnscope/runtime/error.h"

namespace attnscope::builtin {

namespace {

void addAttention(std::vector<std::pair<std::string, std::vector<std::int64_t>>>& out, const Config& c,
                  const std::string& p, bool cross) {
    const std::int64_t E = c.dModel, H = c.heads, d = c.headDim(), w = c.additiveWidth;
    const AttentionKind kind = c.siteKind(cross);
    for (const char* m : {"q", "k", "v", "o"}) {
        if (kind == AttentionKind::Lsh && m[0] == 'k') continue;  // shared QK
        out.push_back({p + ".w" + m, {E, E}});
        out.push_back({p + ".b" + m, {E}});
    }
    if (kind == AttentionKind::Additive || kind == AttentionKind::Hybrid) {
        out.push_back({p + ".aq", {H, d, w}});
        out.push_back({p + ".ak", {H, d, w}});
        out.push_back({p + ".av", {H, w}});
    }
    if (kind == AttentionKind::Hybrid) {
        out.push_back({p + ".gw", {H, d}});
        out.push_back({p + ".gb", {H}});
    }
    if (c.relative && !cross) out.push_back({p + ".rel", {H, 2 * c.relativeClip + 1}});
}

void parseKindOptions(const JsonConfig& j, Config& c) {
    if (c.kind == AttentionKind::Local) {
        c.sparse.window = j.positiveInt("window", 1 << 20);
        c.sparse.twoSided = j.boolean("two_sided", false);
    }
    if (c.kind == AttentionKind::TopK) c.sparse.keep = j.positiveInt("keep", 1 << 20);
    if (c.kind == AttentionKind::Lsh) {
        c.sparse.buckets = j.positiveInt("buckets", 1 << 20);
        if (c.sparse.buckets < 2 || c.sparse.buckets % 2 != 0)
            j.fail("buckets", "must be even and >= 2, found " + std::to_string(c.sparse.buckets));
        c.sparse.rounds = j.positiveInt("rounds", 64);
        const auto it = j.json().find("lsh_seed");
        if (it == j.json().end() || !it->is_number_unsigned())
            j.fail("lsh_seed", "must be a whole number >= 0 (the seed of the hash rotations)");
        c.sparse.seed = it->get<std::uint64_t>();
    }
    const std::string positions = j.string("positions", "absolute");
    if (positions != "absolute" && positions != "relative")
        j.fail("positions", "must be absolute or relative, found '" + positions + "'");
    c.relative = positions == "relative";
    if (c.relative) {
        c.relativeClip = j.positiveInt("relative_clip", 1 << 16);
        if (c.kind == AttentionKind::Additive || c.kind == AttentionKind::Linear)
            j.fail("positions", "relative positions need dot-product logits; " + std::string(kindName(c.kind)) +
                                        " attention has no place for the bias");
    }
}

void addNorm(std::vector<std::pair<std::string, std::vector<std::int64_t>>>& out, const Config& c,
             const std::string& p) {
    out.push_back({p + ".weight", {c.dModel}});
    out.push_back({p + ".bias", {c.dModel}});
}

void addFfn(std::vector<std::pair<std::string, std::vector<std::int64_t>>>& out, const Config& c,
            const std::string& p) {
    out.push_back({p + ".fc1.weight", {c.ffn, c.dModel}});
    out.push_back({p + ".fc1.bias", {c.ffn}});
    out.push_back({p + ".fc2.weight", {c.dModel, c.ffn}});
    out.push_back({p + ".fc2.bias", {c.dModel}});
}

}  // namespace

Config parseConfig(const JsonConfig& j) {
    Config c;
    const std::string type = j.string("model_type");
    c.seq2seq = type == kSeq2seqType;
    try {
        const std::string task = j.string("task");
        c.fileTask = task == "file";
        c.task = c.fileTask ? (c.seq2seq ? BuiltinTask::Reverse : BuiltinTask::Sentiment) : parseTask(task);
        c.kind = parseAttentionKind(j.string("attention"));
    } catch (const Error& e) {
        throw Error(j.file().string() + ": " + e.what());
    }
    if (c.seq2seq != (c.task == BuiltinTask::Reverse))
        j.fail("task", "'" + std::string(taskName(c.task)) + "' does not go with model_type '" + type + "'");
    if (c.fileTask) {
        const std::string units = j.string("vocabulary");
        if (units != "char" && units != "word") j.fail("vocabulary", "must be char or word, found '" + units + "'");
        c.perCharacter = units == "char";
        c.taskFile = j.string("task_file", "");
    }
    c.dModel = j.positiveInt("d_model", 4096);
    c.heads = j.positiveInt("n_heads", 256);
    c.ffn = j.positiveInt("d_ffn", 1 << 16);
    c.vocabSize = j.positiveInt("vocab_size", 1 << 20);
    c.maxSource = j.positiveInt("max_source_positions", 1 << 16);
    c.eps = j.positiveNumber("layer_norm_epsilon", 1e-5);
    if (c.additiveParts()) c.additiveWidth = j.positiveInt("additive_width", 4096);
    parseKindOptions(j, c);
    if (c.dModel % c.heads != 0)
        j.fail("d_model",
               "(" + std::to_string(c.dModel) + ") must be divisible by n_heads (" + std::to_string(c.heads) + ")");
    if (c.seq2seq) {
        c.encoderLayers = j.positiveInt("encoder_layers", 64);
        c.decoderLayers = j.positiveInt("decoder_layers", 64);
        c.maxTarget = j.positiveInt("max_target_length", 1 << 16);
        const std::string from = j.string("source_positions", "from_start");
        if (from != "from_start" && from != "from_end")
            j.fail("source_positions", "must be from_start or from_end, found '" + from + "'");
        c.sourceFromEnd = from == "from_end";
    } else {
        c.encoderLayers = j.positiveInt("n_layers", 64);
        c.decoderLayers = 0;
        const auto it = j.json().find("labels");
        if (it == j.json().end() || !it->is_array() || it->size() < 2)
            j.fail("labels", "must be a list of at least two class names");
        for (const auto& l : *it) {
            if (!l.is_string()) j.fail("labels", "must contain strings, found " + jsonExcerpt(l));
            c.labels.push_back(l.get<std::string>());
        }
    }
    return c;
}

nlohmann::json configJson(const Config& c, const nlohmann::json& training) {
    nlohmann::json j = {{"model_type", c.seq2seq ? kSeq2seqType : kClassifierType},
                        {"task", c.fileTask ? "file" : taskName(c.task)},
                        {"attention", kindName(c.kind)},
                        {"d_model", c.dModel},
                        {"n_heads", c.heads},
                        {"d_ffn", c.ffn},
                        {"vocab_size", c.vocabSize},
                        {"max_source_positions", c.maxSource},
                        {"layer_norm_epsilon", c.eps}};
    if (c.fileTask) j["vocabulary"] = c.perCharacter ? "char" : "word", j["task_file"] = c.taskFile;
    if (c.additiveParts()) j["additive_width"] = c.additiveWidth;
    if (c.kind == AttentionKind::Local) j["window"] = c.sparse.window, j["two_sided"] = c.sparse.twoSided;
    if (c.kind == AttentionKind::TopK) j["keep"] = c.sparse.keep;
    if (c.kind == AttentionKind::Lsh)
        j["buckets"] = c.sparse.buckets, j["rounds"] = c.sparse.rounds, j["lsh_seed"] = c.sparse.seed;
    j["positions"] = c.relative ? "relative" : "absolute";
    if (c.relative) j["relative_clip"] = c.relativeClip;
    if (c.seq2seq) {
        j["encoder_layers"] = c.encoderLayers;
        j["decoder_layers"] = c.decoderLayers;
        j["max_target_length"] = c.maxTarget;
        j["source_positions"] = c.sourceFromEnd ? "from_end" : "from_start";
    } else {
        j["n_layers"] = c.encoderLayers;
        j["labels"] = c.labels;
    }
    if (!training.is_null()) j["training"] = training;
    return j;
}

std::vector<std::pair<std::string, std::vector<std::int64_t>>> parameterShapes(const Config& c) {
    std::vector<std::pair<std::string, std::vector<std::int64_t>>> out;
    const std::int64_t E = c.dModel, V = c.vocabSize;
    out.push_back({"src_embed", {V, E}});
    if (!c.relative) out.push_back({"src_pos", {c.maxSource, E}});
    for (int l = 0; l < c.encoderLayers; ++l) {
        const std::string p = "encoder." + std::to_string(l);
        addNorm(out, c, p + ".ln1");
        addAttention(out, c, p + ".attn", false);
        addNorm(out, c, p + ".ln2");
        addFfn(out, c, p + ".ffn");
    }
    addNorm(out, c, "encoder.ln");
    if (c.seq2seq) {
        out.push_back({"tgt_embed", {V, E}});
        if (!c.relative) out.push_back({"tgt_pos", {c.maxTarget + 1, E}});
        for (int l = 0; l < c.decoderLayers; ++l) {
            const std::string p = "decoder." + std::to_string(l);
            addNorm(out, c, p + ".ln1");
            addAttention(out, c, p + ".self", false);
            addNorm(out, c, p + ".ln2");
            addAttention(out, c, p + ".cross", true);
            addNorm(out, c, p + ".ln3");
            addFfn(out, c, p + ".ffn");
        }
        addNorm(out, c, "decoder.ln");
        out.push_back({"head.weight", {V, E}});
        out.push_back({"head.bias", {V}});
    } else {
        out.push_back({"head.weight", {static_cast<std::int64_t>(c.labels.size()), E}});
        out.push_back({"head.bias", {static_cast<std::int64_t>(c.labels.size())}});
    }
    return out;
}

}  // namespace attnscope::builtin
