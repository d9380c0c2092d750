// The kinds report (issue 36): every attention kind trained on one task with the same budget and
// seeds, and each kind's attention forward timed against sequence length.
//
// kinds.csv, one row per kind:
//   kind, parameters (the kind's settings), parameter_count, accuracy_mean, accuracy_spread (max - min
//   over the seeds), length_buckets (three input-length ranges in tokens, "a-b|c-d|e-f"), accuracy_short,
//   accuracy_medium, accuracy_long (mean over seeds), seconds_per_epoch (training only, mean over
//   seeds), peak_rss_mib (the process's peak resident memory while training, largest over seeds),
//   mean_entropy (mean head entropy at the last epoch, nats, mean over seeds)
// scaling.csv, one row per kind and length: kind, n, seconds (one attention forward of one head,
//   d = 32, q, k, v random, no mask: the computation the built-in layer runs at inference), peak_extra_mib
//   (peak resident memory above the resident memory before the call), note ("" when measured;
//   otherwise why not, e.g. the memory the call would need against what is available; seconds and
//   peak_extra_mib are then -1).
// Peak memory is read from /proc/self/status (VmHWM) after returning free heap memory to the kernel
// (malloc_trim) and resetting the peak (/proc/self/clear_refs); elsewhere it is reported as -1. It
// is resident memory: heap memory a call reuses without the kernel's help is not seen.
#pragma once

#include "attnscope/models/builtin.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace attnscope {

struct KindsReportOptions {
    TrainOptions base;  // task or taskFile, batch, learning rate; attention, seed, steps, out set per run
    std::vector<std::string> kinds = {"dot", "additive", "linear", "local", "topk", "lsh", "hybrid"};
    std::vector<std::uint64_t> seeds = {1, 2, 3};
    int epochs = 5;
    int epochSteps = 100;
    int evalExamples = 300;  // held-out examples scored per run (fewer when the task file has fewer)
    std::vector<int> scalingLengths = {128, 256, 512, 1024, 2048, 4096, 8192, 16384};
    std::filesystem::path out;  // kinds.csv, scaling.csv, runs/KIND-SEED/
    std::function<void(const std::string&)> log;
};

struct KindRow {
    std::string kind, parameters;
    long long parameterCount = 0;
    double accuracyMean = 0, accuracySpread = 0;
    std::string lengthBuckets;
    double accuracyShort = 0, accuracyMedium = 0, accuracyLong = 0;
    double secondsPerEpoch = 0, peakRssMiB = -1, meanEntropy = 0;
};

struct ScalingRow {
    std::string kind;
    int n = 0;
    double seconds = 0, peakExtraMiB = -1;
    std::string note;  // why the row was not measured; empty when it was
};

struct KindsReport {
    std::vector<KindRow> kinds;
    std::vector<ScalingRow> scaling;
};

// Runs the report and writes out/kinds.csv and out/scaling.csv. Throws attnscope::Error for an
// unknown kind or options out of range.
KindsReport runKindsReport(const KindsReportOptions& options);

// kinds.csv and scaling.csv of a report folder read back (the GUI's Kinds panel); a missing
// scaling.csv leaves scaling empty. Throws attnscope::Error naming the file and what is wrong.
KindsReport readKindsReport(const std::filesystem::path& folder);

// Bytes one head's attention forward for `kind` at length n needs at its peak (an estimate from
// the tensors it makes: n x n float maps, masks and the additive blocks).
std::uint64_t kindForwardBytes(const std::string& kind, int n);

// One head's attention output for `kind` on random q, k, v [n, 32]: seconds and peak extra MiB.
ScalingRow measureKindForward(const std::string& kind, int n);

}  // namespace attnscope
