// Attention distillation of a built-in student from a built-in teacher (issue 36; docs/kinds.md).
//
// Loss: L = L_task + λ · KL with KL the mean over the student's attention modules s of KL_s, and
//   KL_s = mean over the student's heads h and the batch's real query rows i of
//          Σ_j t_ij · (log t_ij − log max(p_ij, ε))        (0 · log 0 = 0; ε = kKlFloor)
// where p is the student's map and t the teacher's map for (s, h). The floor keeps a sparse
// student (local, top-k, lsh: exact zeros) finite where the teacher puts mass it cannot reach.
// t comes from a forward without autograd: gradients flow through the student's maps only.
//
// Mapping, when the counts differ: modules pair by block (encoder or self, decoder, cross);
//   student layer l of L_s  <- teacher layer max(0, ⌊(l + 1)·L_t / L_s⌋ − 1)
//     (every k-th teacher layer, ending at the last, as TinyBERT; equal counts: the same layer);
//   student head h of H_s   <- the mean of teacher heads a … b − 1, a = ⌊h·H_t / H_s⌋,
//     b = max(a + 1, ⌊(h + 1)·H_t / H_s⌋)
//     (a teacher with more heads: each student head learns its group's mean map; with fewer:
//     consecutive student heads share one teacher head; equal counts: the same head).
#pragma once

#include "batches.h"
#include "config.h"
#include "net.h"
#include "symbols.h"

#include <filesystem>
#include <utility>
#include <vector>

namespace attnscope::builtin {

inline constexpr double kKlFloor = 1e-9;

int mappedLayer(int layer, int studentLayers, int teacherLayers);
std::pair<int, int> mappedHeads(int head, int studentHeads, int teacherHeads);  // [first, last)

// KL_s of one module: teacher, student [B, H, n, m] (teacher already mapped to the student's
// heads), rows [B, n] bool (the real queries) or undefined (all). A 0-dim tensor.
at::Tensor mapKl(const at::Tensor& teacher, const at::Tensor& student, const at::Tensor& rows);

struct Teacher {
    Config config;
    Weights weights;  // without autograd
};

// Loads a built-in model folder as a teacher for `student`: the same family (encoder-decoder or
// classifier), the same vocabulary (symbol for symbol), positions enough for the student's
// inputs. Throws attnscope::Error naming what differs.
Teacher loadTeacher(const std::filesystem::path& folder, const Config& student, const Symbols& studentSymbols);

// KL over the mapped modules of the batch, from the student's maps of the same batch
// (taskLoss(..., &maps)); the teacher runs here, without autograd.
at::Tensor distillationKl(const Teacher& teacher, const Config& student, const std::vector<SiteMap>& studentMaps,
                          const Batch& batch);

}  // namespace attnscope::builtin
