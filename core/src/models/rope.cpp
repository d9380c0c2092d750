#include "rope.h"
#include "io/json_util.h"

#include <cmath>

namespace attnscope {

namespace {

double number(const JsonConfig& c, const nlohmann::json& obj, const std::string& owner, const std::string& key,
              std::optional<double> fallback) {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) {
        if (fallback) return *fallback;
        c.fail(owner, "needs '" + key + "'");
    }
    if (!it->is_number() || !(it->get<double>() > 0) || !std::isfinite(it->get<double>()))
        c.fail(owner, "'" + key + "' must be a positive number, found " + jsonExcerpt(*it));
    return it->get<double>();
}

}  // namespace

namespace {

std::vector<double> inverseFrequencies(const JsonConfig& c, int headDim, const RopeKeys& keys, std::string& type) {
    if (headDim <= 0 || headDim % 2 != 0)
        c.fail("head_dim", "the rotary dimensions must be even and positive, found " + std::to_string(headDim));
    // The newer layout keeps theta and scaling together in rope_parameters.
    nlohmann::json scaling;
    std::string owner = "rope_scaling";
    double theta = keys.defaultTheta;
    if (c.has("rope_parameters")) {
        owner = "rope_parameters";
        scaling = c.json().at("rope_parameters");
        if (!scaling.is_object()) c.fail(owner, "must be an object, found " + jsonExcerpt(scaling));
        theta = number(c, scaling, owner, "rope_theta", c.has(keys.theta) ? c.positiveNumber(keys.theta) : keys.defaultTheta);
    } else {
        theta = c.positiveNumber(keys.theta, keys.defaultTheta);
        if (c.has("rope_scaling")) {
            scaling = c.json().at("rope_scaling");
            if (!scaling.is_object()) c.fail(owner, "must be an object or null, found " + jsonExcerpt(scaling));
        }
    }
    type = "default";
    if (scaling.is_object()) {
        for (const char* key : {"rope_type", "type"}) {
            auto it = scaling.find(key);
            if (it != scaling.end() && !it->is_null()) {
                if (!it->is_string()) c.fail(owner, std::string("'") + key + "' must be a string, found " + jsonExcerpt(*it));
                type = it->get<std::string>();
                break;
            }
        }
    }
    std::vector<double> inv(static_cast<std::size_t>(headDim / 2));
    for (std::size_t i = 0; i < inv.size(); ++i) inv[i] = std::pow(theta, -2.0 * static_cast<double>(i) / headDim);

    if (type == "default") return inv;
    if (type == "linear") {  // positions divided by the factor
        const double factor = number(c, scaling, owner, "factor", std::nullopt);
        for (double& f : inv) f /= factor;
        return inv;
    }
    if (type == "llama3") {
        // Long wavelengths are slowed by `factor`, short ones kept, and the band between them
        // interpolated (Llama 3.1).
        const double factor = number(c, scaling, owner, "factor", std::nullopt);
        const double low = number(c, scaling, owner, "low_freq_factor", std::nullopt);
        const double high = number(c, scaling, owner, "high_freq_factor", std::nullopt);
        const double original = number(c, scaling, owner, "original_max_position_embeddings", std::nullopt);
        if (!(high > low)) c.fail(owner, "high_freq_factor must be greater than low_freq_factor");
        const double pi = 3.14159265358979323846;
        const double lowWavelen = original / low, highWavelen = original / high;
        for (double& f : inv) {
            const double wavelen = 2 * pi / f;
            if (wavelen < highWavelen) continue;
            if (wavelen > lowWavelen) {
                f /= factor;
            } else {
                const double smooth = (original / wavelen - low) / (high - low);
                f = (1 - smooth) * f / factor + smooth * f;
            }
        }
        return inv;
    }
    c.fail(owner, "type '" + type + "' is not supported (default, linear, llama3)");
}

}  // namespace

RopeSpec readRope(const JsonConfig& c, int rotaryDim, bool interleaved, RopeKeys keys) {
    RopeSpec spec;
    spec.rotaryDim = rotaryDim;
    spec.interleaved = interleaved;
    spec.invFreq = inverseFrequencies(c, rotaryDim, keys, spec.type);
    return spec;
}

RopeTables ropeTables(const RopeSpec& spec, std::int64_t n, const c10::Device& device) {
    at::Tensor inv = at::tensor(at::ArrayRef<double>(spec.invFreq), at::kDouble);
    at::Tensor pos = at::arange(n, at::kDouble);
    at::Tensor angles = at::outer(pos, inv);  // [n, r/2], double so long positions stay exact
    // Rotate-half pairs i with i + r/2, so both halves share frequency i; interleaved pairs
    // (2i, 2i+1), so each frequency repeats twice in place.
    angles = spec.interleaved ? angles.repeat_interleave(2, 1) : at::cat({angles, angles}, 1);
    angles = angles.to(at::kFloat);  // cos and sin in float32, as Hugging Face takes them
    RopeTables t;
    t.cos = angles.cos();
    t.sin = angles.sin();
    if (spec.attentionScaling != 1.0) {
        t.cos.mul_(spec.attentionScaling);
        t.sin.mul_(spec.attentionScaling);
    }
    t.cos = t.cos.to(device);
    t.sin = t.sin.to(device);
    t.rotaryDim = spec.rotaryDim;
    t.interleaved = spec.interleaved;
    return t;
}

at::Tensor applyRope(const at::Tensor& x, const RopeTables& t) {
    const auto d = x.size(-1), r = static_cast<std::int64_t>(t.rotaryDim);
    at::Tensor part = r == d ? x : x.narrow(-1, 0, r);
    at::Tensor rotated;
    if (t.interleaved) {  // (x0, x1, x2, x3, ...) -> (-x1, x0, -x3, x2, ...)
        at::Tensor pairs = part.unflatten(-1, {r / 2, 2});
        rotated = at::stack({-pairs.select(-1, 1), pairs.select(-1, 0)}, -1).flatten(-2);
    } else {
        rotated = at::cat({-part.narrow(-1, r / 2, r / 2), part.narrow(-1, 0, r / 2)}, -1);
    }
    const auto type = x.scalar_type();
    at::Tensor out = part * t.cos.to(type) + rotated * t.sin.to(type);
    return r == d ? out : at::cat({out, x.narrow(-1, r, d - r)}, -1);
}

}  // namespace attnscope
