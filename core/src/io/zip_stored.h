// The central directory of a zip archive held in memory (a mapped file), zip64 included: for each
// entry its name, compression method and where its bytes lie. Only what torch.save archives need:
// no multi-disk archives, no encryption. Entries are not decompressed; callers refuse compressed
// ones (torch.save stores every entry uncompressed, 64-byte aligned, so storages can be mapped).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attnscope::zip {

struct Entry {
    std::string name;
    std::uint16_t method = 0;    // 0 = stored
    std::uint64_t offset = 0;    // of the entry's data in the archive
    std::uint64_t size = 0;      // compressed size: the bytes at offset
    std::uint64_t unpacked = 0;  // uncompressed size
};

// Throws attnscope::Error "WHERE: ..." when the directory or a local header is malformed or an
// entry's bytes lie past the end; names appearing twice are an error too.
std::vector<Entry> readDirectory(std::string_view archive, const std::string& where);

}  // namespace attnscope::zip
