// Reading and writing safetensors files. Validation follows the reference implementation
// (huggingface/safetensors, SafeTensors::read_metadata + Metadata::validate), so a file we
// accept is one the Python/Rust tools accept too, and every tensor's bytes lie inside the map.
#include "attnscope/io/safetensors.h"

#include "attnscope/io/atomic_file.h"

#include "attnscope/runtime/error.h"
#include "io/json_util.h"
#include "io/file_errors.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <tuple>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace attnscope {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr std::uint64_t kMaxHeaderSize = 100'000'000;  // the reference's MAX_HEADER_SIZE
constexpr std::size_t kPrefixSize = 8;                 // little-endian u64 header length

// Names come from the file: keep messages on one line even if a name holds control characters.
std::string quote(std::string_view s) {
    std::string out = "'";
    for (char c : s) out += (static_cast<unsigned char>(c) < 0x20) ? '?' : c;
    return out + "'";
}

// A short rendering of a JSON value for messages; a hostile header can hold huge values.
std::string brief(const json& v) {
    std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
    return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

std::string offsetsText(std::uint64_t begin, std::uint64_t end) {
    return "[" + std::to_string(begin) + ", " + std::to_string(end) + "]";
}

// Byte size of a tensor, or nullopt on 64-bit overflow. Multiplies dimension by dimension like
// the reference (checked_mul), so an accepted shape never overflows a running product later.
std::optional<std::uint64_t> byteSize(const std::vector<std::int64_t>& shape, DType dtype) {
    std::uint64_t n = 1;
    for (auto d : shape)
        if (__builtin_mul_overflow(n, static_cast<std::uint64_t>(d), &n)) return std::nullopt;
    // dtypeSize >= 2, so a byte size that fits in u64 means numel fits in int64.
    if (__builtin_mul_overflow(n, dtypeSize(dtype), &n)) return std::nullopt;
    return n;
}

// Offset of the first byte that is not part of well-formed UTF-8 (no overlongs, surrogates or
// code points past U+10FFFF), or npos. Checked up front, as the reference does, because the
// JSON lexer only checks inside strings and would report stray bytes as a syntax error.
std::size_t invalidUtf8At(std::string_view s) {
    static constexpr std::uint32_t kMinCodePoint[] = {0, 0, 0x80, 0x800, 0x10000};
    std::size_t i = 0;
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        std::size_t len = 0;
        std::uint32_t cp = 0;
        if (c < 0x80) {
            ++i;
            continue;
        }
        if ((c & 0xE0) == 0xC0) {
            len = 2;
            cp = c & 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            len = 3;
            cp = c & 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            len = 4;
            cp = c & 0x07;
        } else
            return i;
        if (s.size() - i < len) return i;
        for (std::size_t k = 1; k < len; ++k) {
            const auto cc = static_cast<unsigned char>(s[i + k]);
            if ((cc & 0xC0) != 0x80) return i;
            cp = (cp << 6) | (cc & 0x3F);
        }
        if (cp < kMinCodePoint[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
        i += len;
    }
    return std::string_view::npos;
}

// Parses the header text. nlohmann keeps the last of duplicate keys silently; a duplicate
// tensor name would hide a tensor, so the parser callback watches every object's keys.
json parseHeader(const fs::path& path, std::string_view text) {
    struct Frame {
        std::set<std::string> keys;
        std::string name;
    };
    std::vector<Frame> stack;
    std::string lastKey, duplicate;
    auto watch = [&](int, json::parse_event_t event, json& parsed) {
        if (event == json::parse_event_t::object_start) {
            stack.push_back({{}, lastKey});
        } else if (event == json::parse_event_t::object_end) {
            if (!stack.empty()) stack.pop_back();
        } else if (event == json::parse_event_t::key && !stack.empty()) {
            lastKey = parsed.get<std::string>();
            if (!stack.back().keys.insert(lastKey).second && duplicate.empty()) {
                const std::string& parent = stack.back().name;
                if (stack.size() == 1)
                    duplicate = (lastKey == "__metadata__" ? "__metadata__" : "tensor " + quote(lastKey)) +
                                " appears twice in the header";
                else if (stack.size() == 2 && parent == "__metadata__")
                    duplicate = "__metadata__ key " + quote(lastKey) + " appears twice";
                else if (stack.size() == 2)
                    duplicate = "tensor " + quote(parent) + ": field " + quote(lastKey) + " appears twice";
                else
                    duplicate = "key " + quote(lastKey) + " appears twice in the header";
            }
        }
        return true;
    };
    checkJsonDepth(text, path.string() + ": header");
    json header;
    try {
        header = json::parse(text.begin(), text.end(), watch);
    } catch (const json::exception& e) {
        // Drop nlohmann's "[json.exception.parse_error.101] " prefix; keep the position.
        std::string what = e.what();
        if (auto p = what.find("] "); what.rfind("[json.", 0) == 0 && p != std::string::npos) what.erase(0, p + 2);
        failAt(path, "header is not valid JSON: " + what);
    }
    if (!duplicate.empty()) failAt(path, duplicate);
    if (!header.is_object()) failAt(path, std::string("header must be a JSON object, found ") + header.type_name());
    return header;
}

DType parseDType(const std::string& name, const std::function<void(const std::string&)>& bad) {
    if (name == "F32") return DType::F32;
    if (name == "F16") return DType::F16;
    if (name == "BF16") return DType::BF16;
    if (name == "I64") return DType::I64;
    static const std::set<std::string> kOtherKnown = {"BOOL",    "U8",  "I8",      "U16",    "I16",     "U32",
                                                      "I32",     "U64", "F64",     "C64",    "F8_E4M3", "F8_E5M2",
                                                      "F8_E8M0", "F4",  "F6_E2M3", "F6_E3M2"};
    if (kOtherKnown.count(name)) bad("dtype " + name + " is not supported (F32, F16, BF16 are)");
    bad("unknown dtype " + quote(name) + " (expected F32, F16 or BF16)");
    return DType::F32;  // not reached: bad() throws
}

// One header entry → TensorInfo, checking its own fields and that its bytes fit the data section.
TensorInfo parseEntry(const fs::path& path, const std::string& name, const json& v, std::uint64_t dataSize) {
    const std::function<void(const std::string&)> bad = [&](const std::string& what) {
        failAt(path, "tensor " + quote(name) + ": " + what);
    };
    if (!v.is_object()) bad("expected an object with dtype, shape and data_offsets, found " + brief(v));
    for (const auto& item : v.items())
        if (item.key() != "dtype" && item.key() != "shape" && item.key() != "data_offsets")
            bad("unexpected field " + quote(item.key()) + " (only dtype, shape and data_offsets are allowed)");
    for (const char* field : {"dtype", "shape", "data_offsets"})
        if (!v.contains(field)) bad(std::string("missing field '") + field + "'");

    TensorInfo t;
    t.name = name;
    const json& dtype = v["dtype"];
    if (!dtype.is_string()) bad("dtype must be a string, found " + brief(dtype));
    t.dtype = parseDType(dtype.get<std::string>(), bad);

    const json& shape = v["shape"];
    if (!shape.is_array()) bad("shape must be an array of non-negative integers, found " + brief(shape));
    for (const json& d : shape) {
        if (d.is_number_integer() && !d.is_number_unsigned())
            bad("shape " + brief(shape) + " has a negative dimension");
        if (!d.is_number_unsigned()) bad("shape must be an array of non-negative integers, found " + brief(shape));
        const auto dim = d.get<std::uint64_t>();
        if (dim > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
            bad("shape " + brief(shape) + " has a dimension too large for 64 bits (overflow)");
        t.shape.push_back(static_cast<std::int64_t>(dim));
    }

    const json& offsets = v["data_offsets"];
    if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
        !offsets[1].is_number_unsigned())
        bad("data_offsets must be [begin, end] with non-negative integers, found " + brief(offsets));
    t.begin = offsets[0].get<std::uint64_t>();
    t.end = offsets[1].get<std::uint64_t>();
    const std::string range = "data_offsets " + offsetsText(t.begin, t.end);
    if (t.begin > t.end) bad(range + " begin after they end");

    const auto needed = byteSize(t.shape, t.dtype);
    if (!needed) bad(std::string(dtypeName(t.dtype)) + " shape " + shapeString(t.shape) + " overflows 64 bits");
    if (*needed != t.end - t.begin)
        bad(range + " hold " + std::to_string(t.end - t.begin) + " bytes but " + dtypeName(t.dtype) + " shape " +
            shapeString(t.shape) + " needs " + std::to_string(*needed));
    if (t.end > dataSize)
        bad(range + " end past the data section, which has " + std::to_string(dataSize) + " bytes (file truncated?)");
    return t;
}

// Sorted by offset, tensors must cover the data section exactly: no holes, overlaps or tail.
void checkTiling(const fs::path& path, const std::vector<TensorInfo>& tensors, std::uint64_t dataSize) {
    std::uint64_t cursor = 0;
    const TensorInfo* previous = nullptr;
    for (const auto& t : tensors) {
        const std::string after =
                previous ? "tensor " + quote(previous->name) + " ends at byte " + std::to_string(cursor)
                         : "the data section starts at byte 0";
        if (t.begin < cursor)
            failAt(path, "tensor " + quote(t.name) + " begins at byte " + std::to_string(t.begin) + " but " + after +
                                 ": the tensors overlap");
        if (t.begin > cursor)
            failAt(path, "tensor " + quote(t.name) + " begins at byte " + std::to_string(t.begin) + " but " + after +
                                 ": bytes " + std::to_string(cursor) + " to " + std::to_string(t.begin) +
                                 " are a hole no tensor covers");
        cursor = t.end;
        previous = &t;
    }
    if (cursor != dataSize)  // cursor > dataSize was caught per tensor
        failAt(path, "the data section has " + std::to_string(dataSize) + " bytes but " +
                             (previous ? "the last tensor " + quote(previous->name) + " ends at byte " +
                                                 std::to_string(cursor)
                                       : std::string("the header lists no tensors")) +
                             ": " + std::to_string(dataSize - cursor) + " trailing bytes belong to no tensor");
}

}  // namespace

const char* dtypeName(DType d) {
    switch (d) {
        case DType::F32: return "F32";
        case DType::F16: return "F16";
        case DType::BF16: return "BF16";
        case DType::I64: return "I64";
    }
    return "?";
}

std::size_t dtypeSize(DType d) { return d == DType::I64 ? 8 : d == DType::F32 ? 4 : 2; }

std::int64_t TensorInfo::numel() const {
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    return n;
}

std::shared_ptr<const SafetensorsFile> SafetensorsFile::open(const fs::path& path) {
    // O_NONBLOCK so that opening a FIFO by mistake cannot hang; it is a no-op for regular files.
    UniqueFd file{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
    if (file.fd < 0) failAt(path, "cannot open: " + errnoText(errno));
    struct stat st {};
    if (::fstat(file.fd, &st) != 0) failAt(path, "cannot stat: " + errnoText(errno));
    if (S_ISDIR(st.st_mode)) failAt(path, "is a directory, not a safetensors file");
    if (!S_ISREG(st.st_mode)) failAt(path, "is not a regular file");
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (size < kPrefixSize)
        failAt(path, "file is " + std::to_string(size) +
                             " bytes, shorter than the 8-byte header length; "
                             "not a safetensors file");

    // Owning the mapping from here on means the destructor unmaps it if validation throws.
    std::shared_ptr<SafetensorsFile> f(new SafetensorsFile);
    f->path_ = path;
    // The whole file is mapped (never 0 bytes, as size >= 8), so an empty data section is fine.
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, file.fd, 0);
    if (map == MAP_FAILED) failAt(path, "cannot map " + std::to_string(size) + " bytes: " + errnoText(errno));
    f->map_ = static_cast<const std::byte*>(map);
    f->size_ = size;

    std::uint64_t headerSize = 0;
    for (std::size_t i = 0; i < kPrefixSize; ++i) headerSize |= static_cast<std::uint64_t>(f->map_[i]) << (8 * i);
    if (headerSize > kMaxHeaderSize)
        failAt(path, "header length " + std::to_string(headerSize) + " is too large (the limit is " +
                             std::to_string(kMaxHeaderSize) + " bytes); not a safetensors file?");
    if (kPrefixSize + headerSize > size)
        failAt(path, "header length " + std::to_string(headerSize) + " exceeds file size: the header needs " +
                             std::to_string(kPrefixSize + headerSize) + " bytes, the file has " + std::to_string(size));
    f->dataStart_ = kPrefixSize + headerSize;
    const std::uint64_t dataSize = size - f->dataStart_;

    const std::string_view text(reinterpret_cast<const char*>(f->map_ + kPrefixSize), headerSize);
    if (auto bad = invalidUtf8At(text); bad != std::string_view::npos)
        failAt(path, "header is not valid UTF-8 (bad byte at header offset " + std::to_string(bad) + ")");
    const json header = parseHeader(path, text);

    for (const auto& [name, value] : header.items()) {
        if (name == "__metadata__") {
            if (value.is_null()) continue;  // the reference reads it as an Option
            if (!value.is_object()) failAt(path, "__metadata__ must be an object of strings, found " + brief(value));
            for (const auto& [key, v] : value.items()) {
                if (!v.is_string())
                    failAt(path, "__metadata__ value for " + quote(key) + " must be a string, found " + brief(v));
                f->metadata_[key] = v.get<std::string>();
            }
            continue;
        }
        f->tensors_.push_back(parseEntry(path, name, value, dataSize));
    }
    // Zero-size tensors sort before a tensor starting at the same offset; names break ties.
    std::sort(f->tensors_.begin(), f->tensors_.end(), [](const TensorInfo& a, const TensorInfo& b) {
        return std::tie(a.begin, a.end, a.name) < std::tie(b.begin, b.end, b.name);
    });
    checkTiling(path, f->tensors_, dataSize);
    for (std::size_t i = 0; i < f->tensors_.size(); ++i) f->index_[f->tensors_[i].name] = i;
    return f;
}

SafetensorsFile::~SafetensorsFile() {
    if (map_) ::munmap(const_cast<std::byte*>(map_), size_);
}

const TensorInfo* SafetensorsFile::find(std::string_view name) const {
    auto it = index_.find(std::string(name));
    return it == index_.end() ? nullptr : &tensors_[it->second];
}

const std::byte* SafetensorsFile::data(const TensorInfo& t) const {
    // Guards against a TensorInfo from another file; validated ones always pass.
    if (t.begin > t.end || t.end > size_ - dataStart_)
        failAt(path_, "tensor " + quote(t.name) + ": data_offsets " + offsetsText(t.begin, t.end) +
                              " are outside this file's data section");
    return map_ + dataStart_ + t.begin;
}

void writeSafetensors(const fs::path& path, const std::vector<TensorBytes>& tensors,
                      const std::map<std::string, std::string>& metadata) {
    // ordered_json keeps the tensors in the caller's order, matching the consecutive offsets.
    nlohmann::ordered_json header = nlohmann::ordered_json::object();
    if (!metadata.empty()) header["__metadata__"] = metadata;
    std::uint64_t offset = 0;
    for (const auto& t : tensors) {
        auto bad = [&](const std::string& what) { failAt(path, "cannot write tensor " + quote(t.name) + ": " + what); };
        if (t.name == "__metadata__") bad("the name is reserved for metadata");
        if (header.contains(t.name)) bad("the name appears twice");
        for (auto d : t.shape)
            if (d < 0) bad("shape " + shapeString(t.shape) + " has a negative dimension");
        const auto needed = byteSize(t.shape, t.dtype);
        if (!needed) bad(std::string(dtypeName(t.dtype)) + " shape " + shapeString(t.shape) + " overflows 64 bits");
        if (*needed != t.bytes.size())
            bad("has " + std::to_string(t.bytes.size()) + " bytes but " + dtypeName(t.dtype) + " shape " +
                shapeString(t.shape) + " needs " + std::to_string(*needed));
        header[t.name] = {
                {"dtype", dtypeName(t.dtype)}, {"shape", t.shape}, {"data_offsets", {offset, offset + *needed}}};
        offset += *needed;
    }
    std::string text;
    try {
        text = header.dump();
    } catch (const nlohmann::ordered_json::exception&) {
        failAt(path, "cannot write: a tensor name or metadata entry is not valid UTF-8");
    }
    // Padding to 8 keeps the data section (and so every F32 tensor written here) 8-byte aligned.
    text.append((kPrefixSize - text.size() % kPrefixSize) % kPrefixSize, ' ');

    std::array<unsigned char, kPrefixSize> prefix{};
    for (std::size_t i = 0; i < kPrefixSize; ++i) prefix[i] = static_cast<unsigned char>(text.size() >> (8 * i));

    AtomicFile out(path);
    out.write(prefix.data(), prefix.size());
    out.write(text);
    for (const auto& t : tensors) out.write(t.bytes.data(), t.bytes.size());
    out.commit();
}

std::string shapeString(const std::vector<std::int64_t>& shape) {
    std::string s = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

}  // namespace attnscope
