// The encoders' forward for the gradient sources (gradient_runner.h): EncoderStack's layers and
// classifier head over autogradAlias()es of their weights (layer_stack.h).
#include "attnscope/runtime/error.h"
#include "layer_stack.h"

namespace attnscope {

void EncoderStack::requireHead(const std::string& family) const {
    if (!hasOutputToExplain()) throw Error("this " + family + " model has no classification head");
}

ClassifierHead ClassifierHead::aliased() const {
    ClassifierHead h = *this;
    for (Linear* l : {&h.dense, &h.out}) *l = autogradAlias(*l);
    for (at::Tensor& t : h.extra) t = autogradAlias(t);
    h.denseNorm = autogradAlias(denseNorm);
    return h;
}

GradientRun EncoderStack::runGradients(const TextInput& text, const std::optional<RgbImage>& image,
                                       const RunOptions& options) const {
    StackPass pass;
    at::Tensor x = gradientInput(text, image, pass);
    at::AutoGradMode enable(true);
    x = x.clone().requires_grad_(true);  // an ordinary tensor: autograd may not keep inference ones
    GradientRun out;
    pass.progress = true;
    pass.alphas = &out.alphas;
    std::vector<StackLayer> layers;  // the weights as autogradAlias()es (an encoder has no cross-attention)
    for (StackLayer L : layers_) {
        for (Linear* p : {&L.self.q, &L.self.k, &L.self.v, &L.self.o, &L.inner, &L.gate, &L.out})
            *p = autogradAlias(*p);
        for (Norm* n : {&L.selfNorm, &L.ffNorm}) *n = autogradAlias(*n);
        L.selfBias = autogradAlias(L.selfBias);
        layers.push_back(std::move(L));
    }
    BlockCapture capture;
    x = runStack(spec_, layers, x, pass, options, capture);
    out.outputs = head_.aliased()
                          .logits(stackNorm(spec_, x, autogradAlias(final_)), pass.mask.keyAllowed)
                          .reshape({-1})
                          .to(at::kFloat);
    return out;
}

}  // namespace attnscope
