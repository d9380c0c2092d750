// Head detectors as TransformerLens's head_detector defines them: a head's score against a 0/1
// detection pattern D over its n×n map A (row = query, column = key),
//   TransformerLens (detect_head, error_measure "mul", no exclusions):  Σ A⊙D / Σ A
//   here (DetectionNorm::TargetRows, the default):                      Σ A⊙D / Σ_{i ∈ R} Σ_j A_ij
// where R are the rows in which D has a 1. The two differ only in the rows that have no target:
// TransformerLens counts them in the denominator, so on the repeated random sequence below a
// perfect induction head scores L/(2L+1) ≈ 0.5 there and 1 here (multiply by |R|·(row mass) /
// Σ A to get TransformerLens's number; DetectionNorm::AllRows gives it exactly).
//
// Patterns (TransformerLens's get_*_detection_pattern; all lower triangular):
//   previous token   D_ij = 1 when j = i - 1
//   duplicate token  D_ij = 1 when j < i and ids_j = ids_i (an earlier copy of the same token)
//   induction        D_ij = 1 when 1 <= j <= i and ids_{j-1} = ids_i, j - 1 < i (the token after
//                    an earlier copy: the duplicate pattern shifted one key to the right)
//   first token      D_ij = 1 when j = 0 and i >= 1 (attention sink; row 0 can only see itself)
//
// The detectors of a model run it on a probe the detector builds, as TransformerLens's demos do
// for induction heads: one first id, then L random ids, then the same L ids again, so every token
// of the second half has exactly one earlier copy (the L ids are distinct when the vocabulary
// allows). Plain C++ on HeadMap, torch-free.
#pragma once

#include "attnscope/attention/trace.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace attnscope {

class Model;
struct RunOptions;

// Row-major n×n 0/1 patterns (values[i * n + j]).
std::vector<std::uint8_t> previousTokenPattern(int n);
std::vector<std::uint8_t> duplicateTokenPattern(const std::vector<std::int64_t>& ids);
std::vector<std::uint8_t> inductionPattern(const std::vector<std::int64_t>& ids);
std::vector<std::uint8_t> firstTokenPattern(int n);

enum class DetectionNorm { TargetRows, AllRows };

// The score of a square map against a pattern of the same size; 0 when the rows counted hold no
// attention (no target anywhere: a sequence without repeated tokens for duplicate/induction).
// Throws attnscope::Error when the map is not square or the pattern's size differs.
double detectionScore(const HeadMap& map, const std::vector<std::uint8_t>& pattern,
                      DetectionNorm norm = DetectionNorm::TargetRows);

// One head's four scores; NaN while not computed (a metric table without detectors).
struct DetectorScores {
    double previousToken = std::numeric_limits<double>::quiet_NaN();
    double duplicateToken = std::numeric_limits<double>::quiet_NaN();
    double induction = std::numeric_limits<double>::quiet_NaN();
    double firstToken = std::numeric_limits<double>::quiet_NaN();  // sink
    bool computed() const { return !std::isnan(induction); }
};

struct HeadDetectors {
    std::string block;
    int layer = 0, head = 0;
    DetectorScores scores;
};

// The four scores of every head of every self-attention block of a trace, on the trace's own ids
// (TransformerLens's detect_head on that sequence), blocks in Trace order, then layer, then head.
// Cross-attention blocks (keys are not the queries) are skipped.
std::vector<HeadDetectors> traceDetectors(const Trace& trace, const MapOptions& map = {},
                                          DetectionNorm norm = DetectionNorm::TargetRows);

struct DetectorOptions {
    // L, the length of the repeated part; 0 = min(50, (positions - 1) / 2).
    int repeatLength = 0;
    std::uint64_t seed = 0;     // the random ids (the same on every platform)
    std::int64_t firstId = -1;  // the probe's first id (a BOS); -1 = a random id not among the L
    MapOptions map;             // which maps are scored (temperature for display)
    DetectionNorm norm = DetectionNorm::TargetRows;
};

// [first] + R + R with R = L ids drawn from [0, vocab) (distinct when vocab > L). Throws
// attnscope::Error when the model has fewer than 2L + 1 positions, L < 2 or firstId is outside
// the vocabulary.
std::vector<std::int64_t> detectorProbe(int vocabSize, int maxPositions, const DetectorOptions& options);

struct DetectorReport {
    std::vector<std::int64_t> probe;
    int repeatLength = 0;
    std::vector<HeadDetectors> heads;
};

// Runs the model on its probe and scores every head (traceDetectors). Throws attnscope::Error
// for image models and encoder-decoders (their decoder is not run on ids alone).
DetectorReport headDetectors(const Model& model, const DetectorOptions& options, const RunOptions& run);

}  // namespace attnscope
