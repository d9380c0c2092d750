#include "attnscope/analysis/logit_lens.h"

#include "attention/trace_impl.h"
#include "attnscope/runtime/error.h"

#include <algorithm>
#include <string>

namespace attnscope {

at::Tensor LinearNorm::apply(const at::Tensor& component) const {
    return (centred ? component - component.mean(-1, /*keepdim=*/true) : component) * scale;
}

namespace {

const Readout& readoutOf(const Trace& trace, const char* analysis, const char* option) {
    const Trace::Impl& impl = trace.impl();
    if (!impl.readout)
        throw Error(
                std::string(analysis) + " needs a decoder-only language model run with " + option +
                " (this forward kept no readout: encoders, encoder-decoders, image models and maps files have none)");
    return *impl.readout;
}

void checkToken(const Readout& readout, std::int64_t token, const char* what) {
    if (token < 0 || token >= readout.vocabSize())
        throw Error(std::string(what) + " " + std::to_string(token) + " is outside the vocabulary (0.." +
                    std::to_string(readout.vocabSize() - 1) + ")");
}

}  // namespace

LogitLens logitLens(const Trace& trace, const LensOptions& options) {
    const Readout& readout = readoutOf(trace, "the logit lens", "recorded residuals");
    const auto& residuals = trace.impl().residuals;
    if (residuals.empty()) throw Error("the logit lens needs the forward run with recorded residuals");
    if (options.topK < 1 || options.topK > readout.vocabSize())
        throw Error("--top " + std::to_string(options.topK) + " is outside 1.." + std::to_string(readout.vocabSize()));
    if (options.token) checkToken(readout, *options.token, "--token");
    LogitLens out;
    out.rows = static_cast<int>(residuals.size());
    out.tokens = static_cast<int>(residuals.front().size(0));
    out.k = options.topK;
    // Rows of positions at a time: a [rows, vocab] float32 block stays near 64 MiB.
    const std::int64_t n = out.tokens,
                       chunk = std::max<std::int64_t>(1, (std::int64_t{16} << 20) / readout.vocabSize());
    for (const at::Tensor& h : residuals) {
        for (std::int64_t start = 0; start < n; start += chunk) {
            const std::int64_t len = std::min(chunk, n - start);
            const at::Tensor logProbs = at::log_softmax(readout.logits(h.narrow(0, start, len)).to(at::kFloat), -1);
            const auto top = logProbs.topk(options.topK, -1);
            const at::Tensor values = std::get<0>(top).to(at::kCPU).contiguous();
            const at::Tensor ids = std::get<1>(top).to(at::kCPU, at::kLong).contiguous();
            out.topLogProbs.insert(out.topLogProbs.end(), values.data_ptr<float>(),
                                   values.data_ptr<float>() + values.numel());
            out.topIds.insert(out.topIds.end(), ids.data_ptr<std::int64_t>(),
                              ids.data_ptr<std::int64_t>() + ids.numel());
            if (options.token) {
                const at::Tensor t = logProbs.select(1, *options.token).to(at::kCPU).contiguous();
                out.tokenLogProbs.insert(out.tokenLogProbs.end(), t.data_ptr<float>(), t.data_ptr<float>() + t.numel());
            }
        }
    }
    return out;
}

LogitAttribution directLogitAttribution(const Trace& trace, std::int64_t token, std::optional<std::int64_t> minus) {
    const Readout& readout = readoutOf(trace, "direct logit attribution", "an attribution position");
    const ResidualParts& parts = trace.impl().parts;
    if (parts.position < 0) throw Error("direct logit attribution needs the forward run with an attribution position");
    checkToken(readout, token, "--token");
    if (minus) checkToken(readout, *minus, "--minus");

    at::Tensor u = readout.direction(token);
    double biasDiff = readout.logitBias(token);
    if (minus) {
        u = u - readout.direction(*minus);
        biasDiff -= readout.logitBias(*minus);
    }
    const LinearNorm norm = readout.linearNormAt(parts.finalRow);
    const auto dla = [&](const at::Tensor& component) { return at::matmul(norm.apply(component), u); };

    LogitAttribution out;
    out.position = parts.position;
    out.layers = static_cast<int>(parts.heads.size());
    out.heads = out.layers > 0 ? static_cast<int>(parts.heads.front().size(0)) : 0;
    out.embed = dla(parts.embed).item<double>();
    double sum = out.embed;
    for (int l = 0; l < out.layers; ++l) {
        const at::Tensor perHead = dla(parts.heads[static_cast<std::size_t>(l)]).contiguous();  // [heads]
        out.perHead.insert(out.perHead.end(), perHead.data_ptr<double>(), perHead.data_ptr<double>() + perHead.numel());
        out.attnBias.push_back(dla(parts.attnBias[static_cast<std::size_t>(l)]).item<double>());
        out.mlp.push_back(dla(parts.mlp[static_cast<std::size_t>(l)]).item<double>());
        sum += perHead.sum().item<double>() + out.attnBias.back() + out.mlp.back();
    }
    out.finalBias = at::dot(norm.bias, u).item<double>() + biasDiff;
    out.sum = sum + out.finalBias;
    // The model's own logit difference, from the final residual as it ran.
    const at::Tensor logits = readout.logits(parts.finalRowAsRun).to(at::kCPU, at::kDouble);
    out.logitDiff = logits[0][token].item<double>() - (minus ? logits[0][*minus].item<double>() : 0.0);
    return out;
}

}  // namespace attnscope
