// Text preparation some of transformers' slow SentencePiece tokenizers do in Python before the
// model sees a piece of text (between the added tokens), restated on NormalizedString so that
// offsets still point into the user's text.
#pragma once

#include "components.h"

#include <memory>

namespace attnscope::tok {

// AlbertTokenizer.preprocess_text (XLNetTokenizer's is the same), in its order:
//   removeSpace:  strip, and every run of whitespace becomes one space (Python's str.split()
//                 whitespace, which adds U+001C..U+001F to Unicode's White_Space)
//   always:       "``" and "''" become '"'
//   !keepAccents: NFKD, then the characters with a non-zero combining class dropped
//   lower:        Python's str.lower() (full case mapping, per code point)
std::unique_ptr<Normalizer> makeAlbertNormalizer(bool removeSpace, bool keepAccents, bool lower);

// Python's str.isdigit() for one code point: Nd, plus the Numeric_Type=Digit characters
// (superscripts, circled digits, ...), Unicode 14 as in Python 3.11.
bool isPythonDigit(char32_t c);

}  // namespace attnscope::tok
