#include "attnscope/io/npy.h"

#include "attnscope/runtime/error.h"

#include <unistd.h>

namespace attnscope {

namespace {

std::string headerFor(const std::vector<std::int64_t>& shape) {
    std::string dims;
    for (std::size_t i = 0; i < shape.size(); ++i) dims += std::to_string(shape[i]) + (shape.size() == 1 || i + 1 < shape.size() ? "," : "");
    std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
    // magic(6) + version(2) + length(2) + dict + padding + '\n' must be a multiple of 64.
    const std::size_t unpadded = 10 + dict.size() + 1;
    dict.append((64 - unpadded % 64) % 64, ' ');
    dict += '\n';
    std::string out("\x93NUMPY\x01\x00", 8);
    out += static_cast<char>(dict.size() & 0xff);
    out += static_cast<char>((dict.size() >> 8) & 0xff);
    return out + dict;
}

}  // namespace

NpyWriter::NpyWriter(std::filesystem::path path, std::vector<std::int64_t> shape)
    : path_(std::move(path)), shape_(std::move(shape)) {
    expected_ = 1;
    for (auto s : shape_) {
        if (s < 0) throw Error(path_.string() + ": negative dimension in array shape");
        expected_ *= static_cast<std::uint64_t>(s);
    }
    tmp_ = path_;
    tmp_ += ".tmp-" + std::to_string(::getpid());
    out_.open(tmp_, std::ios::binary | std::ios::trunc);
    if (!out_) throw Error(path_.string() + ": cannot write here (check that the folder exists and is writable)");
    const std::string header = headerFor(shape_);
    out_.write(header.data(), static_cast<std::streamsize>(header.size()));
}

NpyWriter::~NpyWriter() {
    if (!finished_) {
        out_.close();
        std::error_code ec;
        std::filesystem::remove(tmp_, ec);
    }
}

void NpyWriter::append(const float* values, std::size_t count) {
    static_assert(sizeof(float) == 4, "float32 expected");
    out_.write(reinterpret_cast<const char*>(values), static_cast<std::streamsize>(count * sizeof(float)));
    written_ += count;
    if (!out_) throw Error(path_.string() + ": write failed (disk full?)");
}

void NpyWriter::finish() {
    if (written_ != expected_)
        throw Error(path_.string() + ": wrote " + std::to_string(written_) + " values but the shape holds " +
                    std::to_string(expected_));
    out_.flush();
    out_.close();
    if (!out_) throw Error(path_.string() + ": write failed");
    std::error_code ec;
    std::filesystem::rename(tmp_, path_, ec);
    if (ec) throw Error(path_.string() + ": cannot be written: " + ec.message());
    finished_ = true;
}

void writeNpy(const std::filesystem::path& path, const std::vector<std::int64_t>& shape, const std::vector<float>& values) {
    NpyWriter w(path, shape);
    w.append(values.data(), values.size());
    w.finish();
}

}  // namespace attnscope
