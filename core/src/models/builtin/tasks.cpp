// The data of the built-in tasks.
//
// Sentiment grammar (all lowercase, words separated by one space):
//   sentence := clause | clause "and" clause | clause "but" clause
//   clause   := det noun verb [neg] [intens] adj        "the plot was not very good"
//             | [neg'] det [intens] adj noun           "not a really great film"
//   det := the | a | this          noun := movie | film | plot | acting | story | script | cast |
//   verb := was | is                        ending | music | dialogue
//   neg := not | never             neg' := not
//   intens := very | really | quite | so | truly
//   adj+ := good | great | excellent | wonderful | brilliant | superb | enjoyable | fun
//   adj- := bad | terrible | awful | boring | dull | poor | weak | horrible
// Labels: a clause is positive when its adjective is positive, flipped once by a negation
// ("not good" negative, "never bad" positive; intensifiers do not change it). "and" joins two
// clauses of the same polarity, which is the sentence's. "but" joins two clauses of opposite
// polarity and the clause after "but" decides ("the acting was great but the plot was awful" is
// negative).
#include "attnscope/models/builtin.h"

#include "attnscope/runtime/error.h"

#include <algorithm>

namespace attnscope {

namespace {

const std::vector<std::string> kDets = {"the", "a", "this"};
const std::vector<std::string> kNouns = {"movie",  "film", "plot",   "acting", "story",
                                         "script", "cast", "ending", "music",  "dialogue"};
const std::vector<std::string> kVerbs = {"was", "is"};
const std::vector<std::string> kNegations = {"not", "never"};
const std::vector<std::string> kIntensifiers = {"very", "really", "quite", "so", "truly"};
const std::vector<std::string> kPositive = {"good",      "great",  "excellent", "wonderful",
                                            "brilliant", "superb", "enjoyable", "fun"};
const std::vector<std::string> kNegative = {"bad", "terrible", "awful", "boring", "dull", "poor", "weak", "horrible"};
const std::vector<std::string> kConjunctions = {"and", "but"};

std::uint64_t fnv1a(const std::string& text) {
    std::uint64_t h = 1469598103934665603ull;
    for (unsigned char c : text) {
        h ^= c;
        h *= 1099511628211ull;
    }
    return h;
}

}  // namespace

const char* taskName(BuiltinTask task) { return task == BuiltinTask::Reverse ? "reverse" : "sentiment"; }

BuiltinTask parseTask(const std::string& text) {
    if (text == "reverse") return BuiltinTask::Reverse;
    if (text == "sentiment") return BuiltinTask::Sentiment;
    throw Error("unknown task '" + text + "' (use reverse or sentiment)");
}

AttentionKind parseAttentionKind(const std::string& text) {
    if (text == "dot") return AttentionKind::Dot;
    if (text == "additive") return AttentionKind::Additive;
    if (text == "linear") return AttentionKind::Linear;
    if (text == "local") return AttentionKind::Local;
    if (text == "topk") return AttentionKind::TopK;
    if (text == "lsh") return AttentionKind::Lsh;
    if (text == "hybrid") return AttentionKind::Hybrid;
    throw Error("unknown attention kind '" + text + "' (use dot, additive, linear, local, topk, lsh or hybrid)");
}

bool isHeldOut(const std::string& text) { return fnv1a(text) % 10 == 0; }

TaskData::TaskData(std::uint64_t seed, Split split)
    : state_(seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull), split_(split) {}

std::uint64_t TaskData::next() {  // splitmix64
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

int TaskData::uniform(int n) { return static_cast<int>((next() >> 11) % static_cast<std::uint64_t>(n)); }

double TaskData::unit() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }

std::string TaskData::reverseSource() {
    static const std::string alphabet = kReverseAlphabet;
    for (;;) {
        const int length = kReverseMinLength + uniform(kReverseMaxLength - kReverseMinLength + 1);
        std::string s;
        for (int i = 0; i < length; ++i) s += alphabet[uniform(static_cast<int>(alphabet.size()))];
        if (isHeldOut(s) == (split_ == Split::HeldOut)) return s;
    }
}

SentimentExample TaskData::sentiment() {
    auto pick = [this](const std::vector<std::string>& words) {
        return words[uniform(static_cast<int>(words.size()))];
    };
    // One clause of the given polarity, as words.
    auto clause = [&](bool positive, std::vector<std::string>& out) {
        const bool negated = unit() < 0.35;
        const std::string adj = pick(positive != negated ? kPositive : kNegative);
        if (unit() < 0.7) {
            out.push_back(pick(kDets));
            out.push_back(pick(kNouns));
            out.push_back(pick(kVerbs));
            if (negated) out.push_back(pick(kNegations));
            if (unit() < 0.4) out.push_back(pick(kIntensifiers));
            out.push_back(adj);
        } else {
            if (negated) out.push_back("not");
            out.push_back(pick(kDets));
            if (unit() < 0.4) out.push_back(pick(kIntensifiers));
            out.push_back(adj);
            out.push_back(pick(kNouns));
        }
    };
    for (;;) {
        SentimentExample ex;
        ex.positive = uniform(2) == 1;
        std::vector<std::string> words;
        const double form = unit();
        if (form < 0.5) {
            clause(ex.positive, words);
        } else if (form < 0.75) {
            clause(ex.positive, words);
            words.push_back("and");
            clause(ex.positive, words);
        } else {
            clause(!ex.positive, words);
            words.push_back("but");
            clause(ex.positive, words);
        }
        for (std::size_t i = 0; i < words.size(); ++i) ex.text += (i ? " " : "") + words[i];
        if (isHeldOut(ex.text) == (split_ == Split::HeldOut)) return ex;
    }
}

const std::vector<std::string>& sentimentWords() {
    static const std::vector<std::string> words = [] {
        std::vector<std::string> all;
        for (const auto* list :
             {&kDets, &kNouns, &kVerbs, &kNegations, &kIntensifiers, &kPositive, &kNegative, &kConjunctions})
            for (const auto& w : *list)
                if (std::find(all.begin(), all.end(), w) == all.end()) all.push_back(w);
        return all;
    }();
    return words;
}

}  // namespace attnscope
