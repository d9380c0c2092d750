#include "rope.h"
#include "io/json_util.h"
#include "runtime/numbers.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace attnscope {

namespace {

// The scaling object (rope_scaling or rope_parameters) and the key it is named by in errors.
struct Scaling {
    const JsonConfig& c;
    nlohmann::json obj;
    std::string owner;

    [[noreturn]] void fail(const std::string& message) const { c.fail(owner, message); }
    // Its number `key`, else `fallback` when absent or null (nullopt: required); fails unless it
    // is a positive finite number.
    double number(const std::string& key, std::optional<double> fallback = std::nullopt) const {
        auto it = obj.find(key);
        if (it == obj.end() || it->is_null()) {
            if (fallback) return *fallback;
            fail("needs '" + key + "'");
        }
        if (!it->is_number() || !(it->get<double>() > 0) || !std::isfinite(it->get<double>()))
            fail("'" + key + "' must be a positive number, found " + jsonExcerpt(*it));
        return it->get<double>();
    }
    // Its number `key`, or nullopt when absent or null.
    std::optional<double> optional(const std::string& key) const {
        auto it = obj.find(key);
        if (it == obj.end() || it->is_null()) return std::nullopt;
        return number(key);
    }
};

// theta^(-2i/r), i < r/2.
std::vector<double> plainFrequencies(double theta, int r) {
    std::vector<double> inv(static_cast<std::size_t>(r / 2));
    for (std::size_t i = 0; i < inv.size(); ++i) inv[i] = std::pow(theta, -2.0 * static_cast<double>(i) / r);
    return inv;
}

// longrope's short_factor / long_factor: r/2 positive numbers.
std::vector<double> factorList(const Scaling& sc, const std::string& key, int r) {
    auto it = sc.obj.find(key);
    if (it == sc.obj.end() || it->is_null()) sc.fail("needs '" + key + "' (type 'longrope')");
    if (!it->is_array() || it->size() != static_cast<std::size_t>(r / 2))
        sc.fail("'" + key + "' must be a list of " + std::to_string(r / 2) + " numbers (rotary dimensions / 2)");
    std::vector<double> out;
    for (const auto& v : *it) {
        if (!v.is_number() || !(v.get<double>() > 0))
            sc.fail("'" + key + "' must hold positive numbers, found " + v.dump());
        out.push_back(v.get<double>());
    }
    return out;
}

// YaRN (Peng et al. 2023, Hugging Face's _compute_yarn_parameters): frequencies whose wavelength
// fits `original` positions fewer than beta_slow times are interpolated (divided by factor),
// those rotating more than beta_fast times are kept, with a linear ramp between; cos and sin are
// scaled by attention_factor (default 0.1·ln(factor) + 1, or DeepSeek's mscale ratio).
void yarn(const Scaling& sc, RopeSpec& spec) {
    const int r = spec.rotaryDim;
    const double factor = sc.number("factor");
    const double original = sc.optional("original_max_position_embeddings")
                                    .value_or(static_cast<double>(sc.c.positiveInt("max_position_embeddings")));
    const double fast = sc.optional("beta_fast").value_or(32.0);
    const double slow = sc.optional("beta_slow").value_or(1.0);
    bool truncate = true;
    if (auto it = sc.obj.find("truncate"); it != sc.obj.end() && !it->is_null()) {
        if (!it->is_boolean()) sc.fail("'truncate' must be true or false, found " + it->dump());
        truncate = it->get<bool>();
    }
    auto mscale = [](double scale, double m) { return scale <= 1 ? 1.0 : 0.1 * m * std::log(scale) + 1.0; };
    if (auto given = sc.optional("attention_factor")) {
        spec.attentionScaling = *given;
    } else {
        const auto m = sc.optional("mscale"), all = sc.optional("mscale_all_dim");
        spec.attentionScaling = m && all ? mscale(factor, *m) / mscale(factor, *all) : mscale(factor, 1.0);
    }
    // The dimension index at which a frequency turns `rotations` times over the original context.
    auto correction = [&](double rotations) {
        return r * std::log(original / (rotations * 2 * kPi)) / (2 * std::log(spec.theta));
    };
    double low = correction(fast), high = correction(slow);
    if (truncate) {
        low = std::floor(low);
        high = std::ceil(high);
    }
    low = std::max(low, 0.0);
    high = std::min(high, static_cast<double>(r - 1));
    if (low == high) high += 0.001;  // as Hugging Face: avoids a zero-width ramp
    for (std::size_t i = 0; i < spec.invFreq.size(); ++i) {
        const double ramp = std::clamp((static_cast<double>(i) - low) / (high - low), 0.0, 1.0);
        const double keep = 1 - ramp;  // extrapolation weight: 1 for the fast (low-index) dimensions
        spec.invFreq[i] = spec.invFreq[i] / factor * (1 - keep) + spec.invFreq[i] * keep;
    }
}

// LongRoPE (Phi-3, Hugging Face's _compute_longrope_parameters): per-dimension divisors, the
// short ones up to the pretrained context and the long ones beyond it; cos and sin scaled by
// attention_factor, by default sqrt(1 + ln(s) / ln(original)) with s = max positions / original.
void longrope(const Scaling& sc, const RopeKeys& keys, RopeSpec& spec) {
    const JsonConfig& c = sc.c;
    const int r = spec.rotaryDim;
    const std::vector<double> shortFactor = factorList(sc, "short_factor", r);
    const std::vector<double> longFactor = factorList(sc, "long_factor", r);
    const double positions = c.positiveInt("max_position_embeddings");
    double factor = sc.optional("factor").value_or(1.0);
    double original = positions;
    // Phi-3 keeps the pretrained context outside rope_scaling; the ratio of the two is the factor.
    if (c.has("original_max_position_embeddings") || keys.defaultOriginalPositions > 0) {
        original = c.has("original_max_position_embeddings") ? c.positiveInt("original_max_position_embeddings")
                                                             : keys.defaultOriginalPositions;
        factor = positions / original;
    } else if (auto o = sc.optional("original_max_position_embeddings")) {
        original = *o;
        factor = positions / original;
    }
    if (auto given = sc.optional("attention_factor")) {
        spec.attentionScaling = *given;
    } else {
        spec.attentionScaling = factor <= 1 ? 1.0 : std::sqrt(1 + std::log(factor) / std::log(original));
    }
    spec.originalPositions = static_cast<std::int64_t>(original);
    spec.longInvFreq = spec.invFreq;
    for (std::size_t i = 0; i < spec.invFreq.size(); ++i) {
        spec.invFreq[i] /= shortFactor[i];
        spec.longInvFreq[i] /= longFactor[i];
    }
}

}  // namespace

RopeSpec readRope(const JsonConfig& c, int headDim, bool interleaved, RopeKeys keys) {
    RopeSpec spec;
    spec.rotaryDim = headDim;
    spec.interleaved = interleaved;
    if (headDim <= 0 || headDim % 2 != 0)
        c.fail("head_dim", "the rotary dimensions must be even and positive, found " + std::to_string(headDim));
    // The newer layout keeps theta and scaling together in rope_parameters.
    Scaling sc{c, nlohmann::json(), "rope_scaling"};
    double theta = keys.defaultTheta;
    if (c.has("rope_parameters")) {
        sc.owner = "rope_parameters";
        sc.obj = c.json().at("rope_parameters");
        if (!sc.obj.is_object()) sc.fail("must be an object, found " + jsonExcerpt(sc.obj));
        theta = sc.number("rope_theta", c.has(keys.theta) ? c.positiveNumber(keys.theta) : keys.defaultTheta);
    } else {
        theta = c.positiveNumber(keys.theta, keys.defaultTheta);
        if (c.has("rope_scaling")) {
            sc.obj = c.json().at("rope_scaling");
            if (!sc.obj.is_object()) sc.fail("must be an object or null, found " + jsonExcerpt(sc.obj));
        }
    }
    std::string type = "default";
    for (const char* key : {"rope_type", "type"}) {
        auto it = sc.obj.find(key);  // end() unless an object
        if (it == sc.obj.end() || it->is_null()) continue;
        if (!it->is_string()) sc.fail(std::string("'") + key + "' must be a string, found " + jsonExcerpt(*it));
        type = it->get<std::string>();
        break;
    }
    spec.type = type;
    spec.theta = theta;
    spec.invFreq = plainFrequencies(theta, headDim);
    std::vector<double>& inv = spec.invFreq;

    if (type == "linear") {  // positions divided by the factor
        const double factor = sc.number("factor");
        for (double& f : inv) f /= factor;
    } else if (type == "dynamic") {  // NTK-aware: theta grows once the input outruns max_position_embeddings
        spec.dynamicFactor = sc.number("factor");
        spec.maxPositions = c.positiveInt("max_position_embeddings");
    } else if (type == "yarn") {
        yarn(sc, spec);
    } else if (type == "longrope") {
        longrope(sc, keys, spec);
    } else if (type == "llama3") {
        // Long wavelengths are slowed by `factor`, short ones kept, and the band between them
        // interpolated (Llama 3.1).
        const double factor = sc.number("factor");
        const double low = sc.number("low_freq_factor");
        const double high = sc.number("high_freq_factor");
        const double original = sc.number("original_max_position_embeddings");
        if (!(high > low)) sc.fail("high_freq_factor must be greater than low_freq_factor");
        const double lowWavelen = original / low, highWavelen = original / high;
        for (double& f : inv) {
            const double wavelen = 2 * kPi / f;
            if (wavelen < highWavelen) continue;
            if (wavelen > lowWavelen) {
                f /= factor;
            } else {
                const double smooth = (original / wavelen - low) / (high - low);
                f = (1 - smooth) * f / factor + smooth * f;
            }
        }
    } else if (type != "default") {
        sc.fail("type '" + type + "' is not supported (default, linear, dynamic, yarn, longrope, llama3)");
    }
    return spec;
}

RopeSpec plainRope(double theta, int rotaryDim) {
    RopeSpec spec;
    spec.rotaryDim = rotaryDim;
    spec.theta = theta;
    spec.invFreq = plainFrequencies(theta, rotaryDim);
    return spec;
}

std::vector<double> RopeSpec::frequenciesFor(std::int64_t n) const {
    if (type == "dynamic" && maxPositions > 0 && n > maxPositions) {
        const double r = rotaryDim, grown = dynamicFactor * static_cast<double>(n) / static_cast<double>(maxPositions);
        return plainFrequencies(theta * std::pow(grown - (dynamicFactor - 1), r / (r - 2)), rotaryDim);
    }
    if (type == "longrope" && n > originalPositions) return longInvFreq;
    return invFreq;
}

RopeTables ropeTables(const RopeSpec& spec, std::int64_t n, const c10::Device& device) {
    const std::vector<double> freq = spec.frequenciesFor(n);
    at::Tensor inv = at::tensor(at::ArrayRef<double>(freq), at::kDouble);
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
