#include "npy_read.h"

#include <cstring>
#include <fstream>
#include <regex>
#include <stdexcept>

namespace attnscope::testing {

NpyArray readNpy(const std::filesystem::path& file, std::vector<std::int64_t>* int64Values) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open " + file.string());
    char magic[8];
    in.read(magic, 8);
    if (!in || std::memcmp(magic, "\x93NUMPY", 6) != 0) throw std::runtime_error("not a .npy file");
    std::uint32_t headerLen = 0;
    if (magic[6] == 1) {
        unsigned char b[2];
        in.read(reinterpret_cast<char*>(b), 2);
        headerLen = b[0] | (b[1] << 8);
    } else {
        unsigned char b[4];
        in.read(reinterpret_cast<char*>(b), 4);
        headerLen = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<std::uint32_t>(b[3]) << 24);
    }
    std::string header(headerLen, '\0');
    in.read(header.data(), headerLen);
    if ((10 + headerLen) % 64 != 0 && magic[6] == 1) throw std::runtime_error("header not 64-byte aligned");
    NpyArray a;
    std::smatch m;
    if (!std::regex_search(header, m, std::regex("'descr':\\s*'([^']*)'"))) throw std::runtime_error("no descr");
    a.descr = m[1];
    if (!std::regex_search(header, m, std::regex("'fortran_order':\\s*(True|False)")))
        throw std::runtime_error("no order");
    a.fortranOrder = m[1] == "True";
    if (!std::regex_search(header, m, std::regex("'shape':\\s*\\(([^)]*)\\)"))) throw std::runtime_error("no shape");
    std::string dims = m[1];
    std::int64_t count = 1;
    const std::regex number("\\d+");
    for (std::sregex_iterator it(dims.begin(), dims.end(), number), end; it != end; ++it) {
        a.shape.push_back(std::stoll(it->str()));
        count *= a.shape.back();
    }
    if (int64Values) {
        if (a.descr != "<i8") throw std::runtime_error("descr is " + a.descr);
        int64Values->resize(static_cast<std::size_t>(count));
        in.read(reinterpret_cast<char*>(int64Values->data()), count * 8);
    } else {
        if (a.descr != "<f4") throw std::runtime_error("descr is " + a.descr);
        a.values.resize(static_cast<std::size_t>(count));
        in.read(reinterpret_cast<char*>(a.values.data()), count * 4);
    }
    if (!in) throw std::runtime_error("truncated data");
    in.peek();
    if (!in.eof()) throw std::runtime_error("bytes after the data");
    return a;
}

}  // namespace attnscope::testing
