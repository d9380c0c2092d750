// torch.save files (torch_checkpoint.h): the two layouts around the same pickle, resolved to
// tensors whose bytes lie in the read-only mapping.
#include "attnscope/io/torch_checkpoint.h"

#include "attnscope/runtime/error.h"
#include "io/file_errors.h"
#include "io/torch_pickle.h"
#include "io/zip_stored.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace attnscope {

namespace fs = std::filesystem;

namespace {

// torch.serialization.MAGIC_NUMBER (0x1950a86a20f9469cfc6c) as pickle's LONG1 bytes, little-endian.
constexpr unsigned char kMagic[] = {0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19};
constexpr std::int64_t kLegacyProtocol = 1001;

std::optional<DType> dtypeOf(const pickle::StorageClass& c) {
    const std::string_view n = c.name;
    if (n == "FloatStorage") return DType::F32;
    if (n == "HalfStorage") return DType::F16;
    if (n == "BFloat16Storage") return DType::BF16;
    if (n == "LongStorage") return DType::I64;
    return std::nullopt;
}

// Where each storage's bytes begin in the file and how many there are.
struct StorageBytes {
    std::uint64_t begin = 0, size = 0;
};

std::string quote(std::string_view s) {
    std::string out = "'";
    for (char c : s.substr(0, 120)) out += static_cast<unsigned char>(c) < 0x20 ? '?' : c;
    return out + (s.size() > 120 ? "...'" : "'");
}

// numel × elementSize, nullopt on overflow.
std::optional<std::uint64_t> times(std::uint64_t n, std::uint64_t size) {
    std::uint64_t r = 0;
    if (__builtin_mul_overflow(n, size, &r)) return std::nullopt;
    return r;
}

}  // namespace

struct TorchCheckpointBuilder {
    TorchCheckpoint& c;
    std::string_view file;
    std::string where;

    [[noreturn]] void fail(const std::string& what) const { throw Error(where + ": " + what); }

    void zip() {
        c.zip_ = true;
        const auto entries = zip::readDirectory(file, where);
        const zip::Entry* pkl = nullptr;
        for (const auto& e : entries) {
            const auto slash = e.name.find('/');
            if (slash != std::string::npos && e.name.compare(slash, std::string::npos, "/data.pkl") == 0) {
                if (pkl) fail("zip archive has two state pickles, '" + pkl->name + "' and '" + e.name + "'");
                pkl = &e;
            }
        }
        if (!pkl) fail("zip archive without PREFIX/data.pkl: not a file torch.save wrote");
        const std::string prefix = pkl->name.substr(0, pkl->name.size() - std::strlen("data.pkl"));
        auto find = [&](const std::string& name) -> const zip::Entry* {
            for (const auto& e : entries)
                if (e.name == name) return &e;
            return nullptr;
        };
        auto bytesOf = [&](const zip::Entry& e) {
            if (e.method != 0)
                fail("zip entry '" + e.name + "' is compressed (method " + std::to_string(e.method) +
                     "); torch.save stores entries uncompressed, so it cannot be mapped: re-save the checkpoint");
            return file.substr(e.offset, e.size);
        };
        if (find(prefix + "constants.pkl"))
            fail("a TorchScript archive (torch.jit.save), not a state dict saved by torch.save");
        if (const auto* order = find(prefix + "byteorder"); order && bytesOf(*order) != "little")
            fail("storages are stored big-endian (byteorder '" + std::string(bytesOf(*order).substr(0, 16)) +
                 "'); only little-endian checkpoints are read");

        const std::string_view text = bytesOf(*pkl);
        std::size_t pos = 0;
        const pickle::Pickle p(text, pos, where + " (" + pkl->name + ")");
        std::vector<StorageBytes> storages;
        for (const auto& s : p.storages()) {
            const auto* e = find(prefix + "data/" + s.key);
            if (!e) fail("storage " + quote(s.key) + " has no entry '" + prefix + "data/" + s.key + "'");
            const std::string_view bytes = bytesOf(*e);
            const auto needed = times(s.numel, static_cast<std::uint64_t>(s.type->elementSize));
            if (!needed || *needed > bytes.size())
                fail("storage " + quote(s.key) + " is " + std::to_string(s.numel) + " " + s.type->name +
                     " elements but its entry has " + std::to_string(bytes.size()) + " bytes");
            storages.push_back({e->offset, *needed});
        }
        resolve(p, storages, pkl->name);
    }

    void legacy() {
        std::size_t pos = 0;
        const pickle::Pickle magic(file, pos, where);
        const auto& m = magic.root();
        if (m.kind != pickle::Value::BigInt || m.s != std::string_view(reinterpret_cast<const char*>(kMagic), 10))
            fail("not a PyTorch checkpoint: a pickle, but without torch.save's magic number");
        const pickle::Pickle protocol(file, pos, where);
        if (protocol.root().kind != pickle::Value::Int || protocol.root().i != kLegacyProtocol)
            fail("legacy checkpoint of protocol version other than 1001; not supported");
        const pickle::Pickle sysInfo(file, pos, where);
        const auto& info = sysInfo.root();
        if (info.kind != pickle::Value::Dict) fail("legacy checkpoint without its sys_info dict");
        for (std::size_t i = 0; i + 1 < info.items.size(); i += 2) {
            const auto& k = sysInfo.at(info.items[i]);
            const auto& v = sysInfo.at(info.items[i + 1]);
            if (k.kind == pickle::Value::Str && k.s == "little_endian" && !(v.kind == pickle::Value::Bool && v.i == 1))
                fail("written on a big-endian machine; only little-endian checkpoints are read");
        }
        const pickle::Pickle p(file, pos, where);
        pickle::stateDict(p, where);  // a pickle that is no state dict is named as such first
        const pickle::Pickle keys(file, pos, where);
        if (keys.root().kind != pickle::Value::List) fail("legacy checkpoint without its list of storage keys");

        // The storages follow in the list's order: int64 element count, then the bytes.
        std::vector<StorageBytes> storages(p.storages().size());
        std::vector<bool> found(storages.size());
        std::map<std::string_view, std::size_t> byKey;
        for (std::size_t s = 0; s < storages.size(); ++s) byKey[p.storages()[s].key] = s;
        for (std::uint32_t id : keys.root().items) {
            const auto& key = keys.at(id);
            if (key.kind != pickle::Value::Str) fail("a storage key is not a string");
            const auto it = byKey.find(key.s);
            const std::size_t s = it == byKey.end() ? storages.size() : it->second;
            if (s == storages.size()) fail("storage key " + quote(key.s) + " is not used by the state dict");
            if (found[s]) fail("storage key " + quote(key.s) + " is listed twice");
            const auto& st = p.storages()[s];
            if (file.size() - pos < 8) fail("truncated: storage " + quote(st.key) + " has no element count");
            std::uint64_t count = 0;
            for (int i = 0; i < 8; ++i)
                count |= static_cast<std::uint64_t>(static_cast<unsigned char>(file[pos + i])) << (8 * i);
            pos += 8;
            const auto bytes = times(count, static_cast<std::uint64_t>(st.type->elementSize));
            if (!bytes || *bytes > file.size() - pos)
                fail("storage " + quote(st.key) + " says " + std::to_string(count) + " " + st.type->name +
                     " elements but " + std::to_string(file.size() - pos) + " bytes are left (file truncated?)");
            if (count < st.numel)
                fail("storage " + quote(st.key) + " holds " + std::to_string(count) + " elements, the state dict " +
                     std::to_string(st.numel));
            storages[s] = {pos, *bytes};
            found[s] = true;
            pos += static_cast<std::size_t>(*bytes);
        }
        for (std::size_t s = 0; s < found.size(); ++s)
            if (!found[s]) fail("storage " + quote(p.storages()[s].key) + " is missing from the file");
        resolve(p, storages, "");
    }

    // Tensors from (storage, offset, shape, stride), checked to lie inside their storage.
    void resolve(const pickle::Pickle& p, const std::vector<StorageBytes>& storages, const std::string& entry) {
        const std::string at = entry.empty() ? where : where + " (" + entry + ")";
        for (const pickle::NamedTensor& named : pickle::stateDict(p, at)) {
            const std::string& name = named.name;  // a plain reference: lambdas cannot capture bindings in C++17
            const pickle::TensorRef* t = named.tensor;
            const auto& type = *p.storages()[t->storage].type;
            const auto dtype = dtypeOf(type);
            if (!dtype) {
                c.skipped_[name] = type.name;
                continue;
            }
            const auto bad = [&](const std::string& what) { fail("tensor " + quote(name) + ": " + what); };
            std::uint64_t numel = 1;
            for (auto d : t->shape)
                if (__builtin_mul_overflow(numel, static_cast<std::uint64_t>(d), &numel))
                    bad("shape " + shapeString(t->shape) + " overflows 64 bits");
            const std::uint64_t size = static_cast<std::uint64_t>(type.elementSize);
            const StorageBytes& s = storages[t->storage];
            const auto begin = times(t->offset, size), bytes = times(numel, size);
            if (!begin || !bytes || *begin > s.size || *bytes > s.size - *begin)
                bad("elements " + std::to_string(t->offset) + " + " + std::to_string(numel) + " lie past its storage " +
                    quote(p.storages()[t->storage].key) + " of " + std::to_string(s.size / size) + " elements");
            // numel now fits the file, so the running product below cannot overflow.
            std::int64_t expected = 1;
            for (std::size_t d = t->shape.size(); d-- > 0 && numel > 0;) {
                if (t->shape[d] != 1 && t->stride[d] != expected)
                    bad("is not contiguous (shape " + shapeString(t->shape) + ", strides " + shapeString(t->stride) +
                        "); save it with .contiguous()");
                expected *= t->shape[d];
            }
            TensorInfo info;
            info.name = name;
            info.dtype = *dtype;
            info.shape = t->shape;
            info.begin = s.begin + *begin;
            info.end = info.begin + *bytes;
            c.index_[name] = c.tensors_.size();
            c.tensors_.push_back(std::move(info));
        }
    }
};

std::shared_ptr<const TorchCheckpoint> TorchCheckpoint::open(const fs::path& path) {
    UniqueFd file{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
    if (file.fd < 0) failAt(path, "cannot open: " + errnoText(errno));
    struct stat st {};
    if (::fstat(file.fd, &st) != 0) failAt(path, "cannot stat: " + errnoText(errno));
    if (S_ISDIR(st.st_mode)) failAt(path, "is a directory, not a PyTorch checkpoint");
    if (!S_ISREG(st.st_mode)) failAt(path, "is not a regular file");
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (size < 4) failAt(path, "file is " + std::to_string(size) + " bytes: not a PyTorch checkpoint");

    std::shared_ptr<TorchCheckpoint> c(new TorchCheckpoint);
    c->path_ = path;
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, file.fd, 0);
    if (map == MAP_FAILED) failAt(path, "cannot map " + std::to_string(size) + " bytes: " + errnoText(errno));
    c->map_ = static_cast<const std::byte*>(map);
    c->size_ = size;

    TorchCheckpointBuilder b{*c, {reinterpret_cast<const char*>(map), static_cast<std::size_t>(size)}, path.string()};
    if (std::memcmp(map, "PK\x03\x04", 4) == 0)
        b.zip();
    else if (static_cast<const unsigned char*>(map)[0] == 0x80)
        b.legacy();
    else
        failAt(path, "not a PyTorch checkpoint (neither the zip archive nor the legacy pickle torch.save writes)");
    return c;
}

TorchCheckpoint::~TorchCheckpoint() {
    if (map_) ::munmap(const_cast<std::byte*>(map_), size_);
}

const TensorInfo* TorchCheckpoint::find(std::string_view name) const {
    auto it = index_.find(std::string(name));
    return it == index_.end() ? nullptr : &tensors_[it->second];
}

const std::byte* TorchCheckpoint::data(const TensorInfo& t) const {
    if (t.begin > t.end || t.end > size_) failAt(path_, "tensor " + quote(t.name) + " lies outside this file");
    return map_ + t.begin;
}

bool looksLikeTorchCheckpoint(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    char head[4] = {};
    if (!in.read(head, 4)) return false;
    return std::memcmp(head, "PK\x03\x04", 4) == 0 ||
           (static_cast<unsigned char>(head[0]) == 0x80 && head[1] >= 2 && head[1] <= 5);
}

}  // namespace attnscope
