// The Long context tab's settings ("long"): optional, so files without them open with the tab's
// defaults. Every value is checked as its widget takes it (the spin boxes' ranges, the policy's
// names); the lengths and depths stay as typed, checked when a scan starts, as in the tab.
#include "figure/workspace_reader.h"

namespace {

const QStringList kPolicies = {QStringLiteral("h2o"), QStringLiteral("snapkv"),
                               QStringLiteral("streaming")};  // LongPanel's policy combo's order
constexpr int kMaxPositions = 1 << 20;                        // the budget, recent, window and sinks boxes

QJsonObject longObject(const Workspace::LongContext& s) {
    return {{QStringLiteral("haystack"), s.haystack},
            {QStringLiteral("needle"), s.needle},
            {QStringLiteral("question"), s.question},
            {QStringLiteral("answer"), s.answer},
            {QStringLiteral("ids"), s.ids},
            {QStringLiteral("lengths"), s.lengths},
            {QStringLiteral("depths"), s.depths},
            {QStringLiteral("scan_tokens"), s.scanTokens},
            {QStringLiteral("policy"), s.policy},
            {QStringLiteral("budget"), s.budget},
            {QStringLiteral("recent"), s.recent},
            {QStringLiteral("window"), s.window},
            {QStringLiteral("kernel"), s.kernel},
            {QStringLiteral("sinks"), s.sinks},
            {QStringLiteral("evict_tokens"), s.evictTokens}};
}

}  // namespace

void readLongSection(WorkspaceReader& r, Workspace& w) {
    auto c = r.object(QStringLiteral("long"));
    if (!c) return;
    Workspace::LongContext& s = w.longContext;
    const Workspace::LongContext d;
    s.haystack = c->string(QStringLiteral("haystack")).value_or(d.haystack);
    s.needle = c->string(QStringLiteral("needle")).value_or(d.needle);
    s.question = c->string(QStringLiteral("question")).value_or(d.question);
    s.answer = c->string(QStringLiteral("answer")).value_or(d.answer);
    s.ids = c->boolean(QStringLiteral("ids")).value_or(d.ids);
    s.lengths = c->string(QStringLiteral("lengths")).value_or(d.lengths);
    s.depths = c->string(QStringLiteral("depths")).value_or(d.depths);
    s.scanTokens = c->integer(QStringLiteral("scan_tokens"), 1, 512).value_or(d.scanTokens);
    if (auto p = c->choice(QStringLiteral("policy"), kPolicies)) s.policy = kPolicies[*p];
    s.budget = c->integer(QStringLiteral("budget"), 1, kMaxPositions).value_or(d.budget);
    s.recent = c->integer(QStringLiteral("recent"), -1, kMaxPositions).value_or(d.recent);
    s.window = c->integer(QStringLiteral("window"), 1, kMaxPositions).value_or(d.window);
    s.kernel = c->integer(QStringLiteral("kernel"), 1, 101).value_or(d.kernel);
    s.sinks = c->integer(QStringLiteral("sinks"), 0, kMaxPositions).value_or(d.sinks);
    s.evictTokens = c->integer(QStringLiteral("evict_tokens"), 1, 512).value_or(d.evictTokens);
    c->done();
}

void writeLongSection(const Workspace& w, QJsonObject& o) {
    const QJsonObject section = longObject(w.longContext);
    if (section != longObject(Workspace::LongContext{})) o.insert(QStringLiteral("long"), section);
}
