// The Causal tab's settings ("causal") and the lab's attention knockouts ("lab.knockout", the
// CLI's --knockout syntax) in a workspace file: optional, so files without them open as before.
// Every value is checked as its widget or core's parser would take it.
#include "figure/workspace_reader.h"

#include "attnscope/attention/knockout_spec.h"

namespace {

const QStringList kWhats = {QStringLiteral("heads"), QStringLiteral("resid"), QStringLiteral("attn_out"),
                            QStringLiteral("mlp_out")};  // attnscope::PatchWhat's order
constexpr double kMaxId = 9007199254740992;              // 2^53: every id up to it is exact in JSON

std::optional<std::int64_t> tokenId(WorkspaceReader& r, const QString& field) {
    const auto v = r.number(field, 0, kMaxId);
    if (!v) return std::nullopt;
    if (*v != std::floor(*v)) r.fail(field, QStringLiteral("expected a whole number (a vocabulary id)"));
    return std::int64_t(*v);
}

}  // namespace

QString knockoutSpec(WorkspaceReader& lab) {
    const auto spec = lab.string(QStringLiteral("knockout"));
    if (!spec || spec->trimmed().isEmpty()) return {};
    try {
        return QString::fromStdString(attnscope::formatKnockouts(attnscope::parseKnockouts(spec->toStdString())));
    } catch (const attnscope::Error& e) {
        lab.fail(QStringLiteral("knockout"), QString::fromUtf8(e.what()));
    }
}

void readCausalSection(WorkspaceReader& r, Workspace& w) {
    auto c = r.object(QStringLiteral("causal"));
    if (!c) return;
    Workspace::Causal& s = w.causal;
    s.clean = c->string(QStringLiteral("clean")).value_or(QString());
    s.corrupt = c->string(QStringLiteral("corrupt")).value_or(QString());
    s.ids = c->boolean(QStringLiteral("ids")).value_or(false);
    s.answer = tokenId(*c, QStringLiteral("answer"));
    s.wrong = tokenId(*c, QStringLiteral("wrong"));
    s.position = c->integer(QStringLiteral("position"), -1, 1 << 20).value_or(-1);  // the spin box's range
    if (auto what = c->choice(QStringLiteral("what"), kWhats)) s.what = kWhats[*what];
    s.attribution = c->boolean(QStringLiteral("attribution")).value_or(false);
    c->done();
}

void writeCausalSection(const Workspace& w, QJsonObject& o) {
    const Workspace::Causal& s = w.causal;
    QJsonObject c{{QStringLiteral("clean"), s.clean}, {QStringLiteral("corrupt"), s.corrupt},
                  {QStringLiteral("ids"), s.ids},     {QStringLiteral("position"), s.position},
                  {QStringLiteral("what"), s.what},   {QStringLiteral("attribution"), s.attribution}};
    if (s.answer) c.insert(QStringLiteral("answer"), double(*s.answer));
    if (s.wrong) c.insert(QStringLiteral("wrong"), double(*s.wrong));
    o.insert(QStringLiteral("causal"), c);
}
