// Attention knockouts as a user types them, parsed in one place for the CLI (`attention
// --knockout`) and the GUI's Lab dock: "Q1,Q2:K1,K2@A-B" (query positions : key positions @ layers
// A..B, or @A for one layer), several separated by ';'. Positions and layers follow
// parseNumberList's rules (tokenizer/token_ids.h); ranges are checked by the model's forward.
#pragma once

#include "attnscope/attention/run_options.h"

#include <string>
#include <vector>

namespace attnscope {

// The knockouts a spec names, in order. Throws attnscope::Error with one line naming the
// malformed part: "'2:0' is not QUERIES:KEYS@LAYERS (e.g. 5:0,1@2-4)", "'1:0@2-3-4': layers are A
// or A-B", "no knockout given" (an empty spec).
std::vector<Knockout> parseKnockouts(const std::string& spec);

// The spec that parseKnockouts reads back as the same knockouts ("4,3:0,1@0-1;2:0@1").
std::string formatKnockouts(const std::vector<Knockout>& knockouts);

}  // namespace attnscope
