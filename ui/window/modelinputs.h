// ModelInputs: models, inputs and runs. It opens a model (a folder, builtin:NAME, a dropped
// path) in the background, describes it once loaded and keeps the typed input when the new
// tokenizer takes it (else an example), runs the input or the image (image models), and shows
// the session's progress, failures and Cancel. The state's model and input are set here.
#pragma once

#include <QObject>
#include <QString>

#include <memory>

namespace attnscope {
struct ModelInfo;
struct RgbImage;
}  // namespace attnscope
struct WindowParts;
class QAction;

class ModelInputs : public QObject {
    Q_OBJECT
public:
    // Made before the controllers (the session's signals reach it first); parts must outlive it.
    ModelInputs(WindowParts& parts, QObject* parent);

    // An example input for a model: text for the built-in tasks, else the first token ids.
    static QString exampleInput(const QString& spec, bool hasTokenizer, int vocabSize, int maxPositions);

    void chooseModelFolder();  // the folder dialog ("openFolderDialog")
    // Loads a model folder or builtin:NAME, then runs the input (an example when the box holds
    // none for this model); errors show in the error dialog.
    void openModel(const QString& spec);
    void runInput();  // what the input box holds (or the image, for image models)
    // File > Open Image… (non-modal dialog "openImageDialog"), or a file given or dropped: decoded
    // with QImage, then run when the current model takes images; false (a dialog) when unreadable.
    void openImage();
    bool setImageFile(const QString& path);
    QString imageFile() const { return imagePath_; }
    std::shared_ptr<const attnscope::RgbImage> image() const { return image_; }
    // A workspace's image, already decoded (its run waits for the model).
    void setImage(const QString& path, std::shared_ptr<const attnscope::RgbImage> image);
    QAction* openImageAction() const { return openImageAction_; }

    // What the session is opening (for the failure's headline); an attention file's tokens
    // stand as the example (a model opened next replaces them).
    void setPendingSpec(const QString& spec) { pendingSpec_ = spec; }
    void setExampleShown(const QString& text) { exampleShown_ = text; }
    QString modelName() const;  // the open model's short name

    void onBusyChanged(bool busy);
    void onProgress(int permille);
    void updateRunEnabled();

private:
    void connectSession();
    void buildFamilyInputs();
    void onModelLoaded(const attnscope::ModelInfo& info);
    bool inputFits(const QString& text, bool ids) const;  // the open model's tokenizer takes it
    bool runImageInput();

    WindowParts& p_;
    QAction* openImageAction_ = nullptr;
    QString pendingSpec_;      // the model being opened, for messages
    QString exampleShown_;     // the example the input box was given (replaced on a model change)
    bool freshModel_ = false;  // a model loaded, its first trace not yet shown
    QString imagePath_;        // the image file image models run on
    std::shared_ptr<const attnscope::RgbImage> image_;  // its pixels; null before the first image
};
