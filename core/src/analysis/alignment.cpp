#include "attnscope/analysis/alignment.h"

#include "attnscope/analysis/metrics.h"
#include "attnscope/runtime/error.h"
#include "runtime/text.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

namespace attnscope {

namespace {

// The word-start marks of the vocabularies we read, raw ("▁", "Ġ") and readable ("·", " ").
const char* const kWordMarks[] = {"\u2581", "\u0120", "\u00b7", " "};

std::string stripMark(const std::string& label) {
    for (const char* mark : kWordMarks)
        if (startsWith(label, mark) && label.size() > std::string(mark).size())
            return label.substr(std::string(mark).size());
    if (startsWith(label, "##") && label.size() > 2) return label.substr(2);
    return label;
}

bool hasWordMark(const std::string& label) {
    return std::any_of(std::begin(kWordMarks), std::end(kWordMarks),
                       [&](const char* m) { return startsWith(label, m); });
}

std::string describeHeads(const std::vector<LayerHead>& heads, const BlockInfo& block, bool byDefault) {
    std::ostringstream out;
    if (byDefault) {
        out << "every head of the last layer (layer " << block.layers - 1 << ", " << block.heads << " heads)";
        return out.str();
    }
    if (heads.size() == 1) {
        out << "layer " << heads[0].layer << " head " << heads[0].head;
        return out.str();
    }
    out << "the mean of " << heads.size() << " heads (";
    for (std::size_t i = 0; i < heads.size(); ++i) out << (i ? "," : "") << heads[i].layer << ":" << heads[i].head;
    out << ")";
    return out.str();
}

}  // namespace

bool isSpecialLabel(const std::string& s) {
    const auto n = s.size();
    if (n >= 3 && s.front() == '<' && s.back() == '>') return !startsWith(s, "<0x");  // <0xNN> is a byte, not a mark
    if (n >= 3 && s.front() == '[' && s.back() == ']')
        return std::all_of(s.begin() + 1, s.end() - 1, [](unsigned char c) { return std::isupper(c) || c == '_'; });
    if (n == 5 && s[2] == '_' && std::islower(static_cast<unsigned char>(s[0])) &&
        std::islower(static_cast<unsigned char>(s[1])) && std::isupper(static_cast<unsigned char>(s[3])) &&
        std::isupper(static_cast<unsigned char>(s[4])))
        return true;                                                         // mBART language code, e.g. en_XX
    return n >= 5 && startsWith(s, ">>") && s.compare(n - 2, 2, "<<") == 0;  // Marian's target-language token
}

std::vector<int> groupWords(const std::vector<std::string>& labels, const std::vector<bool>& drop) {
    bool marked = false;  // does this sequence write word starts (SentencePiece, byte-level BPE)?
    for (std::size_t i = 0; i < labels.size(); ++i)
        if (!drop[i] && hasWordMark(labels[i])) marked = true;
    std::vector<int> word(labels.size(), -1);
    int current = -1;
    for (std::size_t i = 0; i < labels.size(); ++i) {
        if (drop[i]) continue;
        const bool starts = current < 0 || (marked ? hasWordMark(labels[i]) : !startsWith(labels[i], "##"));
        if (starts) ++current;
        word[i] = current;
    }
    return word;
}

namespace {

// Per label its unit (token index or word index among the kept labels) and the units' labels.
std::vector<int> unitsOf(const std::vector<std::string>& labels, const std::vector<bool>& drop, AlignmentUnits units,
                         std::vector<std::string>& names) {
    std::vector<int> unit(labels.size(), -1);
    if (units == AlignmentUnits::Words) {
        unit = groupWords(labels, drop);
    } else {
        int next = 0;
        for (std::size_t i = 0; i < labels.size(); ++i)
            if (!drop[i]) unit[i] = next++;
    }
    for (std::size_t i = 0; i < labels.size(); ++i) {
        if (unit[i] < 0) continue;
        if (unit[i] == static_cast<int>(names.size()))
            names.push_back(stripMark(labels[i]));
        else
            names[unit[i]] += units == AlignmentUnits::Words ? stripMark(labels[i]) : labels[i];
    }
    return unit;
}

}  // namespace

Alignment alignCrossMap(const HeadMap& cross, const std::vector<std::string>& sourceLabels,
                        const std::vector<std::string>& rowLabels, AlignmentUnits units, AlignmentRows rows) {
    checkMapShape(cross, "alignment");
    if (static_cast<int>(sourceLabels.size()) != cross.cols || static_cast<int>(rowLabels.size()) != cross.rows)
        throw Error("alignment: the cross map is " + std::to_string(cross.rows) + "x" + std::to_string(cross.cols) +
                    " but " + std::to_string(rowLabels.size()) + " target and " + std::to_string(sourceLabels.size()) +
                    " source labels were given");
    Alignment a;
    std::vector<bool> sourceDrop(sourceLabels.size()), rowDrop(rowLabels.size());
    for (std::size_t j = 0; j < sourceLabels.size(); ++j) sourceDrop[j] = isSpecialLabel(sourceLabels[j]);
    for (std::size_t r = 0; r < rowLabels.size(); ++r)
        rowDrop[r] = r == 0 || isSpecialLabel(rowLabels[r]);  // row 0: the start symbol
    a.sourceUnitOf = unitsOf(sourceLabels, sourceDrop, units, a.sourceUnits);
    a.targetUnitOf = unitsOf(rowLabels, rowDrop, units, a.targetUnits);
    a.rowArgmax.assign(rowLabels.size(), -1);
    a.rowTarget.assign(rowLabels.size(), -1);
    std::set<std::pair<int, int>> links;
    for (int r = 0; r < cross.rows; ++r) {
        const int owner = rows == AlignmentRows::Input ? r : r + 1;  // the row whose token this row aligns
        if (owner >= cross.rows || a.targetUnitOf[owner] < 0) continue;
        int best = -1;
        for (int j = 0; j < cross.cols; ++j)
            if (!sourceDrop[j] && cross.at(r, j) > 0 && (best < 0 || cross.at(r, j) > cross.at(r, best))) best = j;
        if (best < 0) continue;  // no attention on any source token
        a.rowArgmax[r] = best;
        a.rowTarget[r] = a.targetUnitOf[owner];
        links.insert({a.sourceUnitOf[best], a.targetUnitOf[owner]});
    }
    a.links.assign(links.begin(), links.end());
    return a;
}

HeadMap meanCrossMap(const Trace& trace, const std::vector<LayerHead>& heads, const MapOptions& map) {
    const int b = trace.blockIndex("cross");
    const BlockInfo& block = trace.blocks()[b];
    std::vector<LayerHead> chosen = heads;
    if (chosen.empty())
        for (int h = 0; h < block.heads; ++h) chosen.push_back({block.layers - 1, h});
    HeadMap mean;
    for (const LayerHead& lh : chosen) {
        if (lh.layer < 0 || lh.layer >= block.layers || lh.head < 0 || lh.head >= block.heads)
            throw Error("alignment: head " + std::to_string(lh.layer) + ":" + std::to_string(lh.head) +
                        " is outside the cross block (layers 0-" + std::to_string(block.layers - 1) + ", heads 0-" +
                        std::to_string(block.heads - 1) + ")");
        const HeadMap m = trace.map(b, lh.layer, lh.head, map);
        if (mean.values.empty()) {
            mean = m;
        } else {
            for (std::size_t i = 0; i < m.values.size(); ++i) mean.values[i] += m.values[i];
        }
    }
    const float n = static_cast<float>(chosen.size());
    for (float& v : mean.values) v /= n;
    return mean;
}

Alignment alignTrace(const Trace& trace, const AlignmentOptions& options) {
    const HeadMap mean = meanCrossMap(trace, options.heads, options.map);
    const BlockInfo& block = trace.blocks()[trace.blockIndex("cross")];
    // The source's raw tokens keep the marks word grouping reads ("##" is gone from readable ones).
    const std::vector<std::string>& source =
            static_cast<int>(trace.tokens().size()) == mean.cols ? trace.tokens() : block.keyTokens;
    Alignment a = alignCrossMap(mean, source, block.queryTokens, options.units, options.rows);
    a.heads = describeHeads(options.heads, block, options.heads.empty());
    return a;
}

std::string pharaohLine(const Alignment& alignment) {
    std::string line;
    for (const auto& [i, j] : alignment.links)
        line += (line.empty() ? "" : " ") + std::to_string(i) + "-" + std::to_string(j);
    return line;
}

}  // namespace attnscope
