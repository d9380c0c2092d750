// The restricted unpickler (torch_pickle.h). Opcodes follow CPython's pickletools (protocols 2-5,
// binary forms only: torch.save writes protocol 2); anything a state dict does not need is an
// error naming the opcode or the global.
#include "io/torch_pickle.h"

#include "attnscope/runtime/error.h"

#include <cstring>
#include <map>
#include <unordered_map>

namespace attnscope::pickle {

namespace {

// A state dict needs about 20 values per tensor: 2^21 values allow 100,000 tensors in one file,
// and cap a hostile pickle's arena at about 2^21 x 64 bytes (128 MiB) whatever its size.
constexpr std::size_t kMaxValues = std::size_t{1} << 21;
constexpr std::size_t kMaxDims = 64;

constexpr StorageClass kStorageClasses[] = {
        {"FloatStorage", 4},          {"HalfStorage", 2},     {"BFloat16Storage", 2},    {"DoubleStorage", 8},
        {"LongStorage", 8},           {"IntStorage", 4},      {"ShortStorage", 2},       {"CharStorage", 1},
        {"ByteStorage", 1},           {"BoolStorage", 1},     {"ComplexHalfStorage", 4}, {"ComplexFloatStorage", 8},
        {"ComplexDoubleStorage", 16}, {"QInt8Storage", 1},    {"QUInt8Storage", 1},      {"QInt32Storage", 4},
        {"QUInt4x2Storage", 1},       {"QUInt2x4Storage", 1}, {"UntypedStorage", 1},
};

enum Function : std::int64_t { OrderedDict, RebuildTensorV2, RebuildTensor, RebuildParameter };

// Names come from the file: one line, bounded length.
std::string printable(std::string_view s) {
    std::string out;
    for (char c : s.substr(0, 80)) out += static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? '?' : c;
    return s.size() > 80 ? out + "..." : out;
}

const char* opcodeName(unsigned char op) {
    switch (op) {
        case 'i': return "INST";
        case 'o': return "OBJ";
        case 0x81: return "NEWOBJ";
        case 0x92: return "NEWOBJ_EX";
        case 0x82: return "EXT1";
        case 0x83: return "EXT2";
        case 0x84: return "EXT4";
        case 'P': return "PERSID";
        case 'I': return "INT";
        case 'L': return "LONG";
        case 'S': return "STRING";
        case 'V': return "UNICODE";
        case 'F': return "FLOAT";
        case 'g': return "GET";
        case 'p': return "PUT";
        case 0x8f: return "EMPTY_SET";
        case 0x90: return "ADDITEMS";
        case 0x91: return "FROZENSET";
        case 0x96: return "BYTEARRAY8";
        case 0x97: return "NEXT_BUFFER";
        case 0x98: return "READONLY_BUFFER";
        default: return "unknown";
    }
}

std::string hexByte(unsigned char c) {
    static const char* digits = "0123456789abcdef";
    return std::string("0x") + digits[c >> 4] + digits[c & 15];
}

}  // namespace

const StorageClass* storageClass(std::string_view name) {
    for (const StorageClass& c : kStorageClasses)
        if (name == c.name) return &c;
    return nullptr;
}

const char* kindName(Value::Kind kind) {
    switch (kind) {
        case Value::None: return "None";
        case Value::Bool: return "bool";
        case Value::Int:
        case Value::BigInt: return "int";
        case Value::Float: return "float";
        case Value::Str: return "string";
        case Value::Tuple: return "tuple";
        case Value::List: return "list";
        case Value::Dict: return "dict";
        case Value::Global: return "function";
        case Value::StorageType: return "storage class";
        case Value::Storage: return "storage";
        case Value::Tensor: return "tensor";
    }
    return "value";
}

std::uint32_t Pickle::add(Value v) {
    values_.push_back(std::move(v));
    return static_cast<std::uint32_t>(values_.size() - 1);
}

struct Pickle::Reader {
    Pickle& p;
    std::string_view b;
    std::size_t& pos;
    const std::string& where;
    std::size_t opAt = 0;
    std::vector<std::uint32_t> stack;
    std::vector<std::size_t> marks;
    std::unordered_map<std::uint32_t, std::uint32_t> memo;
    std::map<std::string, std::size_t, std::less<>> storageByKey;

    Reader(Pickle& pickle, std::string_view bytes, std::size_t& position, const std::string& name)
        : p(pickle), b(bytes), pos(position), where(name) {}

    [[noreturn]] void fail(const std::string& what) const {
        throw Error(where + ": pickle byte " + std::to_string(opAt) + ": " + what);
    }

    std::string_view take(std::uint64_t n) {
        if (n > b.size() - pos)
            fail("truncated: the opcode needs " + std::to_string(n) + " more bytes, " + std::to_string(b.size() - pos) +
                 " are left");
        const std::string_view v = b.substr(pos, static_cast<std::size_t>(n));
        pos += static_cast<std::size_t>(n);
        return v;
    }
    std::uint64_t le(std::size_t n) {
        const std::string_view v = take(n);
        std::uint64_t r = 0;
        for (std::size_t i = 0; i < n; ++i)
            r |= static_cast<std::uint64_t>(static_cast<unsigned char>(v[i])) << (8 * i);
        return r;
    }

    std::uint32_t push(Value v) {
        if (p.values_.size() >= kMaxValues)
            fail("the pickle builds more than " + std::to_string(kMaxValues) +
                 " objects; a state dict needs far fewer");
        const std::uint32_t id = p.add(std::move(v));
        stack.push_back(id);
        return id;
    }
    std::uint32_t pushKind(Value::Kind kind, std::int64_t i = 0) {
        Value v;
        v.kind = kind;
        v.i = i;
        return push(std::move(v));
    }
    std::uint32_t pop() {
        if (stack.empty() || (!marks.empty() && stack.size() <= marks.back()))
            fail("the opcode needs a value and the stack has none");
        const std::uint32_t id = stack.back();
        stack.pop_back();
        return id;
    }
    std::uint32_t top() const {
        if (stack.empty() || (!marks.empty() && stack.size() <= marks.back()))
            fail("the opcode needs a value and the stack has none");
        return stack.back();
    }
    std::vector<std::uint32_t> popMark() {
        if (marks.empty()) fail("the opcode needs a MARK and there is none");
        std::vector<std::uint32_t> items(stack.begin() + static_cast<std::ptrdiff_t>(marks.back()), stack.end());
        stack.resize(marks.back());
        marks.pop_back();
        return items;
    }
    Value& val(std::uint32_t id) { return p.values_[id]; }
    Value& expect(std::uint32_t id, Value::Kind kind, const char* what) {
        Value& v = val(id);
        if (v.kind != kind) fail(std::string(what) + " must be a " + kindName(kind) + ", found a " + kindName(v.kind));
        return v;
    }
    std::int64_t nonNegative(std::uint32_t id, const char* what) {
        const Value& v = expect(id, Value::Int, what);
        if (v.i < 0) fail(std::string(what) + " is negative (" + std::to_string(v.i) + ")");
        return v.i;
    }

    void pushString(std::uint64_t n) {
        Value v;
        v.kind = Value::Str;
        v.s = take(n);
        push(std::move(v));
    }
    void pushLong(std::uint64_t n) {
        Value v;
        v.s = take(n);
        if (n <= 8) {
            std::uint64_t r = 0;
            for (std::size_t i = 0; i < n; ++i)
                r |= static_cast<std::uint64_t>(static_cast<unsigned char>(v.s[i])) << (8 * i);
            if (n > 0 && n < 8 && (static_cast<unsigned char>(v.s[n - 1]) & 0x80)) r |= ~std::uint64_t{0} << (8 * n);
            v.kind = Value::Int;
            v.i = static_cast<std::int64_t>(r);
        } else {
            v.kind = Value::BigInt;
        }
        push(std::move(v));
    }
    void pushTuple(std::vector<std::uint32_t> items) {
        Value v;
        v.kind = Value::Tuple;
        v.items = std::move(items);
        push(std::move(v));
    }
    void setItems(const std::vector<std::uint32_t>& kv) {
        if (kv.size() % 2) fail("SETITEMS has an odd number of keys and values");
        Value& d = expect(top(), Value::Dict, "SETITEMS' target");
        d.items.insert(d.items.end(), kv.begin(), kv.end());
    }
    void memoPut(std::uint64_t index) { memo[static_cast<std::uint32_t>(index)] = top(); }
    void memoGet(std::uint64_t index) {
        auto it = memo.find(static_cast<std::uint32_t>(index));
        if (it == memo.end()) fail("memo entry " + std::to_string(index) + " was never stored");
        stack.push_back(it->second);
    }

    void global(std::string_view module, std::string_view name) {
        if (module == "collections" && name == "OrderedDict") {
            pushKind(Value::Global, OrderedDict);
            return;
        }
        if (module == "torch._utils") {
            if (name == "_rebuild_tensor_v2") return void(pushKind(Value::Global, RebuildTensorV2));
            if (name == "_rebuild_tensor") return void(pushKind(Value::Global, RebuildTensor));
            if (name == "_rebuild_parameter") return void(pushKind(Value::Global, RebuildParameter));
        }
        if (module == "torch" || module == "torch.cuda")
            if (const StorageClass* c = storageClass(name))
                return void(pushKind(Value::StorageType, c - kStorageClasses));
        fail("the pickle names the global '" + printable(std::string(module) + "." + std::string(name)) +
             "', which a state dict never needs; refused (nothing in the file was run)");
    }
    std::string_view line() {
        const std::size_t end = b.find('\n', pos);
        if (end == std::string_view::npos) fail("truncated: GLOBAL's name has no end of line");
        const std::string_view v = b.substr(pos, end - pos);
        pos = end + 1;
        return v;
    }

    void tensor(const std::vector<std::uint32_t>& a) {
        TensorRef t;
        t.storage = static_cast<std::size_t>(expect(a[0], Value::Storage, "a tensor's storage").i);
        t.offset = static_cast<std::uint64_t>(nonNegative(a[1], "a tensor's storage offset"));
        const auto& size = expect(a[2], Value::Tuple, "a tensor's size").items;
        const auto& stride = expect(a[3], Value::Tuple, "a tensor's stride").items;
        if (size.size() != stride.size())
            fail("a tensor has " + std::to_string(size.size()) + " sizes but " + std::to_string(stride.size()) +
                 " strides");
        if (size.size() > kMaxDims) fail("a tensor has " + std::to_string(size.size()) + " dimensions");
        for (std::size_t d = 0; d < size.size(); ++d) {
            t.shape.push_back(nonNegative(size[d], "a tensor's size"));
            t.stride.push_back(nonNegative(stride[d], "a tensor's stride"));
        }
        p.tensors_.push_back(std::move(t));
        pushKind(Value::Tensor, static_cast<std::int64_t>(p.tensors_.size() - 1));
    }

    void reduce() {
        const std::uint32_t argsId = pop(), fnId = pop();
        const Value& fn = val(fnId);
        if (fn.kind != Value::Global)
            fail(std::string("REDUCE calls a ") + kindName(fn.kind) + ", not a function this reader allows; refused");
        const std::vector<std::uint32_t> a = expect(argsId, Value::Tuple, "REDUCE's arguments").items;
        auto arity = [&](std::size_t lo, std::size_t hi, const char* name) {
            if (a.size() < lo || a.size() > hi)
                fail(std::string(name) + " takes " + std::to_string(lo) + (lo == hi ? "" : "-" + std::to_string(hi)) +
                     " arguments, the pickle gives " + std::to_string(a.size()));
        };
        switch (fn.i) {
            case OrderedDict:
                arity(0, 0, "OrderedDict");
                pushKind(Value::Dict);
                return;
            case RebuildTensorV2: arity(6, 7, "_rebuild_tensor_v2"); return tensor(a);
            case RebuildTensor: arity(4, 4, "_rebuild_tensor"); return tensor(a);
            case RebuildParameter:
                arity(3, 3, "_rebuild_parameter");
                expect(a[0], Value::Tensor, "_rebuild_parameter's data");
                stack.push_back(a[0]);
                return;
        }
        fail("REDUCE of an unknown function");
    }

    // ('storage', storage class, key, location, numel[, view metadata]).
    void persistentId() {
        const std::vector<std::uint32_t> t = expect(pop(), Value::Tuple, "a persistent id").items;
        if (t.size() != 5 && t.size() != 6)
            fail("a persistent id must be ('storage', class, key, location, numel), found a tuple of " +
                 std::to_string(t.size()));
        if (expect(t[0], Value::Str, "a persistent id's kind").s != "storage")
            fail("persistent id kind '" + printable(val(t[0]).s) + "' is not 'storage'; refused");
        const StorageClass* type = &kStorageClasses[expect(t[1], Value::StorageType, "a storage's class").i];
        const std::string key(expect(t[2], Value::Str, "a storage's key").s);
        expect(t[3], Value::Str, "a storage's location");
        const auto numel = static_cast<std::uint64_t>(nonNegative(t[4], "a storage's element count"));
        if (t.size() == 6 && val(t[5]).kind != Value::None)
            fail("storage '" + printable(key) + "' is a view (pre-1.0 checkpoints); not supported");
        auto [it, fresh] = storageByKey.emplace(key, p.storages_.size());
        if (fresh) {
            p.storages_.push_back({key, type, numel});
        } else if (p.storages_[it->second].type != type || p.storages_[it->second].numel != numel) {
            fail("storage '" + printable(key) + "' appears as " + p.storages_[it->second].type->name + " of " +
                 std::to_string(p.storages_[it->second].numel) + " and as " + type->name + " of " +
                 std::to_string(numel));
        }
        pushKind(Value::Storage, static_cast<std::int64_t>(it->second));
    }

    void run();
    bool step(unsigned char op);
};

void Pickle::Reader::run() {
    while (true) {
        opAt = pos;
        if (pos >= b.size()) fail("truncated: the pickle ends without STOP");
        const auto op = static_cast<unsigned char>(b[pos++]);
        if (op == '.') {
            if (stack.size() != 1 || !marks.empty())
                fail("STOP with " + std::to_string(stack.size()) + " values on the stack (expected one)");
            p.root_ = stack.back();
            return;
        }
        if (!step(op))
            fail("opcode " + hexByte(op) + " (" + opcodeName(op) +
                 ") is not part of a state dict; refused (nothing in the file was run)");
    }
}

bool Pickle::Reader::step(unsigned char op) {
    switch (op) {
        case 0x80: {  // PROTO
            const auto v = le(1);
            if (v > 5) fail("pickle protocol " + std::to_string(v) + " is newer than 5");
            return true;
        }
        case 0x95: {  // FRAME: a length hint; the opcodes follow inline
            const auto n = le(8);
            if (n > b.size() - pos) fail("truncated: FRAME of " + std::to_string(n) + " bytes past the end");
            return true;
        }
        case '(': marks.push_back(stack.size()); return true;
        case '0': pop(); return true;
        case '1': popMark(); return true;
        case '2': stack.push_back(top()); return true;
        case 'N': pushKind(Value::None); return true;
        case 0x88: pushKind(Value::Bool, 1); return true;
        case 0x89: pushKind(Value::Bool, 0); return true;
        case 'J': pushKind(Value::Int, static_cast<std::int32_t>(le(4))); return true;
        case 'K': pushKind(Value::Int, static_cast<std::int64_t>(le(1))); return true;
        case 'M': pushKind(Value::Int, static_cast<std::int64_t>(le(2))); return true;
        case 0x8a: pushLong(le(1)); return true;
        case 0x8b: {
            const auto n = static_cast<std::int32_t>(le(4));
            if (n < 0) fail("LONG4 has a negative length");
            pushLong(static_cast<std::uint64_t>(n));
            return true;
        }
        case 'G': {
            const std::string_view v = take(8);
            std::uint64_t bits = 0;
            for (char c : v) bits = bits << 8 | static_cast<unsigned char>(c);  // big-endian
            Value f;
            f.kind = Value::Float;
            std::memcpy(&f.f, &bits, 8);
            push(std::move(f));
            return true;
        }
        case 'X':
        case 'B': pushString(le(4)); return true;
        case 0x8c:
        case 'U':
        case 'C': pushString(le(1)); return true;
        case 0x8d:
        case 0x8e: pushString(le(8)); return true;
        case 'T': {
            const auto n = static_cast<std::int32_t>(le(4));
            if (n < 0) fail("BINSTRING has a negative length");
            pushString(static_cast<std::uint64_t>(n));
            return true;
        }
        case ')': pushTuple({}); return true;
        case 't': pushTuple(popMark()); return true;
        case 0x85:
        case 0x86:
        case 0x87: {
            std::vector<std::uint32_t> items(op - 0x84);
            for (std::size_t i = items.size(); i-- > 0;) items[i] = pop();
            pushTuple(std::move(items));
            return true;
        }
        case ']': pushKind(Value::List); return true;
        case 'l': {
            Value v;
            v.kind = Value::List;
            v.items = popMark();
            push(std::move(v));
            return true;
        }
        case 'a': {
            const std::uint32_t item = pop();
            expect(top(), Value::List, "APPEND's target").items.push_back(item);
            return true;
        }
        case 'e': {
            const auto items = popMark();
            auto& list = expect(top(), Value::List, "APPENDS' target").items;
            list.insert(list.end(), items.begin(), items.end());
            return true;
        }
        case '}': pushKind(Value::Dict); return true;
        case 'd': {
            Value v;
            v.kind = Value::Dict;
            v.items = popMark();
            if (v.items.size() % 2) fail("DICT has an odd number of keys and values");
            push(std::move(v));
            return true;
        }
        case 's': {
            const std::uint32_t value = pop(), key = pop();
            setItems({key, value});
            return true;
        }
        case 'u': setItems(popMark()); return true;
        case 'q': memoPut(le(1)); return true;
        case 'r': memoPut(le(4)); return true;
        case 0x94: memoPut(memo.size()); return true;
        case 'h': memoGet(le(1)); return true;
        case 'j': memoGet(le(4)); return true;
        case 'c': {
            const std::string_view module = line();
            const std::string_view name = line();
            global(module, name);
            return true;
        }
        case 0x93: {  // STACK_GLOBAL
            const std::uint32_t name = pop(), module = pop();
            global(expect(module, Value::Str, "STACK_GLOBAL's module").s,
                   expect(name, Value::Str, "STACK_GLOBAL's name").s);
            return true;
        }
        case 'R': reduce(); return true;
        case 'b': {  // BUILD: only OrderedDict's attribute dict (a state dict's _metadata), ignored
            const std::uint32_t state = pop();
            (void)state;
            expect(top(), Value::Dict, "BUILD's target");
            return true;
        }
        case 'Q': persistentId(); return true;
        default: return false;
    }
}

Pickle::Pickle(std::string_view bytes, std::size_t& pos, const std::string& where) {
    Reader r(*this, bytes, pos, where);
    r.run();
}

std::vector<NamedTensor> stateDict(const Pickle& pickle, const std::string& where) {
    const Value& root = pickle.root();
    if (root.kind != Value::Dict)
        throw Error(where + ": the pickle holds a " + kindName(root.kind) + ", not a state dict (name -> tensor)");
    std::vector<NamedTensor> out;
    std::map<std::string_view, bool> seen;
    for (std::size_t i = 0; i + 1 < root.items.size(); i += 2) {
        const Value& key = pickle.at(root.items[i]);
        const Value& value = pickle.at(root.items[i + 1]);
        if (key.kind != Value::Str)
            throw Error(where + ": the state dict has a " + std::string(kindName(key.kind)) +
                        " key; names are strings");
        const std::string name = printable(key.s);
        if (value.kind != Value::Tensor)
            throw Error(where + ": entry '" + name + "' is a " + kindName(value.kind) +
                        ", not a tensor (only state dicts of tensors are read)");
        if (!seen.emplace(key.s, true).second) throw Error(where + ": tensor '" + name + "' appears twice");
        out.push_back({std::string(key.s), &pickle.tensors()[static_cast<std::size_t>(value.i)]});
    }
    return out;
}

}  // namespace attnscope::pickle
