#include "figure/mapdata.h"
#include "attnscope/analysis/metrics.h"

#include "attnscope/runtime/error.h"
#include "figure/output_file.h"
#include "attnscope/io/npy.h"

#include <QFileInfo>

QString csvField(const QString& text) {
    const bool quote = text.contains(QLatin1Char(',')) || text.contains(QLatin1Char('"')) ||
                       text.contains(QLatin1Char('\n')) || text.contains(QLatin1Char('\r')) ||
                       text.startsWith(QLatin1Char(' ')) || text.endsWith(QLatin1Char(' '));
    if (!quote) return text;
    QString t = text;
    t.replace(QLatin1String("\""), QLatin1String("\"\""));
    return QLatin1Char('"') + t + QLatin1Char('"');
}

void writeMapData(const attnscope::HeadMap& map, const QStringList& queryLabels, const QStringList& keyLabels,
                  const QString& path) {
    const std::string name = path.toStdString();
    if (map.rows <= 0 || map.cols <= 0) throw attnscope::Error(name + ": there is no attention map to write");
    attnscope::checkMapShape(map, name.c_str());
    const QString ext = QFileInfo(path).suffix().toLower();
    if (ext == QLatin1String("npy")) {
        attnscope::writeNpy(path.toStdString(), {map.rows, map.cols}, map.values);
        return;
    }
    if (ext != QLatin1String("csv")) throw attnscope::Error(name + ": unknown data format (use .npy or .csv)");
    const auto label = [](const QStringList& labels, int i) {
        return i < labels.size() ? labels[i] : QString::number(i);
    };
    QString text = csvField(QStringLiteral("query\\key"));
    for (int k = 0; k < map.cols; ++k) text += QLatin1Char(',') + csvField(label(keyLabels, k));
    text += QLatin1String("\r\n");
    for (int q = 0; q < map.rows; ++q) {
        text += csvField(label(queryLabels, q));
        for (int k = 0; k < map.cols; ++k) text += QLatin1Char(',') + QString::number(double(map.at(q, k)), 'g', 9);
        text += QLatin1String("\r\n");
    }
    FigureOutput file(path);  // checks the path first (output rule), writes on commit
    file.device().write(text.toUtf8());
    file.commit();
}
