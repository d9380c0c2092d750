// OutputPanel: what the model produced for the input: the generated target (encoder-decoder),
// the class and its probabilities (classifier) or the most likely next tokens (language model).
#pragma once

#include <QWidget>

#include <memory>

namespace attnscope {
struct Generation;
class Model;
class Tokenizer;
class Trace;
}  // namespace attnscope

class QLabel;

class OutputPanel : public QWidget {
    Q_OBJECT
public:
    explicit OutputPanel(QWidget* parent = nullptr);

    // tokenizer (the folder's, may be null): next tokens in their readable forms, the raw
    // vocabulary string in brackets where it differs. forcedTarget: the encoder-decoder's decoder
    // was given the target (the cross block's rows), so the outputs are the model's argmax per
    // row rather than a generated text.
    void showOutputs(const attnscope::Trace& trace, const attnscope::Model& model,
                     const attnscope::Tokenizer* tokenizer = nullptr, bool forcedTarget = false);
    // Step `step` of a generation (its prefix trace has no logits of its own): the token chosen
    // there, its probability under the model and under the sampling distribution, and the
    // model's most likely tokens at that step (Generation::steps), the chosen one in bold.
    void showGenerationStep(const attnscope::Generation& generation, int step, const attnscope::Model& model,
                            const attnscope::Tokenizer* tokenizer, bool sampled);
    void clear();
    QString text() const;  // the shown text (plain), for tests

    static constexpr int kTopK = 5;

private:
    QLabel* label_ = nullptr;
};
