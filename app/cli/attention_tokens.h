// tokens.json for `attention`: the run's ids and tokens, an encoder-decoder's source, target and
// output, a classifier's labels and probabilities, a masked-LM head's guesses, and each block's
// kind, queries and keys (Swin's window padding named apart as padding_keys). The command adds
// what its options asked for (map source, generation, terms, routers, the image–text similarity).
#pragma once

#include "attnscope/attention/trace.h"

#include <nlohmann/json.hpp>

namespace attnscope {
class Model;
}

namespace attnscope::cli {

nlohmann::json tokensJson(const Trace& trace, const Model& model);

}  // namespace attnscope::cli
