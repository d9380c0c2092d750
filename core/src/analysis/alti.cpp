#include "attnscope/analysis/alti.h"

#include "attnscope/runtime/error.h"

namespace attnscope {

// Scaffold: the ALTI helper replaces this file.
HeadMap altiMap(const Trace&, int, int) { throw Error("alti: not implemented on this branch"); }
HeadMap altiRolloutMap(const Trace&, int, int) { throw Error("alti-rollout: not implemented on this branch"); }

}  // namespace attnscope
