// The GGUF reader (gguf.h): a bounds-checked cursor over the mapped bytes, so every count and
// length is weighed against what is left of the file before anything is allocated for it.
#include "attnscope/io/gguf.h"

#include "attnscope/runtime/error.h"
#include "io/file_errors.h"

#include <cerrno>
#include <cstring>
#include <iterator>
#include <mutex>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace attnscope {

namespace {

struct TypeRow {
    GgmlType type;
    const char* name;
    std::int64_t blockElements, blockBytes;
};
// ggml-common.h's block structs: elements per block and their size in bytes.
constexpr TypeRow kTypes[] = {
        {GgmlType::F32, "F32", 1, 4},
        {GgmlType::F16, "F16", 1, 2},
        {GgmlType::Q4_0, "Q4_0", 32, 18},
        {GgmlType::Q4_1, "Q4_1", 32, 20},
        {GgmlType::Q5_0, "Q5_0", 32, 22},
        {GgmlType::Q5_1, "Q5_1", 32, 24},
        {GgmlType::Q8_0, "Q8_0", 32, 34},
        {GgmlType::Q8_1, "Q8_1", 32, 36},
        {GgmlType::Q2_K, "Q2_K", 256, 84},
        {GgmlType::Q3_K, "Q3_K", 256, 110},
        {GgmlType::Q4_K, "Q4_K", 256, 144},
        {GgmlType::Q5_K, "Q5_K", 256, 176},
        {GgmlType::Q6_K, "Q6_K", 256, 210},
        {GgmlType::Q8_K, "Q8_K", 256, 292},
        {GgmlType::IQ2_XXS, "IQ2_XXS", 256, 66},
        {GgmlType::IQ2_XS, "IQ2_XS", 256, 74},
        {GgmlType::IQ3_XXS, "IQ3_XXS", 256, 98},
        {GgmlType::IQ1_S, "IQ1_S", 256, 50},
        {GgmlType::IQ4_NL, "IQ4_NL", 32, 18},
        {GgmlType::IQ3_S, "IQ3_S", 256, 110},
        {GgmlType::IQ2_S, "IQ2_S", 256, 82},
        {GgmlType::IQ4_XS, "IQ4_XS", 256, 136},
        {GgmlType::I8, "I8", 1, 1},
        {GgmlType::I16, "I16", 1, 2},
        {GgmlType::I32, "I32", 1, 4},
        {GgmlType::I64, "I64", 1, 8},
        {GgmlType::F64, "F64", 1, 8},
        {GgmlType::IQ1_M, "IQ1_M", 256, 56},
        {GgmlType::BF16, "BF16", 1, 2},
        {GgmlType::TQ1_0, "TQ1_0", 256, 54},
        {GgmlType::TQ2_0, "TQ2_0", 256, 66},
        {GgmlType::MXFP4, "MXFP4", 32, 17},
};

const TypeRow* typeRow(std::uint32_t id) {
    for (const TypeRow& r : kTypes)
        if (static_cast<std::uint32_t>(r.type) == id) return &r;
    return nullptr;
}

constexpr const char* kValueTypeNames[] = {"u8",   "i8",     "u16",   "i16", "u32", "i32", "f32",
                                           "bool", "string", "array", "u64", "i64", "f64"};

// Bytes a value of a fixed-size type takes; 0 for string and array.
std::uint64_t fixedSize(GgufType t) {
    switch (t) {
        case GgufType::U8:
        case GgufType::I8:
        case GgufType::Bool: return 1;
        case GgufType::U16:
        case GgufType::I16: return 2;
        case GgufType::U32:
        case GgufType::I32:
        case GgufType::F32: return 4;
        case GgufType::U64:
        case GgufType::I64:
        case GgufType::F64: return 8;
        default: return 0;
    }
}

// Reads the file front to back; every read checks the bytes left first.
class Cursor {
public:
    Cursor(const GgufFile& file, const std::byte* data, std::uint64_t size) : file_(file), data_(data), size_(size) {}

    std::uint64_t at() const { return pos_; }
    std::uint64_t left() const { return size_ - pos_; }
    void need(std::uint64_t n, const std::string& what) const {
        if (n > left())
            file_.fail("truncated: " + what + " at byte " + std::to_string(pos_) + " needs " + std::to_string(n) +
                       " bytes, " + std::to_string(left()) + " are left");
    }
    template <class T>
    T read(const std::string& what) {
        need(sizeof(T), what);
        T v;
        std::memcpy(&v, data_ + pos_, sizeof(T));  // little-endian hosts only (as ggml itself)
        pos_ += sizeof(T);
        return v;
    }
    std::string string(const std::string& what) {
        const auto n = read<std::uint64_t>(what + " length");
        if (n > left())
            file_.fail(what + " at byte " + std::to_string(pos_ - 8) + " claims " + std::to_string(n) +
                       " bytes, longer than the " + std::to_string(left()) + " left in the file");
        std::string s(reinterpret_cast<const char*>(data_ + pos_), static_cast<std::size_t>(n));
        pos_ += n;
        return s;
    }
    void skipTo(std::uint64_t p) { pos_ = p; }

private:
    const GgufFile& file_;
    const std::byte* data_;
    std::uint64_t size_, pos_ = 0;
};

GgufType valueType(Cursor& c, const GgufFile& f, const std::string& key) {
    const auto t = c.read<std::uint32_t>("the type of '" + key + "'");
    if (t > static_cast<std::uint32_t>(GgufType::F64))
        f.fail("metadata '" + key + "' has unknown value type " + std::to_string(t));
    return static_cast<GgufType>(t);
}

double readNumber(Cursor& c, GgufType t, const std::string& what, std::int64_t& integer, std::uint64_t& unsignedValue) {
    switch (t) {
        case GgufType::U8: return static_cast<double>(integer = c.read<std::uint8_t>(what));
        case GgufType::I8: return static_cast<double>(integer = c.read<std::int8_t>(what));
        case GgufType::U16: return static_cast<double>(integer = c.read<std::uint16_t>(what));
        case GgufType::I16: return static_cast<double>(integer = c.read<std::int16_t>(what));
        case GgufType::U32: return static_cast<double>(integer = c.read<std::uint32_t>(what));
        case GgufType::I32: return static_cast<double>(integer = c.read<std::int32_t>(what));
        case GgufType::Bool: return static_cast<double>(integer = c.read<std::uint8_t>(what) != 0);
        case GgufType::I64: return static_cast<double>(integer = c.read<std::int64_t>(what));
        case GgufType::U64:
            unsignedValue = c.read<std::uint64_t>(what);
            integer = static_cast<std::int64_t>(std::min<std::uint64_t>(unsignedValue, INT64_MAX));
            return static_cast<double>(unsignedValue);
        case GgufType::F32: return c.read<float>(what);
        case GgufType::F64: return c.read<double>(what);
        default: return 0;
    }
}

constexpr int kMaxNesting = 4;

GgufValue readValue(Cursor& c, const GgufFile& f, GgufType type, const std::string& key, int depth) {
    GgufValue v;
    v.type = type;
    if (type == GgufType::String) {
        v.text = c.string("metadata '" + key + "'");
        return v;
    }
    if (type != GgufType::Array) {
        v.number = readNumber(c, type, "metadata '" + key + "'", v.integer, v.unsignedValue);
        if (type != GgufType::U64) v.unsignedValue = static_cast<std::uint64_t>(v.integer);
        return v;
    }
    if (depth >= kMaxNesting) f.fail("metadata '" + key + "' nests arrays deeper than " + std::to_string(kMaxNesting));
    v.element = valueType(c, f, key + "[]");
    const auto count = c.read<std::uint64_t>("the length of '" + key + "'");
    // Every element takes at least one byte (a string 8, an array 12), so a count the rest of
    // the file cannot hold is refused before anything is reserved for it.
    const std::uint64_t least = v.element == GgufType::String  ? 8
                                : v.element == GgufType::Array ? 12
                                                               : fixedSize(v.element);
    if (count > c.left() / least)
        v.element == GgufType::String || v.element == GgufType::Array
                ? f.fail("metadata '" + key + "' claims " + std::to_string(count) + " elements, more than the " +
                         std::to_string(c.left()) + " bytes left in the file can hold")
                : f.fail("truncated: metadata '" + key + "' claims " + std::to_string(count) + " " +
                         kValueTypeNames[static_cast<int>(v.element)] + " elements (" + std::to_string(count) + " x " +
                         std::to_string(least) + " bytes), " + std::to_string(c.left()) + " bytes are left");
    const std::string what = "metadata '" + key + "' element";
    if (v.element == GgufType::String) {
        v.strings.reserve(static_cast<std::size_t>(count));
        for (std::uint64_t i = 0; i < count; ++i) v.strings.push_back(c.string(what));
    } else if (v.element == GgufType::Array) {
        v.items.reserve(static_cast<std::size_t>(count));
        for (std::uint64_t i = 0; i < count; ++i)
            v.items.push_back(readValue(c, f, GgufType::Array, key + "[" + std::to_string(i) + "]", depth + 1));
    } else {
        v.numbers.reserve(static_cast<std::size_t>(count));
        std::int64_t integer = 0;
        std::uint64_t unsignedValue = 0;
        for (std::uint64_t i = 0; i < count; ++i)
            v.numbers.push_back(readNumber(c, v.element, what, integer, unsignedValue));
    }
    return v;
}

}  // namespace

const char* ggmlTypeName(GgmlType type) {
    const TypeRow* r = typeRow(static_cast<std::uint32_t>(type));
    return r ? r->name : "unknown";
}

bool ggmlTypeLayout(std::uint32_t id, std::int64_t& blockElements, std::int64_t& blockBytes) {
    const TypeRow* r = typeRow(id);
    if (!r) return false;
    blockElements = r->blockElements;
    blockBytes = r->blockBytes;
    return true;
}

bool supportedGgmlType(GgmlType t) {
    switch (t) {
        case GgmlType::F32:
        case GgmlType::F16:
        case GgmlType::BF16:
        case GgmlType::Q8_0:
        case GgmlType::Q4_0:
        case GgmlType::Q4_K:
        case GgmlType::Q5_K:
        case GgmlType::Q6_K: return true;
        default: return false;
    }
}

const char* ggufTypeName(GgufType type) {
    const auto i = static_cast<std::uint32_t>(type);
    return i <= 12 ? kValueTypeNames[i] : "unknown";
}

bool GgufValue::isInteger() const {
    return type != GgufType::F32 && type != GgufType::F64 && type != GgufType::String && type != GgufType::Array;
}
bool GgufValue::isNumber() const { return type != GgufType::String && type != GgufType::Array; }
std::size_t GgufValue::size() const {
    return type != GgufType::Array ? 0 : numbers.size() + strings.size() + items.size();
}

std::int64_t GgufTensor::numel() const {
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    return n;
}

void GgufFile::fail(const std::string& what) const { failAt(path_, what); }

namespace {

// Reads one tensor info into `t` (shape, type, offset and byte size validated on their own).
void readTensorInfo(Cursor& c, const GgufFile& f, std::uint64_t index, GgufTensor& t) {
    const std::string which = "tensor #" + std::to_string(index);
    t.name = c.string(which + "'s name");
    const std::string named = "tensor '" + t.name + "'";
    const auto dims = c.read<std::uint32_t>(named + "'s dimension count");
    if (dims > 4) f.fail(named + " has " + std::to_string(dims) + " dimensions (ggml allows at most 4)");
    std::vector<std::int64_t> ne;
    std::uint64_t product = 1;
    for (std::uint32_t d = 0; d < dims; ++d) {
        const auto n = c.read<std::uint64_t>(named + "'s dimensions");
        if (n == 0) f.fail(named + " has a dimension of size 0");
        if (n > (std::uint64_t(1) << 62) || __builtin_mul_overflow(product, n, &product) ||
            product > (std::uint64_t(1) << 62))
            f.fail(named + "'s dimensions overflow: their product does not fit in 62 bits");
        ne.push_back(static_cast<std::int64_t>(n));
    }
    t.shape.assign(ne.rbegin(), ne.rend());
    const auto type = c.read<std::uint32_t>(named + "'s type");
    std::int64_t blockElements = 0, blockBytes = 0;
    if (!ggmlTypeLayout(type, blockElements, blockBytes))
        f.fail(named + " has unknown ggml type " + std::to_string(type));
    t.type = static_cast<GgmlType>(type);
    t.offset = c.read<std::uint64_t>(named + "'s offset");
    const std::int64_t row = ne.empty() ? 1 : ne[0];
    if (row % blockElements != 0)
        f.fail(named + " is " + ggmlTypeName(t.type) + " with rows of " + std::to_string(row) +
               " elements, not a multiple of its block of " + std::to_string(blockElements));
    t.bytes = product / static_cast<std::uint64_t>(blockElements) * static_cast<std::uint64_t>(blockBytes);
}

}  // namespace

std::shared_ptr<const GgufFile> GgufFile::open(const std::filesystem::path& path) {
    UniqueFd file{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
    if (file.fd < 0) failAt(path, "cannot open: " + errnoText(errno));
    struct stat st {};
    if (::fstat(file.fd, &st) != 0) failAt(path, "cannot stat: " + errnoText(errno));
    if (!S_ISREG(st.st_mode)) failAt(path, "not a regular file");
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (size < 24) failAt(path, "truncated: " + std::to_string(size) + " bytes, shorter than a GGUF header (24)");
    // Loading a model reads one file three times (the config, the weights, the tokenizer): while
    // one reading of it is alive, the same path, inode, size and modification time reuse it.
    static std::mutex cacheMutex;
    static std::map<std::string, std::weak_ptr<const GgufFile>> cache;
    const std::string key = path.string() + '\0' + std::to_string(st.st_dev) + ':' + std::to_string(st.st_ino) + ':' +
                            std::to_string(size) + ':' + std::to_string(st.st_mtim.tv_sec) + '.' +
                            std::to_string(st.st_mtim.tv_nsec);
    {
        const std::lock_guard<std::mutex> lock(cacheMutex);
        for (auto it = cache.begin(); it != cache.end();) it = it->second.expired() ? cache.erase(it) : std::next(it);
        if (auto it = cache.find(key); it != cache.end())
            if (auto alive = it->second.lock()) return alive;
    }
    auto f = readFile(path, file.fd, size);
    const std::lock_guard<std::mutex> lock(cacheMutex);
    cache[key] = f;
    return f;
}

std::shared_ptr<const GgufFile> GgufFile::readFile(const std::filesystem::path& path, int fd, std::uint64_t size) {
    std::shared_ptr<GgufFile> f(new GgufFile);
    f->path_ = path;
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) failAt(path, "cannot map " + std::to_string(size) + " bytes: " + errnoText(errno));
    f->map_ = static_cast<const std::byte*>(map);
    f->size_ = size;

    Cursor c(*f, f->map_, size);
    if (std::memcmp(f->map_, "GGUF", 4) != 0) f->fail("not a GGUF file (no GGUF magic)");
    c.skipTo(4);
    f->version_ = c.read<std::uint32_t>("version");
    if (f->version_ != 2 && f->version_ != 3)
        f->fail("GGUF version " + std::to_string(f->version_) + " is not supported (versions 2 and 3 are)");
    const auto tensorCount = c.read<std::uint64_t>("tensor count");
    const auto kvCount = c.read<std::uint64_t>("metadata count");
    // A pair takes at least 13 bytes (key length, type, one byte); a tensor info at least 24.
    if (kvCount > c.left() / 13)
        f->fail("metadata count " + std::to_string(kvCount) + " is more than the file's " + std::to_string(size) +
                " bytes can hold");
    for (std::uint64_t i = 0; i < kvCount; ++i) {
        std::string key = c.string("metadata key #" + std::to_string(i));
        const GgufType type = valueType(c, *f, key);
        GgufValue value = readValue(c, *f, type, key, 0);
        if (!f->metadata_.emplace(key, std::move(value)).second) f->fail("metadata key '" + key + "' appears twice");
    }
    if (const GgufValue* a = f->findValue("general.alignment")) {
        if (a->type != GgufType::U32)
            f->fail(std::string("metadata 'general.alignment' must be u32, found ") + ggufTypeName(a->type));
        if (a->integer == 0 || (a->integer & (a->integer - 1)) != 0)
            f->fail("general.alignment " + std::to_string(a->integer) + " is not a nonzero power of two");
        f->alignment_ = static_cast<std::uint64_t>(a->integer);
    }
    if (tensorCount > c.left() / 24)
        f->fail("tensor count " + std::to_string(tensorCount) + " is more than the file's " + std::to_string(size) +
                " bytes can hold");
    f->tensors_.resize(static_cast<std::size_t>(tensorCount));
    for (std::uint64_t i = 0; i < tensorCount; ++i) {
        GgufTensor& t = f->tensors_[static_cast<std::size_t>(i)];
        readTensorInfo(c, *f, i, t);
        if (!f->index_.emplace(t.name, static_cast<std::size_t>(i)).second)
            f->fail("tensor '" + t.name + "' appears twice");
    }
    const std::uint64_t a = f->alignment_;
    f->dataStart_ = (c.at() + a - 1) / a * a;
    if (tensorCount > 0 && f->dataStart_ > size)
        f->fail("truncated: the data section would start at byte " + std::to_string(f->dataStart_) +
                ", past the end of the file (" + std::to_string(size) + " bytes)");
    const std::uint64_t dataSize = size - std::min(size, f->dataStart_);
    for (const GgufTensor& t : f->tensors_) {
        if (t.offset % a != 0)
            f->fail("tensor '" + t.name + "' is misaligned: offset " + std::to_string(t.offset) +
                    " is not a multiple of the alignment " + std::to_string(a));
        if (t.offset > dataSize || t.bytes > dataSize - t.offset)
            f->fail("tensor '" + t.name + "' (" + std::to_string(t.bytes) + " bytes at data offset " +
                    std::to_string(t.offset) + ") runs past the end of the file (the data section has " +
                    std::to_string(dataSize) + " bytes)");
    }
    return f;
}

GgufFile::~GgufFile() {
    if (map_) ::munmap(const_cast<std::byte*>(map_), size_);
}

const GgufTensor* GgufFile::find(const std::string& name) const {
    auto it = index_.find(name);
    return it == index_.end() ? nullptr : &tensors_[it->second];
}

const std::byte* GgufFile::data(const GgufTensor& t) const { return map_ + dataStart_ + t.offset; }

const GgufValue* GgufFile::findValue(const std::string& key) const {
    auto it = metadata_.find(key);
    return it == metadata_.end() ? nullptr : &it->second;
}

std::optional<std::string> GgufFile::string(const std::string& key) const {
    const GgufValue* v = findValue(key);
    if (!v) return std::nullopt;
    if (v->type != GgufType::String) fail("metadata '" + key + "' must be a string, found " + ggufTypeName(v->type));
    return v->text;
}

std::optional<std::int64_t> GgufFile::integer(const std::string& key) const {
    const GgufValue* v = findValue(key);
    if (!v) return std::nullopt;
    if (!v->isInteger()) fail("metadata '" + key + "' must be an integer, found " + ggufTypeName(v->type));
    return v->integer;
}

std::optional<double> GgufFile::number(const std::string& key) const {
    const GgufValue* v = findValue(key);
    if (!v) return std::nullopt;
    if (!v->isNumber()) fail("metadata '" + key + "' must be a number, found " + ggufTypeName(v->type));
    return v->number;
}

std::optional<bool> GgufFile::boolean(const std::string& key) const {
    const GgufValue* v = findValue(key);
    if (!v) return std::nullopt;
    if (v->type != GgufType::Bool) fail("metadata '" + key + "' must be a bool, found " + ggufTypeName(v->type));
    return v->integer != 0;
}

std::string GgufFile::requireString(const std::string& key) const {
    auto s = string(key);
    if (!s) fail("metadata '" + key + "' is missing");
    return *s;
}

std::int64_t GgufFile::requirePositive(const std::string& key) const {
    auto n = integer(key);
    if (!n) fail("metadata '" + key + "' is missing");
    if (*n <= 0 || *n > INT32_MAX)
        fail("metadata '" + key + "' must be a positive integer, found " + std::to_string(*n));
    return *n;
}

const std::vector<std::string>* GgufFile::strings(const std::string& key) const {
    const GgufValue* v = findValue(key);
    if (!v) return nullptr;
    if (v->type != GgufType::Array || v->element != GgufType::String)
        fail("metadata '" + key + "' must be an array of strings");
    return &v->strings;
}

const std::vector<double>* GgufFile::numbers(const std::string& key) const {
    const GgufValue* v = findValue(key);
    if (!v) return nullptr;
    if (v->type != GgufType::Array || v->element == GgufType::String || v->element == GgufType::Array)
        fail("metadata '" + key + "' must be an array of numbers");
    return &v->numbers;
}

bool looksLikeGguf(const std::filesystem::path& path) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) return false;
    UniqueFd fd{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
    if (fd.fd < 0) return false;
    char magic[4] = {};
    return ::read(fd.fd, magic, 4) == 4 && std::memcmp(magic, "GGUF", 4) == 0;
}

}  // namespace attnscope
