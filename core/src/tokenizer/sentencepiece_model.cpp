// SentencePiece model files through libsentencepiece (see sentencepiece_model.h).
#include "sentencepiece_model.h"

#include "sentencepiece_shim.h"
#include "sentencepiece_text.h"
#include "unicode.h"

#include "attnscope/io/input_file.h"
#include "attnscope/runtime/error.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace attnscope::tok {

namespace {

// A model file is a few MB; the bound only keeps /dev/zero-like inputs from being read without end.
constexpr std::uint64_t kMaxSentencePieceBytes = std::uint64_t(256) << 20;
// libsentencepiece builds its trie of pieces recursively, one stack frame per byte of a piece: a
// 1,000,000-byte piece overflowed the stack (SIGSEGV). Real pieces are at most a few hundred bytes.
constexpr std::uint64_t kMaxPieceBytes = 4096;

// A protobuf varint at p (advanced past it); false when the bytes end first.
bool readVarint(const unsigned char*& p, const unsigned char* end, std::uint64_t& value) {
    value = 0;
    for (int shift = 0; p < end && shift < 64; shift += 7) {
        const unsigned char b = *p++;
        value |= std::uint64_t(b & 0x7f) << shift;
        if (!(b & 0x80)) return true;
    }
    return false;
}

// The length of field 1 (the piece string) of one ModelProto.SentencePiece message, 0 if absent.
std::uint64_t pieceLength(const unsigned char* p, const unsigned char* end) {
    std::uint64_t longest = 0, key = 0, n = 0;
    while (p < end && readVarint(p, end, key)) {
        const int wire = static_cast<int>(key & 7);
        if (wire == 0 && !readVarint(p, end, n)) break;
        if (wire == 1 || wire == 5) p += std::min<std::ptrdiff_t>(end - p, wire == 1 ? 8 : 4);
        if (wire == 2) {
            if (!readVarint(p, end, n) || n > static_cast<std::uint64_t>(end - p)) break;
            if ((key >> 3) == 1) longest = std::max(longest, n);
            p += n;
        }
        if (wire != 0 && wire != 1 && wire != 2 && wire != 5) break;
    }
    return longest;
}

// Refuses a piece longer than kMaxPieceBytes before libsentencepiece sees it. Anything else that
// is malformed stops the scan and is left to libsentencepiece to report.
void checkPieceLengths(const std::string& data, const std::string& file) {
    const auto* p = reinterpret_cast<const unsigned char*>(data.data());
    const auto* end = p + data.size();
    std::uint64_t key = 0, n = 0;
    for (long long piece = 0; p < end && readVarint(p, end, key);) {
        const int wire = static_cast<int>(key & 7);
        if (wire == 0) {
            if (!readVarint(p, end, n)) return;
        } else if (wire == 1 || wire == 5) {
            p += std::min<std::ptrdiff_t>(end - p, wire == 1 ? 8 : 4);
        } else if (wire == 2) {
            if (!readVarint(p, end, n) || n > static_cast<std::uint64_t>(end - p)) return;
            if ((key >> 3) == 1) {  // ModelProto.pieces
                const std::uint64_t length = pieceLength(p, p + n);
                if (length > kMaxPieceBytes)
                    throw Error(file + ": not a usable SentencePiece model (piece " + std::to_string(piece) + " is " +
                                std::to_string(length) + " bytes long; at most " + std::to_string(kMaxPieceBytes) +
                                " are accepted)");
                ++piece;
            }
            p += n;
        } else {
            return;
        }
    }
}

void appendTo(void* context, const char* data, std::size_t size) {
    static_cast<std::string*>(context)->append(data, size);
}

// The shim's functions, loaded once per process into a new link-map namespace.
struct Shim {
    decltype(&attnscope_spm_load) load = nullptr;
    decltype(&attnscope_spm_free) free = nullptr;
    decltype(&attnscope_spm_size) size = nullptr;
    decltype(&attnscope_spm_unk_id) unkId = nullptr;
    decltype(&attnscope_spm_piece) piece = nullptr;
    decltype(&attnscope_spm_encode) encode = nullptr;
    decltype(&attnscope_spm_decode) decode = nullptr;
    std::string error;  // why it could not be loaded; empty when loaded
};

std::vector<std::string> shimCandidates() {
    std::vector<std::string> out;
    if (const char* env = std::getenv("ATTNSCOPE_SENTENCEPIECE_LIBRARY"); env && *env) out.emplace_back(env);
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec)
        out.push_back(
                (exe.parent_path().parent_path() / "lib" / "attnscope" / "libattnscope_sentencepiece.so").string());
#ifdef ATTNSCOPE_SENTENCEPIECE_BUILD_PATH
    out.emplace_back(ATTNSCOPE_SENTENCEPIECE_BUILD_PATH);
#endif
    return out;
}

const Shim& shim() {
    static const Shim s = [] {
        Shim api;
        void* handle = nullptr;
        std::string tried;
        for (const auto& path : shimCandidates()) {
            std::error_code ec;
            if (!std::filesystem::exists(path, ec)) {
                tried += (tried.empty() ? "" : ", ") + path;
                continue;
            }
            handle = dlmopen(LM_ID_NEWLM, path.c_str(), RTLD_NOW | RTLD_LOCAL);
            if (!handle) {
                const char* e = dlerror();
                api.error = path + ": " + (e ? e : "cannot be loaded");
                return api;
            }
            break;
        }
        if (!handle) {
            api.error = "libattnscope_sentencepiece.so not found (looked at " + tried +
                        "; set ATTNSCOPE_SENTENCEPIECE_LIBRARY)";
            return api;
        }
        auto get = [&](auto& fn, const char* name) {
            fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(handle, name));
            if (!fn && api.error.empty()) api.error = std::string("libattnscope_sentencepiece.so lacks ") + name;
        };
        get(api.load, "attnscope_spm_load");
        get(api.free, "attnscope_spm_free");
        get(api.size, "attnscope_spm_size");
        get(api.unkId, "attnscope_spm_unk_id");
        get(api.piece, "attnscope_spm_piece");
        get(api.encode, "attnscope_spm_encode");
        get(api.decode, "attnscope_spm_decode");
        return api;
    }();
    return s;
}

}  // namespace

SentencePieceFile::SentencePieceFile(const std::filesystem::path& file, bool dummyPrefix) : file_(file.string()) {
    std::string data = readInputFile(file, kMaxSentencePieceBytes, "SentencePiece model");
    if (data.empty()) throw Error(file_ + ": not a SentencePiece model (the file is empty)");
    checkPieceLengths(data, file_);
    // A second ModelProto.normalizer_spec (field 3) holding add_dummy_prefix (field 3) = false:
    // protobuf merges repeated message fields, so this overrides the file's setting.
    if (!dummyPrefix) data += std::string("\x1a\x02\x18\x00", 4);
    const Shim& api = shim();
    if (!api.error.empty()) throw Error(file_ + ": cannot read SentencePiece models here (" + api.error + ")");
    std::string why;
    model_ = api.load(data.data(), data.size(), appendTo, &why);
    if (!model_) throw Error(file_ + ": not a SentencePiece model (" + why + ")");
    const int n = api.size(model_);
    if (n <= 0) {
        api.free(model_);
        throw Error(file_ + ": not a SentencePiece model (it has no pieces)");
    }
    pieces_.resize(static_cast<std::size_t>(n));
    flags_.resize(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
        flags_[static_cast<std::size_t>(i)] = api.piece(model_, i, appendTo, &pieces_[static_cast<std::size_t>(i)]);
        ids_.emplace(pieces_[static_cast<std::size_t>(i)], i);  // the first id of a repeated piece, as PieceToId
    }
    unkId_ = api.unkId(model_);
}

SentencePieceFile::~SentencePieceFile() {
    if (model_) shim().free(model_);
}

int SentencePieceFile::size() const { return static_cast<int>(pieces_.size()); }
const std::string& SentencePieceFile::piece(int id) const { return pieces_.at(static_cast<std::size_t>(id)); }
bool SentencePieceFile::isControl(int id) const {
    return (flags_.at(static_cast<std::size_t>(id)) & kAttnscopeSpmControl) != 0;
}
bool SentencePieceFile::isUnused(int id) const {
    return (flags_.at(static_cast<std::size_t>(id)) & kAttnscopeSpmUnused) != 0;
}
int SentencePieceFile::unkId() const { return unkId_; }

std::optional<int> SentencePieceFile::find(const std::string& piece) const {
    const auto it = ids_.find(piece);
    return it == ids_.end() ? std::nullopt : std::optional<int>(it->second);
}

std::vector<SentencePieceFile::Piece> SentencePieceFile::encode(const std::string& text) const {
    std::string records, why;
    if (shim().encode(model_, text.data(), text.size(), appendTo, &records, appendTo, &why) != 0)
        throw Error(file_ + ": SentencePiece could not encode the text (" + why + ")");
    std::vector<AttnscopeSpmPiece> raw(records.size() / sizeof(AttnscopeSpmPiece));
    if (!raw.empty())  // an empty text has no pieces, and memcpy must not get raw.data() == nullptr
        std::memcpy(raw.data(), records.data(), raw.size() * sizeof(AttnscopeSpmPiece));
    std::vector<Piece> out;
    out.reserve(raw.size());
    for (const auto& r : raw) out.push_back({r.id, r.begin, r.end});
    return out;
}

std::string SentencePieceFile::decode(const std::vector<int>& ids) const {
    std::vector<std::int32_t> in(ids.begin(), ids.end());
    std::string text;
    shim().decode(model_, in.data(), in.size(), appendTo, &text);
    return text;
}

namespace {

class SentencePieceModel final : public VocabularyModel {
public:
    SentencePieceModel(std::shared_ptr<const SentencePieceFile> file, const SpmIds& ids, std::string unkPrefix,
                       bool digitComma)
        : file_(std::move(file)), unkPrefix_(std::move(unkPrefix)), digitComma_(digitComma) {
        if (!unkPrefix_.empty()) unkPieces_ = file_->encode(unkPrefix_).size();
        outer_.assign(static_cast<std::size_t>(file_->size()), -1);
        for (int i = 0; i < file_->size(); ++i) {
            const std::string& piece = file_->piece(i);
            const auto id = ids(i, piece);
            if (!id) continue;
            outer_[static_cast<std::size_t>(i)] = *id;
            vocab_.add(piece, *id, file_->file());
        }
    }

    void tokenize(const std::string& piece, std::vector<Token>& out) const override {
        const bool behind = !unkPrefix_.empty() && (piece.rfind(" ", 0) == 0 || piece.rfind("\xE2\x96\x81", 0) == 0);
        std::vector<SentencePieceFile::Piece> pieces = file_->encode(behind ? unkPrefix_ + piece : piece);
        if (behind) {
            pieces.erase(pieces.begin(),
                         pieces.begin() + static_cast<std::ptrdiff_t>(std::min(unkPieces_, pieces.size())));
            for (auto& p : pieces) {
                p.begin = p.begin >= unkPrefix_.size() ? p.begin - static_cast<std::uint32_t>(unkPrefix_.size()) : 0;
                p.end = p.end >= unkPrefix_.size() ? p.end - static_cast<std::uint32_t>(unkPrefix_.size()) : 0;
            }
        }
        for (const auto& p : pieces) {
            const auto end = std::min<std::size_t>(p.end, piece.size());
            const std::size_t begin = std::min<std::size_t>(p.begin, end);
            if (digitComma_ && splitDigitComma(p.id, begin, end, out)) continue;
            out.push_back({outerId(p.id), file_->piece(p.id), begin, end});
        }
    }

private:
    std::int64_t outerId(int id) const {
        const auto spId = static_cast<std::size_t>(id);
        if (id < 0 || spId >= outer_.size() || outer_[spId] < 0)
            throw Error(file_->file() + ": SentencePiece gave id " + std::to_string(id) +
                        ", which has no id in the folder's vocabulary");
        return outer_[spId];
    }

    // ALBERT's and XLNet's rule for "<digits>," pieces (makeSentencePieceModel); false when the
    // piece is not one. [begin, end) is the piece's span in the text the model was given.
    bool splitDigitComma(int id, std::size_t begin, std::size_t end, std::vector<Token>& out) const {
        static const std::string kMark = "\xE2\x96\x81";
        const std::string& text = file_->piece(id);
        if (text.size() < 2 || text.back() != ',' || countCodePoints(text) < 2) return false;
        const std::vector<char32_t> chars = codePoints(text);
        if (!isPythonDigit(chars[chars.size() - 2])) return false;
        std::string digits = text.substr(0, text.size() - 1);
        for (std::size_t at; (at = digits.find(kMark)) != std::string::npos;) digits.erase(at, kMark.size());
        const bool marked = text.rfind(kMark, 0) == 0;
        const std::size_t commaBegin = end > begin ? end - 1 : begin;
        // The digits sit just before the comma in the text (a "▁" may stand for a space or nothing).
        const std::size_t digitsBegin = commaBegin >= begin + digits.size() ? commaBegin - digits.size() : begin;
        bool first = true;
        for (const auto& p : file_->encode(digits)) {
            std::string value = file_->piece(p.id);
            std::int64_t outer = outerId(p.id);
            if (first && !marked && value.rfind(kMark, 0) == 0) {
                first = false;
                if (value.size() == kMark.size()) continue;
                value.erase(0, kMark.size());
                const auto spId = file_->find(value);
                outer = outerId(spId ? *spId : file_->unkId());
            }
            first = false;
            out.push_back({outer, value, std::min(digitsBegin + p.begin, commaBegin),
                           std::min(digitsBegin + p.end, commaBegin)});
        }
        const auto comma = file_->find(",");
        out.push_back({outerId(comma ? *comma : file_->unkId()), ",", commaBegin, end});
        return true;
    }

    std::shared_ptr<const SentencePieceFile> file_;
    std::vector<std::int64_t> outer_;  // outer id of each SentencePiece id, -1 for none
    std::string unkPrefix_;
    std::size_t unkPieces_ = 0;  // how many pieces unkPrefix_ encodes to
    bool digitComma_ = false;
};

class SentencePieceDecoder final : public Decoder {
public:
    explicit SentencePieceDecoder(std::shared_ptr<const SentencePieceFile> file) : file_(std::move(file)) {}

    std::vector<std::string> decodeChain(std::vector<std::string> tokens) const override {
        std::string out;
        std::vector<int> run;
        auto flush = [&] {
            if (run.empty()) return;
            out += file_->decode(run);
            run.clear();
        };
        for (auto& t : tokens) {
            const auto id = file_->find(t);
            if (id && !file_->isControl(*id)) {
                run.push_back(*id);
                continue;
            }
            flush();
            out += t;
        }
        flush();
        return {out};
    }

private:
    std::shared_ptr<const SentencePieceFile> file_;
};

}  // namespace

std::unique_ptr<Model> makeSentencePieceModel(std::shared_ptr<const SentencePieceFile> file, const SpmIds& ids,
                                              const std::string& unkPrefix, bool digitComma) {
    return std::make_unique<SentencePieceModel>(std::move(file), ids, unkPrefix, digitComma);
}

std::unique_ptr<Decoder> makeSentencePieceDecoder(std::shared_ptr<const SentencePieceFile> file) {
    return std::make_unique<SentencePieceDecoder>(std::move(file));
}

}  // namespace attnscope::tok
