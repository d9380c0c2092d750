// The figure and map-data writers' output: rendered into memory, then written through core's one
// atomic writer (attnscope/io/atomic_file.h), so exports follow the same output rule as the CLI:
// a link's target is replaced and the link kept, a device, FIFO or folder is refused with
// "PATH: not a regular file", and the path is checked before anything is rendered.
#pragma once

#include "attnscope/io/atomic_file.h"

#include <QBuffer>
#include <QFile>
#include <QString>

class FigureOutput {
public:
    explicit FigureOutput(const QString& path) : target_(QFile::encodeName(path).toStdString()) {
        buffer_.open(QIODevice::WriteOnly);
    }
    QIODevice& device() { return buffer_; }
    // Writes what was rendered; throws attnscope::Error naming the path.
    void commit() {
        target_.write(buffer_.data().constData(), std::size_t(buffer_.data().size()));
        target_.commit();
    }

private:
    attnscope::AtomicFile target_;
    QBuffer buffer_;
};
