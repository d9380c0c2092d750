// Internal to workspace*.cpp: the checked reader of one JSON object of a workspace file, and the
// version 2 sections (workspace_views.cpp) that the top level reads and writes through it.
#pragma once

#include "figure/workspace.h"

#include "attnscope/runtime/error.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QJsonValue>
#include <QStringList>

#include <cmath>
#include <optional>

// One JSON object being read: every field is taken at most once, by type; what is left over
// when done() is called is an unknown field. Messages are "<file>: <path>.<field>: ...".
class WorkspaceReader {
public:
    WorkspaceReader(QJsonObject object, QString file, QString path)
        : o_(std::move(object)), file_(std::move(file)), path_(std::move(path)) {}

    [[noreturn]] void fail(const QString& field, const QString& what) const {
        throw attnscope::Error(
                (file_ + QStringLiteral(": ") + where(field) + QStringLiteral(": ") + what).toStdString());
    }
    QString where(const QString& field) const { return path_.isEmpty() ? field : path_ + QLatin1Char('.') + field; }
    bool has(const QString& field) const { return o_.contains(field); }

    QJsonValue take(const QString& field) {
        const QJsonValue v = o_.value(field);
        o_.remove(field);
        return v;
    }
    std::optional<QString> string(const QString& field) {
        if (!has(field)) return std::nullopt;
        const QJsonValue v = take(field);
        if (!v.isString()) fail(field, QStringLiteral("expected a string"));
        return v.toString();
    }
    std::optional<bool> boolean(const QString& field) {
        if (!has(field)) return std::nullopt;
        const QJsonValue v = take(field);
        if (!v.isBool()) fail(field, QStringLiteral("expected true or false"));
        return v.toBool();
    }
    std::optional<double> number(const QString& field, double lo, double hi) {
        if (!has(field)) return std::nullopt;
        const QJsonValue v = take(field);
        if (!v.isDouble()) fail(field, QStringLiteral("expected a number"));
        return checked(field, v.toDouble(), lo, hi);
    }
    std::optional<int> integer(const QString& field, int lo, int hi) {
        if (!has(field)) return std::nullopt;
        return integerOf(field, take(field), lo, hi);
    }
    int integerOf(const QString& field, const QJsonValue& v, int lo, int hi) const {
        if (!v.isDouble() || v.toDouble() != std::floor(v.toDouble()))
            fail(field, QStringLiteral("expected a whole number"));
        return int(checked(field, v.toDouble(), lo, hi));
    }
    double checked(const QString& field, double x, double lo, double hi) const {
        if (!std::isfinite(x) || x < lo || x > hi)
            fail(field, QStringLiteral("%1 is out of range (%2 to %3)")
                                .arg(x, 0, 'g', 6)
                                .arg(lo, 0, 'g', 6)
                                .arg(hi, 0, 'g', 6));
        return x;
    }
    // One of names (case-sensitive, as written by workspaceJson); its index.
    std::optional<int> choice(const QString& field, const QStringList& names) {
        const auto s = string(field);
        if (!s) return std::nullopt;
        const int i = int(names.indexOf(*s));
        if (i < 0) fail(field, QStringLiteral("unknown '%1' (use %2)").arg(*s, names.join(QStringLiteral(", "))));
        return i;
    }
    std::optional<WorkspaceReader> object(const QString& field) {
        if (!has(field)) return std::nullopt;
        const QJsonValue v = take(field);
        if (!v.isObject()) fail(field, QStringLiteral("expected an object"));
        return WorkspaceReader(v.toObject(), file_, where(field));
    }
    std::optional<QJsonArray> array(const QString& field) {
        if (!has(field)) return std::nullopt;
        const QJsonValue v = take(field);
        if (!v.isArray()) fail(field, QStringLiteral("expected an array"));
        return v.toArray();
    }
    QByteArray base64(const QString& field) {
        const auto s = string(field);
        if (!s) return {};
        const auto decoded = QByteArray::fromBase64Encoding(s->toLatin1(), QByteArray::AbortOnBase64DecodingErrors);
        if (!decoded) fail(field, QStringLiteral("expected base64 text"));
        return *decoded;
    }
    void done() const {
        if (!o_.isEmpty()) fail(o_.keys().first(), QStringLiteral("unknown field"));
    }
    const QString& file() const { return file_; }

private:
    QJsonObject o_;
    QString file_;
    QString path_;
};

// The Model tab, Image tab, Views dock and generation sections: read from the top object
// (each optional; absent = the defaults in workspace.h), and written into it.
void readViewSections(WorkspaceReader& r, Workspace& w);
void writeViewSections(const Workspace& w, QJsonObject& o);

// The Causal tab's section (workspace_causal.cpp) and the lab's knockout spec, checked
// by core's parser (attnscope/attention/knockout_spec.h): absent = the defaults in workspace.h.
void readCausalSection(WorkspaceReader& r, Workspace& w);
void writeCausalSection(const Workspace& w, QJsonObject& o);
// The Long context tab's section (workspace_long.cpp): read when present, written when it is
// not the defaults (so a file of a window that never touched the tab reads in an older AttnScope).
void readLongSection(WorkspaceReader& r, Workspace& w);
void writeLongSection(const Workspace& w, QJsonObject& o);
QString knockoutSpec(WorkspaceReader& lab);
