// Decoders (ids -> text, for display): ByteLevel, WordPiece, Metaspace, Replace, ByteFallback,
// Fuse, Strip, BPEDecoder and Sequence.
#include "components.h"
#include "decoding.h"

#include "attnscope/runtime/error.h"

#include <nlohmann/json.hpp>

namespace attnscope::tok {

namespace {

// Length of the UTF-8 sequence at b[i]; false when it is invalid, and then `length` covers its
// maximal valid prefix (at least one byte), as Rust's from_utf8_lossy counts it.
bool sequenceAt(std::string_view b, std::size_t i, std::size_t* length) {
    const auto c = static_cast<unsigned char>(b[i]);
    if (c < 0x80) {
        *length = 1;
        return true;
    }
    std::size_t need = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
        need = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
        need = 2;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 3;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    }
    std::size_t k = 1;
    while (k <= need && i + k < b.size()) {
        const auto d = static_cast<unsigned char>(b[i + k]);
        if (d < (k == 1 ? lo : 0x80) || d > (k == 1 ? hi : 0xBF)) break;
        ++k;
    }
    *length = k;
    return need > 0 && k == need + 1;
}

}  // namespace

void appendLossyUtf8(std::string& out, std::string_view b) {
    for (std::size_t i = 0, n = 0; i < b.size(); i += n) {
        if (sequenceAt(b, i, &n))
            out.append(b.substr(i, n));
        else
            out += "\xEF\xBF\xBD";
    }
}

bool isValidUtf8(std::string_view b, std::size_t* badAt) {
    for (std::size_t i = 0, n = 0; i < b.size(); i += n) {
        if (!sequenceAt(b, i, &n)) {
            *badAt = i;
            return false;
        }
    }
    return true;
}

namespace {

class ByteLevelDec final : public Decoder {
public:
    std::vector<std::string> decodeChain(std::vector<std::string> tokens) const override {
        std::string bytes;
        for (const auto& t : tokens) {
            const std::size_t mark = bytes.size();
            bool ok = true;
            for (char32_t c : codePoints(t)) {
                const int b = charToByte(c);
                if (b < 0) {
                    ok = false;
                    break;
                }
                bytes += static_cast<char>(b);
            }
            if (!ok) {
                bytes.resize(mark);
                bytes += t;
            }
        }
        std::string out;
        appendLossyUtf8(out, bytes);
        return {out};
    }
};

class WordPieceDec final : public Decoder {
public:
    WordPieceDec(std::string prefix, bool cleanup) : prefix_(std::move(prefix)), cleanup_(cleanup) {}
    std::vector<std::string> decodeChain(std::vector<std::string> tokens) const override {
        for (std::size_t i = 0; i < tokens.size(); ++i) {
            std::string& t = tokens[i];
            if (i != 0) {
                if (t.compare(0, prefix_.size(), prefix_) == 0)
                    t.erase(0, prefix_.size());
                else
                    t.insert(0, " ");
            }
            if (cleanup_) t = cleanupText(t);
        }
        return tokens;
    }

    static std::string cleanupText(std::string s) {
        static const std::pair<const char*, const char*> rules[] = {
                {" .", "."},   {" ?", "?"},           {" !", "!"},   {" ,", ","},     {" ' ", "'"},   {" n't", "n't"},
                {" 'm", "'m"}, {" do not", " don't"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
        for (const auto& [from, to] : rules) {
            const std::string f(from), r(to);
            std::string out;
            std::size_t at = 0;
            for (std::size_t p = s.find(f); p != std::string::npos; p = s.find(f, at)) {
                out.append(s, at, p - at);
                out += r;
                at = p + f.size();
            }
            out.append(s, at, std::string::npos);
            s = std::move(out);
        }
        return s;
    }

private:
    std::string prefix_;
    bool cleanup_;
};

class MetaspaceDec final : public Decoder {
public:
    MetaspaceDec(char32_t replacement, bool prependNever) : replacement_(replacement), never_(prependNever) {}
    std::vector<std::string> decodeChain(std::vector<std::string> tokens) const override {
        for (std::size_t i = 0; i < tokens.size(); ++i) {
            std::string out;
            for (char32_t c : codePoints(tokens[i])) {
                if (c == replacement_) {
                    if (i == 0 && !never_) continue;
                    out += ' ';
                } else {
                    appendUtf8(out, c);
                }
            }
            tokens[i] = std::move(out);
        }
        return tokens;
    }

private:
    char32_t replacement_;
    bool never_;
};

class ReplaceDec final : public Decoder {
public:
    ReplaceDec(Pattern pattern, std::string content) : pattern_(std::move(pattern)), content_(std::move(content)) {}
    std::vector<std::string> decodeChain(std::vector<std::string> tokens) const override {
        std::vector<PatternMatch> matches;
        for (auto& t : tokens) {
            pattern_(t, matches);
            std::string out;
            for (const auto& m : matches) out += m.isMatch ? content_ : t.substr(m.begin, m.end - m.begin);
            t = std::move(out);
        }
        return tokens;
    }

private:
    Pattern pattern_;
    std::string content_;
};

class ByteFallbackDec final : public Decoder {
public:
    std::vector<std::string> decodeChain(std::vector<std::string> tokens) const override {
        std::vector<std::string> out;
        std::string pending;
        auto flush = [&] {
            if (pending.empty()) return;
            std::string check;
            appendLossyUtf8(check, pending);
            if (check == pending)
                out.push_back(pending);
            else
                for (std::size_t i = 0; i < pending.size(); ++i) out.push_back("\xEF\xBF\xBD");
            pending.clear();
        };
        for (auto& t : tokens) {
            const int byte = t.size() == 6 && t.compare(0, 3, "<0x") == 0 && t[5] == '>' ? hexByte(t.substr(3, 2)) : -1;
            if (byte >= 0) {
                pending += static_cast<char>(byte);
            } else {
                flush();
                out.push_back(std::move(t));
            }
        }
        flush();
        return out;
    }

private:
    static int hexByte(const std::string& h) {
        int v = 0;
        for (char c : h) {
            v <<= 4;
            if (c >= '0' && c <= '9')
                v |= c - '0';
            else if (c >= 'A' && c <= 'F')
                v |= c - 'A' + 10;
            else if (c >= 'a' && c <= 'f')
                v |= c - 'a' + 10;
            else
                return -1;
        }
        return v;
    }
};

class FuseDec final : public Decoder {
public:
    std::vector<std::string> decodeChain(std::vector<std::string> tokens) const override {
        std::string all;
        for (const auto& t : tokens) all += t;
        return {all};
    }
};

class StripDec final : public Decoder {
public:
    StripDec(char32_t content, std::size_t start, std::size_t stop) : content_(content), start_(start), stop_(stop) {}
    std::vector<std::string> decodeChain(std::vector<std::string> tokens) const override {
        for (auto& t : tokens) {
            const auto chars = codePoints(t);
            std::size_t from = 0, to = chars.size();
            for (std::size_t i = 0; i < start_ && i < chars.size() && chars[i] == content_; ++i) from = i + 1;
            for (std::size_t i = 0; i < stop_ && i < chars.size(); ++i) {
                const std::size_t index = chars.size() - i - 1;
                if (chars[index] != content_) break;
                to = index;
            }
            std::string out;
            for (std::size_t i = from; i < to; ++i) appendUtf8(out, chars[i]);
            t = std::move(out);
        }
        return tokens;
    }

private:
    char32_t content_;
    std::size_t start_, stop_;
};

class BpeDec final : public Decoder {
public:
    explicit BpeDec(std::string suffix) : suffix_(std::move(suffix)) {}
    std::vector<std::string> decodeChain(std::vector<std::string> tokens) const override {
        for (std::size_t i = 0; i < tokens.size(); ++i) {
            const std::string with = i + 1 == tokens.size() ? "" : " ";
            std::string& t = tokens[i];
            std::string out;
            std::size_t at = 0;
            if (!suffix_.empty())
                for (std::size_t p = t.find(suffix_); p != std::string::npos; p = t.find(suffix_, at)) {
                    out.append(t, at, p - at);
                    out += with;
                    at = p + suffix_.size();
                }
            out.append(t, at, std::string::npos);
            t = std::move(out);
        }
        return tokens;
    }

private:
    std::string suffix_;
};

class SequenceDec final : public Decoder {
public:
    explicit SequenceDec(std::vector<std::unique_ptr<Decoder>> items) : items_(std::move(items)) {}
    std::vector<std::string> decodeChain(std::vector<std::string> tokens) const override {
        for (const auto& d : items_) tokens = d->decodeChain(std::move(tokens));
        return tokens;
    }

private:
    std::vector<std::unique_ptr<Decoder>> items_;
};

char32_t oneChar(const Fields& f, const char* key, const std::string& fallback) {
    const auto cps = codePoints(f.string(key, fallback));
    if (cps.size() != 1) f.fail("'" + std::string(key) + "' must be one character");
    return cps[0];
}

}  // namespace

std::unique_ptr<Decoder> makeDecoder(const nlohmann::json& j, const Origin& origin) {
    if (j.is_null()) return nullptr;
    const std::string type = componentType(j, origin.at("decoder"));
    const Fields f{j, origin.at("decoder (" + type + ")")};
    if (type == "ByteLevel") return std::make_unique<ByteLevelDec>();
    if (type == "WordPiece")
        return std::make_unique<WordPieceDec>(f.string("prefix", std::string("##")), f.boolean("cleanup", true));
    if (type == "Metaspace") {
        bool never = !f.boolean("add_prefix_space", true);
        if (f.has("prepend_scheme")) never = f.string("prepend_scheme") == "never";
        return std::make_unique<MetaspaceDec>(oneChar(f, "replacement", "\xE2\x96\x81"), never);
    }
    if (type == "Replace")
        return std::make_unique<ReplaceDec>(readPattern(f.object("pattern"), f.where), f.string("content"));
    if (type == "ByteFallback") return std::make_unique<ByteFallbackDec>();
    if (type == "Fuse") return std::make_unique<FuseDec>();
    if (type == "Strip") {
        const auto start = f.integer("start", 0), stop = f.integer("stop", 0);
        if (start < 0 || stop < 0) f.fail("'start' and 'stop' must be >= 0");
        return std::make_unique<StripDec>(oneChar(f, "content", " "), static_cast<std::size_t>(start),
                                          static_cast<std::size_t>(stop));
    }
    if (type == "BPEDecoder") return std::make_unique<BpeDec>(f.string("suffix", std::string("</w>")));
    if (type == "Sequence") {
        const auto& list = f.object("decoders");
        if (!list.is_array()) f.fail("'decoders' must be a list");
        std::vector<std::unique_ptr<Decoder>> items;
        for (const auto& item : list)
            if (auto d = makeDecoder(item, origin)) items.push_back(std::move(d));
        return std::make_unique<SequenceDec>(std::move(items));
    }
    throw Error(origin.at("decoder") + ": type '" + type +
                "' is not supported (ByteLevel, WordPiece, Metaspace, Replace, ByteFallback, Fuse, Strip, BPEDecoder, "
                "Sequence)");
}

}  // namespace attnscope::tok
