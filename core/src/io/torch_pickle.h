// A restricted unpickler for the pickles torch.save writes (pytorch_model.bin): it builds plain
// values (None, bools, ints, floats, strings, tuples, lists, dicts) and the few objects a state
// dict needs, and refuses everything else by name. It never imports or calls anything: the
// globals it accepts are recognised by name and stand for a fixed action here.
//
// Accepted globals: collections.OrderedDict; torch._utils._rebuild_tensor_v2, _rebuild_tensor and
// _rebuild_parameter; torch.<T>Storage (and torch.cuda.<T>Storage). Persistent ids are
// ('storage', <storage class>, key, location, numel[, view]) as both torch.save formats write them.
//
// Memory: values live in one arena indexed by 32-bit ids (no recursion on destruction, cycles
// harmless); strings are views into the caller's bytes; every length is checked against the bytes
// left before anything is read, and the number of values is capped, so a hostile pickle costs at
// most a small multiple of its own size.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attnscope::pickle {

// The storage classes torch.save names, with their element size in bytes.
struct StorageClass {
    const char* name;  // "FloatStorage"
    int elementSize;
};
const StorageClass* storageClass(std::string_view name);  // nullptr when not a storage class

struct Storage {
    std::string key;  // the persistent id's key ("0", "140234…")
    const StorageClass* type = nullptr;
    std::uint64_t numel = 0;  // elements of `type`
};

struct TensorRef {
    std::size_t storage = 0;                  // index into Pickle::storages()
    std::uint64_t offset = 0;                 // elements into the storage
    std::vector<std::int64_t> shape, stride;  // non-negative, same length
};

struct Value {
    enum Kind : std::uint8_t {
        None,
        Bool,
        Int,
        BigInt,
        Float,
        Str,
        Tuple,
        List,
        Dict,
        Global,
        StorageType,
        Storage,
        Tensor
    };
    Kind kind = None;
    std::int64_t i = 0;                // Bool/Int; Global: which function; StorageType/Storage/Tensor: index
    double f = 0;                      // Float
    std::string_view s;                // Str (the raw bytes); BigInt: little-endian two's complement bytes
    std::vector<std::uint32_t> items;  // Tuple, List; Dict: key, value, key, value, ...
};

const char* kindName(Value::Kind kind);  // "int", "tuple", "tensor", ... for messages

class Pickle {
public:
    // Reads one pickle from bytes[pos...] up to and including its STOP opcode and leaves pos
    // after it. Throws attnscope::Error "WHERE: pickle byte N: ..." on anything outside the
    // accepted subset.
    Pickle(std::string_view bytes, std::size_t& pos, const std::string& where);

    const Value& root() const { return values_[root_]; }
    const Value& at(std::uint32_t id) const { return values_[id]; }
    const std::vector<Storage>& storages() const { return storages_; }
    const std::vector<TensorRef>& tensors() const { return tensors_; }

private:
    struct Reader;
    std::uint32_t add(Value v);

    std::vector<Value> values_;
    std::vector<Storage> storages_;
    std::vector<TensorRef> tensors_;
    std::uint32_t root_ = 0;
    friend struct Reader;
};

// The state dict a pickle holds: its root is a dict (OrderedDict) of name -> tensor.
struct NamedTensor {
    std::string name;
    const TensorRef* tensor;
};
// Throws attnscope::Error "WHERE: ..." when the root is not a dict of string -> tensor, or a name
// appears twice.
std::vector<NamedTensor> stateDict(const Pickle& pickle, const std::string& where);

}  // namespace attnscope::pickle
