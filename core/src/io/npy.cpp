#include "attnscope/io/npy.h"

#include "attnscope/runtime/error.h"

namespace attnscope {

namespace {

std::string headerFor(const std::vector<std::int64_t>& shape, const char* descr = "<f4") {
    std::string dims;
    for (std::size_t i = 0; i < shape.size(); ++i)
        dims += std::to_string(shape[i]) + (shape.size() == 1 || i + 1 < shape.size() ? "," : "");
    std::string dict = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (" + dims + "), }";
    // magic(6) + version(2) + length(2) + dict + padding + '\n' must be a multiple of 64.
    const std::size_t unpadded = 10 + dict.size() + 1;
    dict.append((64 - unpadded % 64) % 64, ' ');
    dict += '\n';
    std::string out("\x93NUMPY\x01\x00", 8);
    out += static_cast<char>(dict.size() & 0xff);
    out += static_cast<char>((dict.size() >> 8) & 0xff);
    return out + dict;
}

// The shape is checked before the temporary is created, so a bad shape leaves nothing behind.
std::uint64_t elementCount(const std::filesystem::path& path, const std::vector<std::int64_t>& shape) {
    std::uint64_t count = 1;
    for (auto s : shape) {
        if (s < 0) throw Error(path.string() + ": negative dimension in array shape");
        count *= static_cast<std::uint64_t>(s);
    }
    return count;
}

}  // namespace

NpyWriter::NpyWriter(std::filesystem::path path, std::vector<std::int64_t> shape)
    : path_(std::move(path)), shape_(std::move(shape)), expected_(elementCount(path_, shape_)), file_(path_) {
    file_.write(headerFor(shape_));
}

NpyWriter::~NpyWriter() = default;  // an unfinished file_ removes its temporary

void NpyWriter::append(const float* values, std::size_t count) {
    static_assert(sizeof(float) == 4, "float32 expected");
    file_.write(values, count * sizeof(float));
    written_ += count;
}

void NpyWriter::finish() {
    if (written_ != expected_)
        throw Error(path_.string() + ": wrote " + std::to_string(written_) + " values but the shape holds " +
                    std::to_string(expected_));
    file_.commit();
}

void writeNpy(const std::filesystem::path& path, const std::vector<std::int64_t>& shape,
              const std::vector<float>& values) {
    NpyWriter w(path, shape);
    w.append(values.data(), values.size());
    w.finish();
}

void writeNpyInt64(const std::filesystem::path& path, const std::vector<std::int64_t>& shape,
                   const std::vector<std::int64_t>& values) {
    static_assert(sizeof(std::int64_t) == 8, "int64 expected");
    if (elementCount(path, shape) != values.size())
        throw Error(path.string() + ": " + std::to_string(values.size()) + " values for a shape that holds " +
                    std::to_string(elementCount(path, shape)));
    AtomicFile file(path);
    file.write(headerFor(shape, "<i8"));
    file.write(values.data(), values.size() * sizeof(std::int64_t));
    file.commit();
}

void writeNpyBool(const std::filesystem::path& path, const std::vector<std::int64_t>& shape,
                  const std::vector<std::uint8_t>& values) {
    if (elementCount(path, shape) != values.size())
        throw Error(path.string() + ": " + std::to_string(values.size()) + " values for a shape that holds " +
                    std::to_string(elementCount(path, shape)));
    std::vector<std::uint8_t> bytes(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) bytes[i] = values[i] ? 1 : 0;  // numpy's bool is 0 or 1
    AtomicFile file(path);
    file.write(headerFor(shape, "|b1"));
    file.write(bytes.data(), bytes.size());
    file.commit();
}

}  // namespace attnscope
