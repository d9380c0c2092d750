// AttentionFiles: File > Open Attention File… (or `attnscope F.npy`) reads a .npy of maps, e.g.
// saved from Hugging Face's output_attentions, with an optional tokens JSON (core:
// attention_file.h). The maps replace the model: the overview, the heat map, the metrics, rollout
// and export work from them; what needs the model's Q and K (the lab's variants and fit,
// temperature inside the model, head masking, running an input) is switched off with a line
// saying why. The display temperature stays: softmax(log A / T) of the stored probabilities
// equals softmax(logits / T).
#pragma once

#include <QObject>
#include <QString>

struct WindowParts;
class QAction;

class AttentionFiles : public QObject {
    Q_OBJECT
public:
    AttentionFiles(WindowParts& parts, QObject* parent);  // parts must outlive it

    QAction* makeAction();  // File > Open Attention File (.npy)…
    // The dialog ("openAttentionDialog": the .npy and optionally its tokens JSON), or a .npy
    // given here (its tokens: the JSON given, else tokensBeside); errors go to the error dialog.
    void openAttentionFileDialog();
    void openAttentionFile(const QString& npy, const QString& tokens = QString());

private:
    void onAttentionFileLoaded(const QString& npy);
    void setMapsOnly(const QString& mapsFile);  // empty: a model is open

    WindowParts& p_;
};
