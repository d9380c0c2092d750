#include "alibi.h"

#include <cmath>

namespace attnscope {

std::vector<double> alibiSlopes(int heads) {
    int p = 1;
    while (p * 2 <= heads) p *= 2;
    // base^k with base rounded to float32 first and each power rounded to float32, as torch.pow
    // of a float32 tensor gives them.
    auto powers = [](double base, int count, int first, int step, std::vector<double>& out) {
        const double b = static_cast<float>(base);
        for (int i = 0; i < count; ++i) out.push_back(static_cast<float>(std::pow(b, first + i * step)));
    };
    std::vector<double> slopes;
    powers(std::pow(2.0, -8.0 / p), p, 1, 1, slopes);
    if (p != heads) powers(std::pow(2.0, -4.0 / p), heads - p, 1, 2, slopes);
    return slopes;
}

}  // namespace attnscope
