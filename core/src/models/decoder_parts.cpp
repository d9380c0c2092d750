#include "decoder_parts.h"

#include "family_common.h"

#include <cmath>
#include <cstdio>

namespace attnscope {

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
        const double percent = 100.0 * rotaryDim / headDim;
        char buf[32];
        std::snprintf(buf, sizeof buf, "%g", std::round(percent * 10) / 10);
        note = "rotary on " + std::string(buf) + "% of dims (" + std::to_string(rotaryDim) + " of " +
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

std::vector<float> nextLogitsBiased(const at::Tensor& last, const Linear& head) {
    at::Tensor logits = rowsMatmul(last, head.weight, head.bias).reshape({-1}).to(at::kCPU, at::kFloat).contiguous();
    return std::vector<float>(logits.data_ptr<float>(), logits.data_ptr<float>() + logits.numel());
}

}  // namespace attnscope
