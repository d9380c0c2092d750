#include "attnscope/analysis/detectors.h"

#include "attention/rng.h"
#include "attnscope/analysis/metrics.h"
#include "attnscope/models/model.h"
#include "attnscope/runtime/error.h"

#include <algorithm>
#include <string>
#include <unordered_set>

namespace attnscope {

namespace {

std::size_t cell(int n, int i, int j) {
    return static_cast<std::size_t>(i) * static_cast<std::size_t>(n) + static_cast<std::size_t>(j);
}

}  // namespace

std::vector<std::uint8_t> previousTokenPattern(int n) {
    std::vector<std::uint8_t> d(static_cast<std::size_t>(n) * n, 0);
    for (int i = 1; i < n; ++i) d[cell(n, i, i - 1)] = 1;
    return d;
}

std::vector<std::uint8_t> duplicateTokenPattern(const std::vector<std::int64_t>& ids) {
    const int n = static_cast<int>(ids.size());
    std::vector<std::uint8_t> d(static_cast<std::size_t>(n) * n, 0);
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < i; ++j) d[cell(n, i, j)] = ids[j] == ids[i];
    return d;
}

std::vector<std::uint8_t> inductionPattern(const std::vector<std::int64_t>& ids) {
    const int n = static_cast<int>(ids.size());
    std::vector<std::uint8_t> d(static_cast<std::size_t>(n) * n, 0);
    for (int i = 0; i < n; ++i)
        for (int j = 1; j <= i; ++j) d[cell(n, i, j)] = ids[j - 1] == ids[i];
    return d;
}

std::vector<std::uint8_t> firstTokenPattern(int n) {
    std::vector<std::uint8_t> d(static_cast<std::size_t>(n) * n, 0);
    for (int i = 1; i < n; ++i) d[cell(n, i, 0)] = 1;
    return d;
}

double detectionScore(const HeadMap& map, const std::vector<std::uint8_t>& pattern, DetectionNorm norm) {
    checkMapShape(map, "detection score");
    if (map.rows != map.cols)
        throw Error("detection score: the map is " + std::to_string(map.rows) + "x" + std::to_string(map.cols) +
                    ", a detector needs a square map");
    const int n = map.rows;
    if (pattern.size() != static_cast<std::size_t>(n) * n)
        throw Error("detection score: the pattern has " + std::to_string(pattern.size()) + " cells, the map " +
                    std::to_string(n) + "x" + std::to_string(n));
    double hit = 0, mass = 0;
    for (int i = 0; i < n; ++i) {
        double rowHit = 0, rowMass = 0;
        bool target = false;
        for (int j = 0; j < n; ++j) {
            const double a = map.values[cell(n, i, j)];
            rowMass += a;
            if (pattern[cell(n, i, j)]) {
                rowHit += a;
                target = true;
            }
        }
        hit += rowHit;
        if (target || norm == DetectionNorm::AllRows) mass += rowMass;
    }
    return mass > 0 ? hit / mass : 0.0;
}

std::vector<HeadDetectors> traceDetectors(const Trace& trace, const MapOptions& map, DetectionNorm norm) {
    std::vector<HeadDetectors> out;
    const std::vector<std::int64_t>& ids = trace.ids();
    const int n = static_cast<int>(ids.size());
    const auto previous = previousTokenPattern(n), duplicate = duplicateTokenPattern(ids),
               induction = inductionPattern(ids), first = firstTokenPattern(n);
    for (int b = 0; b < static_cast<int>(trace.blocks().size()); ++b) {
        const BlockInfo& block = trace.blocks()[b];
        // Self-attention over the input ids only: a decoder of an encoder-decoder has other rows.
        if (static_cast<int>(block.queryTokens.size()) != n || static_cast<int>(block.keyTokens.size()) != n) continue;
        for (int l = 0; l < block.layers; ++l)
            for (int h = 0; h < block.heads; ++h) {
                const HeadMap m = trace.map(b, l, h, map);
                HeadDetectors d{block.name, l, h, {}};
                d.scores.previousToken = detectionScore(m, previous, norm);
                d.scores.duplicateToken = detectionScore(m, duplicate, norm);
                d.scores.induction = detectionScore(m, induction, norm);
                d.scores.firstToken = detectionScore(m, first, norm);
                out.push_back(d);
            }
    }
    return out;
}

std::vector<std::int64_t> detectorProbe(int vocabSize, int maxPositions, const DetectorOptions& o) {
    const int room = maxPositions > 0 ? (maxPositions - 1) / 2 : 50;
    const int L = o.repeatLength > 0 ? o.repeatLength : std::min(50, room);
    if (L < 2)
        throw Error("head detectors: the probe needs a repeated part of >= 2 ids; the model has " +
                    std::to_string(maxPositions) + " positions");
    if (maxPositions > 0 && 2 * L + 1 > maxPositions)
        throw Error("head detectors: a probe of 1 + 2·" + std::to_string(L) + " ids exceeds the model's " +
                    std::to_string(maxPositions) + " positions");
    if (vocabSize < 2) throw Error("head detectors: the model's vocabulary has " + std::to_string(vocabSize) + " ids");
    if (o.firstId >= vocabSize)
        throw Error("head detectors: first id " + std::to_string(o.firstId) + " is outside the vocabulary [0, " +
                    std::to_string(vocabSize) + ")");
    SplitMix rng(o.seed);
    const auto draw = [&] { return static_cast<std::int64_t>(rng.next() % static_cast<std::uint64_t>(vocabSize)); };
    // Distinct ids where the vocabulary has room (also distinct from a given first id), so each
    // second-half token has exactly one earlier copy.
    const bool distinct = vocabSize > L + 1;
    std::unordered_set<std::int64_t> used;
    if (o.firstId >= 0) used.insert(o.firstId);
    std::vector<std::int64_t> repeated;
    while (static_cast<int>(repeated.size()) < L) {
        const std::int64_t id = draw();
        if (distinct && !used.insert(id).second) continue;
        repeated.push_back(id);
    }
    std::int64_t first = o.firstId;
    while (first < 0) {
        const std::int64_t id = draw();
        if (!distinct || !used.count(id)) first = id;
    }
    std::vector<std::int64_t> probe{first};
    probe.insert(probe.end(), repeated.begin(), repeated.end());
    probe.insert(probe.end(), repeated.begin(), repeated.end());
    return probe;
}

DetectorReport headDetectors(const Model& model, const DetectorOptions& o, const RunOptions& run) {
    const ModelInfo& info = model.info();
    if (info.imageInput)
        throw Error(info.path.string() + ": head detectors need a text model; " + info.family + " takes images");
    if (info.encoderDecoder)
        throw Error(info.path.string() + ": head detectors run on decoder-only and encoder models; " + info.family +
                    " is an encoder-decoder");
    DetectorReport r;
    r.probe = detectorProbe(info.vocabSize, info.maxPositions, o);
    r.repeatLength = static_cast<int>(r.probe.size() - 1) / 2;
    const auto trace = model.forward(r.probe, run);
    r.heads = traceDetectors(*trace, o.map, o.norm);
    return r;
}

}  // namespace attnscope
