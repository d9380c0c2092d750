#include "batches.h"

#include <algorithm>
#include <string>

namespace attnscope::builtin {

namespace {

std::vector<std::int64_t> sentenceIds(const Symbols& symbols, const std::string& text) {
    std::vector<std::int64_t> ids = {kCls};
    std::size_t start = 0;
    while (start < text.size()) {
        const std::size_t end = std::min(text.find(' ', start), text.size());
        ids.push_back(symbols.id(text.substr(start, end - start)));
        start = end + 1;
    }
    return ids;
}

}  // namespace

Batch reverseBatch(TaskData& data, const Symbols& symbols, int size) {
    std::vector<std::string> sources(static_cast<std::size_t>(size));
    std::size_t longest = 0;
    for (auto& s : sources) longest = std::max(longest, (s = data.reverseSource()).size());
    const auto S = static_cast<std::int64_t>(longest);
    Batch b;
    b.source = at::full({size, S}, kPad, at::kLong);
    b.targetIn = at::full({size, S + 1}, kPad, at::kLong);
    b.targetOut = at::full({size, S + 1}, -100, at::kLong);  // -100: ignored by the loss
    auto src = b.source.accessor<std::int64_t, 2>();
    auto in = b.targetIn.accessor<std::int64_t, 2>();
    auto out = b.targetOut.accessor<std::int64_t, 2>();
    for (int i = 0; i < size; ++i) {
        const std::string& s = sources[static_cast<std::size_t>(i)];
        const auto n = static_cast<std::int64_t>(s.size());
        in[i][0] = kStart;
        for (std::int64_t j = 0; j < n; ++j) {
            src[i][j] = symbols.id(std::string(1, s[static_cast<std::size_t>(j)]));
            const std::int64_t y = symbols.id(std::string(1, s[static_cast<std::size_t>(n - 1 - j)]));
            out[i][j] = y;
            in[i][j + 1] = y;
        }
        out[i][n] = kEnd;
    }
    b.sourceAllowed = b.source.ne(kPad);
    return b;
}

Batch sentimentBatch(TaskData& data, const Symbols& symbols, int size) {
    std::vector<std::vector<std::int64_t>> rows;
    std::vector<std::int64_t> labels;
    std::size_t longest = 0;
    for (int i = 0; i < size; ++i) {
        const SentimentExample ex = data.sentiment();
        rows.push_back(sentenceIds(symbols, ex.text));
        labels.push_back(ex.positive ? 1 : 0);
        longest = std::max(longest, rows.back().size());
    }
    Batch b;
    b.source = at::full({size, static_cast<std::int64_t>(longest)}, kPad, at::kLong);
    auto src = b.source.accessor<std::int64_t, 2>();
    for (int i = 0; i < size; ++i)
        for (std::size_t j = 0; j < rows[static_cast<std::size_t>(i)].size(); ++j)
            src[i][static_cast<std::int64_t>(j)] = rows[static_cast<std::size_t>(i)][j];
    b.sourceAllowed = b.source.ne(kPad);
    b.labels = at::tensor(labels, at::kLong);
    return b;
}

Batch fileBatch(TaskData& data, const std::vector<Encoded>& examples, bool seq2seq, int size) {
    std::vector<const Encoded*> picked;
    std::size_t S = 0, T = 0;
    for (int i = 0; i < size; ++i) {
        picked.push_back(&examples[static_cast<std::size_t>(data.uniform(static_cast<int>(examples.size())))]);
        S = std::max(S, picked.back()->source.size());
        T = std::max(T, picked.back()->target.size());
    }
    Batch b;
    b.source = at::full({size, static_cast<std::int64_t>(S)}, kPad, at::kLong);
    auto src = b.source.accessor<std::int64_t, 2>();
    std::vector<std::int64_t> labels;
    if (seq2seq) {
        b.targetIn = at::full({size, static_cast<std::int64_t>(T) + 1}, kPad, at::kLong);
        b.targetOut = at::full({size, static_cast<std::int64_t>(T) + 1}, -100, at::kLong);  // -100: ignored
    }
    for (int i = 0; i < size; ++i) {
        const Encoded& e = *picked[static_cast<std::size_t>(i)];
        for (std::size_t j = 0; j < e.source.size(); ++j) src[i][static_cast<std::int64_t>(j)] = e.source[j];
        labels.push_back(e.label);
        if (!seq2seq) continue;
        auto in = b.targetIn.accessor<std::int64_t, 2>();
        auto out = b.targetOut.accessor<std::int64_t, 2>();
        in[i][0] = kStart;
        const auto n = static_cast<std::int64_t>(e.target.size());
        for (std::int64_t j = 0; j < n; ++j) {
            out[i][j] = e.target[static_cast<std::size_t>(j)];
            in[i][j + 1] = e.target[static_cast<std::size_t>(j)];
        }
        out[i][n] = kEnd;
    }
    b.sourceAllowed = b.source.ne(kPad);
    if (!seq2seq) b.labels = at::tensor(labels, at::kLong);
    return b;
}

at::Tensor taskLoss(const Weights& w, const Config& c, const Batch& b, std::vector<SiteMap>* maps) {
    Pass training;
    training.maps = maps;
    const at::Tensor memory = encode(w, c, b.source, b.sourceAllowed, training, nullptr);
    if (!c.seq2seq) return at::cross_entropy_loss(classify(w, memory), b.labels);
    // LSH hashes each target at its own length; other kinds need no key mask in the causal decoder.
    const at::Tensor targetAllowed = c.kind == AttentionKind::Lsh ? b.targetIn.ne(kPad) : at::Tensor();
    const at::Tensor logits =
            decode(w, c, b.targetIn, memory, b.sourceAllowed, training, nullptr, nullptr, targetAllowed);
    return at::cross_entropy_loss(logits.reshape({-1, c.vocabSize}), b.targetOut.reshape({-1}));
}

}  // namespace attnscope::builtin
