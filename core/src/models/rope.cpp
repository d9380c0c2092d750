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

std::vector<double> ropeInverseFrequencies(const JsonConfig& c, int headDim) {
    if (headDim % 2 != 0) c.fail("head_dim", "must be even for rotary embeddings, found " + std::to_string(headDim));
    // The newer layout keeps theta and scaling together in rope_parameters.
    nlohmann::json scaling;
    std::string owner = "rope_scaling";
    double theta = 10000.0;
    if (c.has("rope_parameters")) {
        owner = "rope_parameters";
        scaling = c.json().at("rope_parameters");
        if (!scaling.is_object()) c.fail(owner, "must be an object, found " + jsonExcerpt(scaling));
        theta = number(c, scaling, owner, "rope_theta", c.has("rope_theta") ? c.positiveNumber("rope_theta") : 10000.0);
    } else {
        theta = c.positiveNumber("rope_theta", 10000.0);
        if (c.has("rope_scaling")) {
            scaling = c.json().at("rope_scaling");
            if (!scaling.is_object()) c.fail(owner, "must be an object or null, found " + jsonExcerpt(scaling));
        }
    }
    if (scaling.is_object()) {
        auto f = scaling.find("partial_rotary_factor");
        if (f != scaling.end() && f->is_number() && f->get<double>() != 1.0)
            c.fail(owner, "partial_rotary_factor is not supported");
    }
    if (c.has("partial_rotary_factor") && c.json().at("partial_rotary_factor") != 1.0)
        c.fail("partial_rotary_factor", "is not supported (only 1.0)");

    std::string type = "default";
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

RopeTables ropeTables(const std::vector<double>& invFreq, std::int64_t n, const c10::Device& device) {
    at::Tensor inv = at::tensor(at::ArrayRef<double>(invFreq), at::kDouble);
    at::Tensor pos = at::arange(n, at::kDouble);
    at::Tensor angles = at::outer(pos, inv);  // [n, d/2], double so long positions stay exact
    angles = at::cat({angles, angles}, 1).to(at::kFloat);
    return {angles.cos().to(device), angles.sin().to(device)};
}

at::Tensor applyRope(const at::Tensor& x, const RopeTables& t) {
    const auto d = x.size(-1);
    at::Tensor x1 = x.narrow(-1, 0, d / 2), x2 = x.narrow(-1, d / 2, d / 2);
    at::Tensor rotated = at::cat({-x2, x1}, -1);
    const auto type = x.scalar_type();
    return x * t.cos.to(type) + rotated * t.sin.to(type);
}

}  // namespace attnscope
