// Adam (Kingma & Ba) on one tensor, in place, for the lab's fits (additive_fit.cpp, hedgehog.cpp):
// β1 0.9, β2 0.999, ε 1e-8, bias-corrected; t counts steps from 1.
#pragma once

#include <ATen/ATen.h>

#include <cmath>

namespace attnscope {

struct Adam {
    at::Tensor m, s;
    void step(at::Tensor& param, const at::Tensor& grad, double lr, int t) {
        if (!m.defined()) m = at::zeros_like(param), s = at::zeros_like(param);
        const double b1 = 0.9, b2 = 0.999, eps = 1e-8;
        m.mul_(b1).add_(grad, 1 - b1);
        s.mul_(b2).addcmul_(grad, grad, 1 - b2);
        const double c1 = 1 - std::pow(b1, t), c2 = 1 - std::pow(b2, t);
        param.addcdiv_(m, (s / c2).sqrt_().add_(eps), -lr / c1);
    }
};

}  // namespace attnscope
