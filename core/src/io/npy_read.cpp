// NpyFile (attnscope/io/npy.h): the .npy header is a Python dict literal,
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }, parsed here by a small strict
// reader rather than a general one: only those three keys, in any order, as NumPy writes them.
#include "attnscope/io/npy_file.h"

#include "attnscope/runtime/error.h"
#include "io/file_errors.h"

#include <cerrno>
#include <cstring>
#include <optional>
#include <string_view>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace attnscope {

namespace {

// NumPy itself refuses headers over 10,000 bytes unless told otherwise; 1 MiB leaves room for
// any real shape while a corrupt length cannot make the reader scan gigabytes.
constexpr std::uint64_t kMaxHeader = 1u << 20;

struct Header {
    std::optional<std::string> descr;
    std::optional<bool> fortran;
    std::optional<std::vector<std::int64_t>> shape;
};

class HeaderParser {
public:
    HeaderParser(const std::filesystem::path& path, std::string_view text) : path_(path), s_(text) {}

    Header parse() {
        Header h;
        expect('{');
        while (true) {
            skipSpace();
            if (peek() == '}') break;
            const std::string key = quoted("a key");
            expect(':');
            if (key == "descr") {
                set(h.descr, quoted("the dtype"), key);
            } else if (key == "fortran_order") {
                skipSpace();
                if (take("True"))
                    set(h.fortran, true, key);
                else if (take("False"))
                    set(h.fortran, false, key);
                else
                    bad("fortran_order must be True or False");
            } else if (key == "shape") {
                set(h.shape, tuple(), key);
            } else {
                bad("unexpected key '" + key + "' (a .npy header has descr, fortran_order and shape)");
            }
            skipSpace();
            if (peek() == ',')
                ++i_;
            else if (peek() != '}')
                bad("expected ',' or '}' after the value of '" + key + "'");
        }
        ++i_;
        skipSpace();
        if (i_ != s_.size()) bad("text after the closing '}'");
        if (!h.descr || !h.fortran || !h.shape) bad("the header lacks descr, fortran_order or shape");
        return h;
    }

private:
    [[noreturn]] void bad(const std::string& what) const { failAt(path_, "malformed .npy header: " + what); }
    void skipSpace() {
        while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
    }
    char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
    void expect(char c) {
        skipSpace();
        if (peek() != c) bad(std::string("expected '") + c + "'");
        ++i_;
    }
    bool take(std::string_view word) {
        if (s_.substr(i_, word.size()) != word) return false;
        i_ += word.size();
        return true;
    }
    std::string quoted(const char* what) {
        skipSpace();
        const char q = peek();
        if (q != '\'' && q != '"') bad(std::string("expected ") + what + " in quotes");
        const std::size_t end = s_.find(q, i_ + 1);
        if (end == std::string_view::npos) bad("unterminated string");
        std::string out(s_.substr(i_ + 1, end - i_ - 1));
        i_ = end + 1;
        return out;
    }
    std::vector<std::int64_t> tuple() {
        expect('(');
        std::vector<std::int64_t> dims;
        while (true) {
            skipSpace();
            if (peek() == ')') break;
            if (peek() < '0' || peek() > '9') bad("a shape holds non-negative integers");
            std::int64_t v = 0;
            while (peek() >= '0' && peek() <= '9') {
                if (v > (std::int64_t{1} << 50)) bad("a dimension of the shape is too large");
                v = v * 10 + (s_[i_++] - '0');
            }
            dims.push_back(v);
            skipSpace();
            if (peek() == ',')
                ++i_;
            else if (peek() != ')')
                bad("expected ',' or ')' in the shape");
        }
        ++i_;
        if (dims.size() > 32) bad("more than 32 dimensions");
        return dims;
    }
    template <typename T, typename V>
    void set(std::optional<T>& slot, V value, const std::string& key) {
        if (slot) bad("'" + key + "' appears twice");
        slot = std::move(value);
    }

    const std::filesystem::path& path_;
    std::string_view s_;
    std::size_t i_ = 0;
};

NpyDType dtypeOf(const std::filesystem::path& path, const std::string& descr) {
    if (descr == "<f2") return NpyDType::Float16;
    if (descr == "<f4") return NpyDType::Float32;
    if (descr == "<f8") return NpyDType::Float64;
    if (descr.size() == 3 && descr[0] == '>' && descr[1] == 'f')
        failAt(path, "dtype '" + descr + "' is big-endian; save it little-endian (array.astype('<f4'))");
    failAt(path,
           "dtype '" + descr + "' is not supported (float16, float32 or float64, little-endian: '<f2', '<f4', '<f8')");
}

}  // namespace

const char* npyDTypeName(NpyDType dtype) {
    switch (dtype) {
        case NpyDType::Float16: return "float16";
        case NpyDType::Float32: return "float32";
        case NpyDType::Float64: return "float64";
    }
    return "?";
}

std::size_t NpyFile::itemSize() const { return dtype_ == NpyDType::Float16 ? 2 : dtype_ == NpyDType::Float32 ? 4 : 8; }

std::shared_ptr<const NpyFile> NpyFile::open(const std::filesystem::path& path) {
    // O_NONBLOCK so that a FIFO given by mistake cannot hang the open.
    UniqueFd file{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
    if (file.fd < 0) failAt(path, "cannot open: " + errnoText(errno));
    struct stat st {};
    if (::fstat(file.fd, &st) != 0) failAt(path, "cannot stat: " + errnoText(errno));
    if (!S_ISREG(st.st_mode)) failAt(path, "is not a regular file");
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (size < 10) failAt(path, "is " + std::to_string(size) + " bytes, too short for a .npy header");

    std::shared_ptr<NpyFile> f(new NpyFile);
    f->path_ = path;
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, file.fd, 0);
    if (map == MAP_FAILED) failAt(path, "cannot map " + std::to_string(size) + " bytes: " + errnoText(errno));
    f->map_ = static_cast<const unsigned char*>(map);
    f->mapSize_ = size;
    const unsigned char* p = f->map_;

    if (std::memcmp(p, "\x93NUMPY", 6) != 0) failAt(path, "not a .npy file (no \\x93NUMPY magic)");
    const int major = p[6];
    if (major < 1 || major > 3)
        failAt(path, ".npy format version " + std::to_string(major) + " is not supported (1, 2 or 3)");
    const std::uint64_t lengthBytes = major == 1 ? 2 : 4;
    if (size < 8 + lengthBytes) failAt(path, "is too short for its header length");
    std::uint64_t headerLength = 0;
    for (std::uint64_t i = 0; i < lengthBytes; ++i) headerLength |= std::uint64_t{p[8 + i]} << (8 * i);
    if (headerLength > kMaxHeader)
        failAt(path, "header length " + std::to_string(headerLength) + " is over the 1 MiB limit");
    const std::uint64_t offset = 8 + lengthBytes + headerLength;
    if (offset > size)
        failAt(path, "header needs " + std::to_string(offset) + " bytes, the file has " + std::to_string(size));
    const Header h =
            HeaderParser(path, std::string_view(reinterpret_cast<const char*>(p + 8 + lengthBytes), headerLength))
                    .parse();
    f->dtype_ = dtypeOf(path, *h.descr);
    if (*h.fortran) failAt(path, "is in Fortran (column-major) order; save it in C order (numpy.ascontiguousarray)");
    f->shape_ = *h.shape;
    f->dataOffset_ = offset;

    // The element count against the bytes that are really there, overflow-safe, before anyone
    // sizes anything from the shape.
    const std::uint64_t available = size - offset;
    std::uint64_t count = 1;
    bool zero = false;
    for (auto d : f->shape_) zero = zero || d == 0;
    if (!zero) {
        for (auto d : f->shape_) {
            if (count > available / static_cast<std::uint64_t>(d)) {
                count = available + 1;  // more than can be there
                break;
            }
            count *= static_cast<std::uint64_t>(d);
        }
    } else {
        count = 0;
    }
    const std::uint64_t item = f->itemSize();
    if (count > available / item || count * item != available) {
        std::string dims;
        for (std::size_t i = 0; i < f->shape_.size(); ++i) dims += (i ? ", " : "") + std::to_string(f->shape_[i]);
        failAt(path, "the header's shape (" + dims + ") of " + npyDTypeName(f->dtype_) + " does not match the " +
                             std::to_string(available) + " data bytes the file holds (truncated or not a NumPy file?)");
    }
    if (offset % item != 0)
        failAt(path, "data starts at byte " + std::to_string(offset) + ", not aligned to its " + std::to_string(item) +
                             "-byte items (NumPy pads its headers; this file was not written by it)");
    f->elements_ = count;
    return f;
}

NpyFile::~NpyFile() {
    if (map_) ::munmap(const_cast<unsigned char*>(map_), mapSize_);
}

}  // namespace attnscope
