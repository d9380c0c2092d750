#include "decoder_spec.h"

#include "family_common.h"

#include <cmath>
#include <cstdio>

namespace attnscope {

void readHeads(const JsonConfig& c, DecoderSpec& s, int defaultHeadDim, int defaultKvHeads) {
    s.heads = c.positiveInt("num_attention_heads");
    s.kvHeads = c.optionalPositiveInt("num_key_value_heads").value_or(defaultKvHeads > 0 ? defaultKvHeads : s.heads);
    if (s.heads % s.kvHeads != 0)
        c.fail("num_key_value_heads",
               "(" + std::to_string(s.kvHeads) + ") must divide num_attention_heads (" + std::to_string(s.heads) + ")");
    if (c.has("head_dim")) {
        s.headDim = c.positiveInt("head_dim");
    } else if (defaultHeadDim > 0) {
        s.headDim = defaultHeadDim;
    } else {
        if (s.hidden % s.heads != 0)
            c.fail("hidden_size", "(" + std::to_string(s.hidden) + ") must be divisible by num_attention_heads (" +
                                          std::to_string(s.heads) + ") when head_dim is not given");
        s.headDim = s.hidden / s.heads;
    }
}

int firstSize(const JsonConfig& c, const char* key, const char* other, int fallback) {
    if (c.has(key)) return c.positiveInt(key);
    return c.optionalPositiveInt(other).value_or(fallback);
}

std::int64_t optionalWindow(const JsonConfig& c, const std::string& key, std::int64_t fallback) {
    if (!c.json().contains(key)) return fallback;
    return c.has(key) ? c.positiveInt(key) : 0;
}

double softcapOf(const JsonConfig& c, const std::string& key, double fallback) {
    if (!c.json().contains(key)) return fallback;
    return c.has(key) ? c.positiveNumber(key) : 0.0;
}

void setLayerWindows(const JsonConfig& c, DecoderSpec& s, std::int64_t window,
                     const std::function<bool(int)>& slidingByDefault) {
    if (!c.has("layer_types")) {
        for (int l = 0; l < s.layers; ++l) s.windows.push_back(slidingByDefault(l) ? window : 0);
        return;
    }
    const auto& list = c.json().at("layer_types");
    if (!list.is_array()) c.fail("layer_types", "must be a list, found " + list.dump());
    if (list.size() != static_cast<std::size_t>(s.layers))
        c.fail("layer_types", "has " + std::to_string(list.size()) + " entries for " + std::to_string(s.layers) +
                                      " layers (num_hidden_layers)");
    for (std::size_t i = 0; i < list.size(); ++i) {
        const auto& e = list[i];
        if (e != "sliding_attention" && e != "full_attention")
            c.fail("layer_types",
                   "entry " + std::to_string(i) + " is " + e.dump() + " (known: full_attention, sliding_attention)");
        s.windows.push_back(e == "sliding_attention" ? window : 0);
    }
}

void requireWindowFits(const JsonConfig& c, const std::string& key, std::int64_t window, int positions) {
    if (window > positions)
        c.fail(key, "(" + std::to_string(window) + ") is larger than max_position_embeddings (" +
                            std::to_string(positions) + ")");
}

std::string formatNumber(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", value);
    return text;
}

void readSizes(const JsonConfig& c, DecoderSpec& s, double eps, const char* epsKey) {
    s.family = c.string("model_type");
    s.vocab = c.positiveInt("vocab_size");
    s.hidden = c.positiveInt("hidden_size");
    s.inner = c.positiveInt("intermediate_size");
    s.layers = c.positiveInt("num_hidden_layers");
    s.eps = c.positiveNumber(epsKey, eps);
}

void readGpt2Sizes(const JsonConfig& c, DecoderSpec& s, const Gpt2Keys& k) {
    s.family = c.string("model_type");
    s.vocab = c.positiveInt("vocab_size");
    s.positions = c.positiveInt(k.positions);
    s.hidden = c.positiveInt(k.hidden);
    s.layers = c.positiveInt(k.layers);
    s.heads = s.kvHeads = c.positiveInt(k.heads);
    s.inner = c.optionalPositiveInt(k.inner).value_or(4 * s.hidden);
    s.eps = c.positiveNumber("layer_norm_epsilon", 1e-5);
    s.activation = c.string("activation_function", "gelu_new");
    requireActivation(c, "activation_function", s.activation);
    requireDivisible(c, s, k.hidden, k.heads);
}

void addCommonNotes(DecoderSpec& s) {
    std::vector<int> windowed;
    bool uniform = true;
    for (int l = 0; l < static_cast<int>(s.windows.size()); ++l) {
        if (s.windows[l] <= 0) continue;
        if (!windowed.empty() && s.windows[l] != s.windows[windowed.back()]) uniform = false;
        windowed.push_back(l);
    }
    if (!windowed.empty()) {
        const bool every = uniform && windowed.size() == s.windows.size();
        s.notes.insert(s.notes.begin(), "sliding window " + std::to_string(s.windows[windowed.back()]) +
                                                (every ? " on every layer" : " on layers " + layerListNote(windowed)));
    }
    if (s.kvHeads != s.heads) s.notes.push_back(std::to_string(s.kvHeads) + " kv groups");
    for (const RopeSpec& r : s.ropes)
        if (r.type != "default") {
            s.notes.push_back("rope scaling " + r.type);
            break;
        }
    if (!s.ropes.empty() && s.ropes[0].rotaryDim != s.headDim)
        s.notes.push_back("rotary on " + std::to_string(100 * s.ropes[0].rotaryDim / s.headDim) + "% of dims");
}

void requireDivisible(const JsonConfig& c, DecoderSpec& s, const std::string& hiddenKey, const std::string& headsName) {
    if (s.hidden % s.heads != 0)
        c.fail(hiddenKey, "(" + std::to_string(s.hidden) + ") must be divisible by " + headsName + " (" +
                                  std::to_string(s.heads) + ")");
    s.headDim = s.hidden / s.heads;
}

void useRope(DecoderSpec& s, RopeSpec rope) {
    s.positionKind = DecoderSpec::Positions::Rotary;
    s.ropes = {std::move(rope)};
    s.ropeOf.assign(static_cast<std::size_t>(s.layers), 0);
}

std::string readSiluAct(const JsonConfig& c) {
    const std::string act = c.string("hidden_act", "silu");
    requireKnown(c, "hidden_act", act, {"silu", "swish"});
    return act;
}

int partialRotaryDims(const JsonConfig& c, int headDim, std::initializer_list<const char*> keys, double fallback) {
    double fraction = fallback;
    std::string owner;
    if (c.has("rope_parameters") && c.json().at("rope_parameters").is_object() &&
        c.json().at("rope_parameters").contains("partial_rotary_factor")) {
        owner = "rope_parameters";
        const auto& v = c.json().at("rope_parameters").at("partial_rotary_factor");
        if (!v.is_number()) c.fail(owner, "'partial_rotary_factor' must be a number, found " + v.dump());
        fraction = v.get<double>();
    } else {
        for (const char* key : keys)
            if (c.has(key)) {
                owner = key;
                const auto& v = c.json().at(key);
                if (!v.is_number()) c.fail(key, "must be a number, found " + v.dump());
                fraction = v.get<double>();
                break;
            }
    }
    if (owner.empty()) owner = *keys.begin();
    if (!(fraction > 0 && fraction <= 1)) c.fail(owner, "must be in (0, 1], found " + std::to_string(fraction));
    const int dims = static_cast<int>(headDim * fraction);  // Hugging Face truncates
    if (dims < 2 || dims % 2 != 0)
        c.fail(owner, "gives " + std::to_string(dims) + " rotary dimensions of head dim " + std::to_string(headDim) +
                              "; rotary pairs need an even number >= 2");
    return dims;
}

std::string rotaryNote(int rotaryDim, int headDim, bool interleaved) {
    std::string note;
    if (rotaryDim == headDim) {
        note = "rotary on all " + std::to_string(headDim) + " dims";
    } else {
        const double percent = std::round(1000.0 * rotaryDim / headDim) / 10;
        note = "rotary on " + formatNumber(percent) + "% of dims (" + std::to_string(rotaryDim) + " of " +
               std::to_string(headDim) + ")";
    }
    return interleaved ? note + ", interleaved pairs" : note;
}

std::string layerListNote(const std::vector<int>& layers) {
    std::string out;
    for (std::size_t i = 0; i < layers.size() && i < 3; ++i) out += (i ? ", " : "") + std::to_string(layers[i]);
    if (layers.size() > 3) out += ", …";
    return out;
}

void requireActivation(const JsonConfig& c, const std::string& key, const std::string& value) {
    requireKnown(c, key, value, {"gelu", "gelu_new", "gelu_pytorch_tanh", "gelu_fast", "relu"});
}

}  // namespace attnscope
