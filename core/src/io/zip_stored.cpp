// Zip central directory reader (APPNOTE.TXT 4.3: end of central directory, zip64 locator and
// record, central file headers, local file headers, the zip64 extended information field).
#include "io/zip_stored.h"

#include "attnscope/runtime/error.h"

#include <set>

namespace attnscope::zip {

namespace {

constexpr std::uint32_t kEndSig = 0x06054b50, kEnd64Sig = 0x06064b50, kLocator64Sig = 0x07064b50;
constexpr std::uint32_t kCentralSig = 0x02014b50, kLocalSig = 0x04034b50;
constexpr std::size_t kEndSize = 22, kLocatorSize = 20, kEnd64Size = 56, kCentralSize = 46, kLocalSize = 30;

struct Bytes {
    std::string_view a;
    const std::string& where;

    [[noreturn]] void fail(const std::string& what) const { throw Error(where + ": zip archive: " + what); }
    // n little-endian bytes at `at`, which the caller has checked lie inside.
    std::uint64_t le(std::uint64_t at, int n) const {
        std::uint64_t r = 0;
        for (int i = 0; i < n; ++i) r |= static_cast<std::uint64_t>(static_cast<unsigned char>(a[at + i])) << (8 * i);
        return r;
    }
    void need(std::uint64_t at, std::uint64_t n, const char* what) const {
        if (at > a.size() || n > a.size() - at)
            fail(std::string(what) + " at byte " + std::to_string(at) + " runs past the end of the file (" +
                 std::to_string(a.size()) + " bytes; truncated?)");
    }
};

// The last end-of-central-directory record (the archive comment may follow it).
std::uint64_t findEnd(const Bytes& z) {
    if (z.a.size() < kEndSize) z.fail("no end of central directory record (file truncated?)");
    const std::uint64_t last = z.a.size() - kEndSize;
    const std::uint64_t first = last > 0xFFFF ? last - 0xFFFF : 0;
    for (std::uint64_t at = last + 1; at-- > first;)
        if (z.le(at, 4) == kEndSig && at + kEndSize + z.le(at + 20, 2) == z.a.size()) return at;
    z.fail("no end of central directory record (file truncated?)");
}

// Replaces the 0xFFFF.... fields of a central header by the zip64 extra field's values.
void readZip64Extra(const Bytes& z, std::uint64_t extra, std::uint64_t extraLen, Entry& e, bool needUnpacked,
                    bool needSize, bool needOffset) {
    std::uint64_t at = extra;
    while (at + 4 <= extra + extraLen) {
        const std::uint64_t id = z.le(at, 2), len = z.le(at + 2, 2);
        if (at + 4 + len > extra + extraLen) z.fail("entry '" + e.name + "': an extra field runs past its header");
        if (id == 1) {
            std::uint64_t p = at + 4;
            auto next = [&](std::uint64_t& field) {
                if (p + 8 > at + 4 + len) z.fail("entry '" + e.name + "': the zip64 extra field is too short");
                field = z.le(p, 8);
                p += 8;
            };
            if (needUnpacked) next(e.unpacked);
            if (needSize) next(e.size);
            if (needOffset) next(e.offset);
            return;
        }
        at += 4 + len;
    }
    z.fail("entry '" + e.name + "': sizes need a zip64 extra field and there is none");
}

}  // namespace

std::vector<Entry> readDirectory(std::string_view archive, const std::string& where) {
    const Bytes z{archive, where};
    const std::uint64_t end = findEnd(z);
    std::uint64_t count = z.le(end + 10, 2), cdSize = z.le(end + 12, 4), cdOffset = z.le(end + 16, 4);
    if (z.le(end + 4, 2) != 0 || z.le(end + 6, 2) != 0) z.fail("multi-disk archives are not supported");
    if (count == 0xFFFF || cdSize == 0xFFFFFFFF || cdOffset == 0xFFFFFFFF) {
        if (end < kLocatorSize || z.le(end - kLocatorSize, 4) != kLocator64Sig)
            z.fail("the end record asks for zip64 but there is no zip64 locator");
        const std::uint64_t at = z.le(end - kLocatorSize + 8, 8);
        z.need(at, kEnd64Size, "the zip64 end of central directory record");
        if (z.le(at, 4) != kEnd64Sig) z.fail("no zip64 end of central directory record where the locator says");
        count = z.le(at + 32, 8);
        cdSize = z.le(at + 40, 8);
        cdOffset = z.le(at + 48, 8);
    }
    z.need(cdOffset, cdSize, "the central directory");
    if (count > cdSize / kCentralSize)
        z.fail(std::to_string(count) + " entries cannot fit a central directory of " + std::to_string(cdSize) +
               " bytes");

    std::vector<Entry> entries;
    std::set<std::string> names;
    std::uint64_t at = cdOffset;
    const std::uint64_t cdEnd = cdOffset + cdSize;
    for (std::uint64_t i = 0; i < count; ++i) {
        if (at + kCentralSize > cdEnd || z.le(at, 4) != kCentralSig)
            z.fail("central directory entry " + std::to_string(i) + " is malformed");
        Entry e;
        const std::uint64_t flags = z.le(at + 8, 2);
        e.method = static_cast<std::uint16_t>(z.le(at + 10, 2));
        e.size = z.le(at + 20, 4);
        e.unpacked = z.le(at + 24, 4);
        const std::uint64_t nameLen = z.le(at + 28, 2), extraLen = z.le(at + 30, 2), commentLen = z.le(at + 32, 2);
        e.offset = z.le(at + 42, 4);  // of the local header, for now
        if (at + kCentralSize + nameLen + extraLen + commentLen > cdEnd)
            z.fail("central directory entry " + std::to_string(i) + " runs past the directory");
        e.name = std::string(archive.substr(at + kCentralSize, nameLen));
        for (char& c : e.name)
            if (static_cast<unsigned char>(c) < 0x20) c = '?';
        if (flags & 1) z.fail("entry '" + e.name + "' is encrypted");
        const bool u = e.unpacked == 0xFFFFFFFF, s = e.size == 0xFFFFFFFF, o = e.offset == 0xFFFFFFFF;
        if (u || s || o) readZip64Extra(z, at + kCentralSize + nameLen, extraLen, e, u, s, o);
        at += kCentralSize + nameLen + extraLen + commentLen;

        z.need(e.offset, kLocalSize, ("entry '" + e.name + "': the local header").c_str());
        if (z.le(e.offset, 4) != kLocalSig) z.fail("entry '" + e.name + "': no local header where the directory says");
        const std::uint64_t data = e.offset + kLocalSize + z.le(e.offset + 26, 2) + z.le(e.offset + 28, 2);
        z.need(data, e.size, ("entry '" + e.name + "': the data").c_str());
        e.offset = data;
        if (!names.insert(e.name).second) z.fail("entry '" + e.name + "' appears twice");
        entries.push_back(std::move(e));
    }
    return entries;
}

}  // namespace attnscope::zip
