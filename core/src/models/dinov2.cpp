// DINOv2 (model_type "dinov2") and DINOv2 with registers ("dinov2_with_registers"): pre-LN
// layers with a layer scale (λ ⊙ output, λ1 after attention and λ2 after the MLP, folded into
// the output projections) and an MLP of hidden_size · mlp_ratio (or, with use_swiglu_ffn, the
// SwiGLU of the giant checkpoints: silu(x₁) · x₂ from weights_in's two halves, of width
// (int(⅔ · int(hidden_size · mlp_ratio)) + 7) // 8 · 8); the learned positions are
// interpolated bicubically to the input's patch grid (checkpoints are trained at 518² and run
// at the processor's 224² crop), antialiased in the registers variant as Hugging Face does it.
// The registers ("[REG 1]" …) follow [CLS] without positions. Dinov2ForImageClassification's
// classifier reads [CLS] concatenated with the mean of the patch tokens (registers excluded).
// BitImageProcessor: bicubic shortest edge, center crop. Weights with or without the prefix.
#include "vision_encoder.h"

#include <algorithm>
#include <cmath>

namespace attnscope {

namespace {

// One axis of interpolatePositions as an [out, in] matrix.
at::Tensor resampleMatrix(int in, int out, bool antialias) {
    at::Tensor m = at::zeros({out, in}, at::kDouble);
    auto* w = m.data_ptr<double>();
    if (antialias) {  // torch's antialiased bicubic weights are PIL's
        const AxisWeights a = axisWeights(in, out, 3);
        for (int i = 0; i < out; ++i)
            for (std::size_t t = 0; t < a.weights[i].size(); ++t) w[i * in + a.first[i] + t] += a.weights[i][t];
        return m;
    }
    const double A = -0.75, scale = static_cast<double>(in) / out;
    const auto near = [&](double x) { return ((A + 2) * x - (A + 3)) * x * x + 1; };       // |x| ≤ 1
    const auto far = [&](double x) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; };  // 1 < |x| < 2
    for (int i = 0; i < out; ++i) {
        const double src = (i + 0.5) * scale - 0.5;
        const double x0 = std::floor(src), t = src - x0;
        const double coeff[4] = {far(t + 1), near(t), near(1 - t), far(2 - t)};
        for (int k = 0; k < 4; ++k) {
            const int j = std::min(in - 1, std::max(0, static_cast<int>(x0) - 1 + k));
            w[i * in + j] += coeff[k];
        }
    }
    return m;
}

}  // namespace

at::Tensor interpolatePositions(const at::Tensor& grid, int rows, int cols, bool antialias) {
    const std::int64_t g = grid.size(0), gc = grid.size(1), E = grid.size(2);
    const at::Tensor my = resampleMatrix(static_cast<int>(g), rows, antialias).to(grid.device());
    const at::Tensor mx = resampleMatrix(static_cast<int>(gc), cols, antialias).to(grid.device());
    const at::Tensor x = grid.to(at::kDouble);
    const at::Tensor byRows = at::matmul(my, x.reshape({g, gc * E})).reshape({rows, gc, E});
    return at::matmul(mx, byRows.transpose(0, 1).reshape({gc, rows * E}))
            .reshape({cols, rows, E})
            .transpose(0, 1)
            .contiguous()
            .to(grid.scalar_type());
}

void foldLayerScale(WeightStore& w, std::vector<StackLayer>& layers, const std::string& scale1,
                    const std::string& scale2, std::int64_t E) {
    auto fold = [](Linear& l, const at::Tensor& lambda) {
        const at::Tensor s = lambda.to(at::kFloat);
        l.weight = (l.weight.to(at::kFloat) * s.unsqueeze(1)).to(l.weight.scalar_type());
        if (l.bias.defined()) l.bias = (l.bias.to(at::kFloat) * s).to(l.bias.scalar_type());
    };
    for (std::size_t l = 0; l < layers.size(); ++l) {
        const std::string p = "encoder.layer." + std::to_string(l) + ".";
        fold(layers[l].self.o, w.get(p + scale1, {E}));
        fold(layers[l].out, w.get(p + scale2, {E}));
    }
}

namespace {

const StackNames kDinov2Names{"attention.", {"attention.query", "attention.key", "attention.value", "output.dense"},
                              "norm1",      "",
                              "",           "mlp.fc1",
                              "",           "mlp.fc2",
                              "norm2"};

VisionSpec dinov2Spec(const JsonConfig& c, bool registers) {
    VisionSpec s;
    s.family = registers ? "dinov2_with_registers" : "dinov2";
    s.prefixes = {registers ? "dinov2_with_registers." : "dinov2."};
    VisionSizes defaults;  // Dinov2Config / Dinov2WithRegistersConfig
    defaults.eps = 1e-6;
    defaults.patch = registers ? 16 : 14;
    s.sizes = readVisionSizes(c, defaults, false);
    const double ratio = c.positiveNumber("mlp_ratio", 4.0);
    const double inner = std::floor(s.sizes.hidden * ratio);  // int(hidden_size * mlp_ratio)
    if (inner < 1 || inner > (1 << 30)) c.fail("mlp_ratio", "gives an MLP width of " + std::to_string(inner));
    s.sizes.inner = static_cast<int>(inner);
    s.names = kDinov2Names;
    if (c.boolean("use_swiglu_ffn", false)) {  // Dinov2SwiGLUFFN; hidden_act does not apply
        s.sizes.inner = (static_cast<int>(s.sizes.inner * 2.0 / 3.0) + 7) / 8 * 8;
        s.sizes.activation = "silu";
        s.names.inner = "mlp.weights_in";
        s.names.out = "mlp.weights_out";
        s.names.fusedGate = true;
        s.notes.push_back("SwiGLU MLP");
    }
    if (registers && c.has("num_register_tokens")) {
        const auto& v = c.json().at("num_register_tokens");
        if (!v.is_number_integer() || v.get<long long>() < 0 || v.get<long long>() > 1024)
            c.fail("num_register_tokens", "must be an integer between 0 and 1024, found " + v.dump());
        s.registers = v.get<int>();
    } else if (registers) {
        s.registers = 4;
    }
    s.leading = {{"[CLS]", "embeddings.cls_token"}};
    s.positions = registers ? PositionFit::BicubicAntialias : PositionFit::Bicubic;
    s.loadExtras = [E = s.sizes.hidden](WeightStore& w, std::vector<StackLayer>& layers, at::Tensor&) {
        foldLayerScale(w, layers, "layer_scale1.lambda1", "layer_scale2.lambda1", E);
    };
    // The classifier reads [CLS] beside the mean of the patches (after the registers): 2E inputs.
    s.loadClassifier = [E = s.sizes.hidden, from = 1 + s.registers](WeightStore& w, ClassifierHead& head) {
        head.out = optionalClassifier(w, "classifier", 2 * E);
        head.pool = [from](const ClassifierHead& h, const at::Tensor& x, const at::Tensor&) {
            return h(at::cat({x.narrow(0, 0, 1), x.narrow(0, from, x.size(0) - from).mean(0, true)}, 1));
        };
    };
    s.processor = processorDefaults("Bit");
    s.notes.push_back("layer scale");
    if (s.registers > 0) s.notes.push_back(std::to_string(s.registers) + " registers");
    return s;
}

}  // namespace

std::shared_ptr<const Model> loadDinov2(const std::filesystem::path& folder, const JsonConfig& config,
                                        c10::Device device, const LoadOptions& options) {
    return loadVisionEncoder(folder, config, device, options, dinov2Spec(config, false));
}

std::shared_ptr<const Model> loadDinov2WithRegisters(const std::filesystem::path& folder, const JsonConfig& config,
                                                     c10::Device device, const LoadOptions& options) {
    return loadVisionEncoder(folder, config, device, options, dinov2Spec(config, true));
}

}  // namespace attnscope
