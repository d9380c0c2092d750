// The one atomic writer (attnscope/io/atomic_file.h) against a file tree of every kind of entry,
// made in this process's scratch folder and nowhere else: regular files, a folder, a FIFO, a
// socket, device nodes (as root: the kinds of /dev/null, /dev/zero and /dev/full, made here, not
// /dev's own), and symbolic links to each of them, chains, a loop and dangling links. Every
// link points inside the tree, so a broken rule could only ever replace an entry of this tree.
//
// The input: byte 0 picks an entry, byte 1 a suffix ("", "/x", "/.", "/new/x"), byte 2 whether
// the writer commits or is dropped; the rest is what is written. Checked after every call
// (__builtin_trap on a violation):
//   - an existing non-regular file at the path (links followed) is refused with
//     "PATH: not a regular file", and every entry of the tree keeps its kind;
//   - a commit that succeeds leaves exactly the bytes at the path, read back through it;
//   - a writer dropped or refused leaves a regular target's bytes as they were;
//   - no temporary ("*.tmp-*") is left anywhere in the tree.
#include "fuzz_util.h"

#include "attnscope/io/atomic_file.h"
#include "attnscope/runtime/error.h"

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>

namespace {

namespace fs = std::filesystem;

const fs::path& tree() {
    static const fs::path dir = attnscope::fuzz::scratch() / "tree";
    return dir;
}

bool makeSocket(const fs::path& path) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0) return false;
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    const std::string p = path.string();
    if (p.size() >= sizeof addr.sun_path) return ::close(fd), false;
    p.copy(addr.sun_path, p.size());
    const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    ::close(fd);
    return ok;
}

// The tree, made again whenever an entry is missing or changed kind (only a broken rule changes
// one; a regular file's bytes may change). Returns the entries' names and kinds.
const std::map<std::string, fs::file_type>& makeTree() {
    static std::map<std::string, fs::file_type> kinds;
    static bool madeOnce = false;
    bool intact = madeOnce;
    for (const auto& [name, kind] : kinds)
        if (fs::symlink_status(tree() / name).type() != kind) intact = false;
    if (intact) return kinds;
    fs::remove_all(tree());
    fs::create_directories(tree() / "dir");
    attnscope::fuzz::writeBytes(tree() / "file", "old");
    attnscope::fuzz::writeBytes(tree() / "dir" / "inner", "inner");
    ::mkfifo((tree() / "fifo").c_str(), 0600);
    makeSocket(tree() / "sock");
    // Device nodes need CAP_MKNOD; without it those entries are simply absent.
    ::mknod((tree() / "null").c_str(), S_IFCHR | 0600, ::makedev(1, 3));
    ::mknod((tree() / "zero").c_str(), S_IFCHR | 0600, ::makedev(1, 5));
    ::mknod((tree() / "full").c_str(), S_IFCHR | 0600, ::makedev(1, 7));
    const std::pair<const char*, const char*> links[] = {
            {"l-file", "file"},     {"l-dir", "dir"},         {"l-fifo", "fifo"},           {"l-sock", "sock"},
            {"l-null", "null"},     {"l-full", "full"},       {"l-zero", "zero"},           {"l-l-file", "l-file"},
            {"l-l-fifo", "l-fifo"}, {"l-missing", "missing"}, {"l-missing-dir", "nodir/x"}, {"loop-a", "loop-b"},
            {"loop-b", "loop-a"},   {"l-inner", "dir/inner"}, {"dir/l-up", "../file"}};
    for (const auto& [name, to] : links) fs::create_symlink(to, tree() / name);
    if (!madeOnce)  // no device node or FIFO is left in the temporary folder after the run
        std::atexit([] {
            std::error_code ec;
            fs::remove_all(tree(), ec);
        });
    kinds.clear();
    for (const auto& e : fs::recursive_directory_iterator(tree()))
        kinds[e.path().lexically_relative(tree()).string()] = e.symlink_status().type();
    madeOnce = true;
    return kinds;
}

std::optional<std::string> bytesAt(const fs::path& p) {
    std::error_code ec;
    if (!fs::is_regular_file(p, ec)) return std::nullopt;
    std::ifstream in(p, std::ios::binary);
    return std::string{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 3) return 0;
    const auto& kinds = makeTree();
    std::vector<std::string> entries;
    for (const auto& [name, kind] : kinds) entries.push_back(name);
    entries.push_back("new");
    const char* suffixes[] = {"", "/x", "/.", "/new/x"};
    const fs::path path = tree() / (entries[data[0] % entries.size()] + suffixes[data[1] % 4]);
    const bool commit = data[2] & 1;
    const std::string_view bytes = attnscope::fuzz::asView(data + 3, size - 3);

    std::error_code ec;
    const fs::file_status before = fs::status(path, ec);  // links followed
    const bool special = !ec && fs::exists(before) && !fs::is_regular_file(before);
    const std::optional<std::string> old = bytesAt(path);
    bool committed = false;
    std::string error;
    try {
        attnscope::AtomicFile file(path);
        file.write(bytes);
        if (commit) {
            file.commit();
            committed = true;
        }
    } catch (const attnscope::Error& e) {
        error = e.what();
    }
    if (special && (committed || error != path.string() + ": not a regular file")) __builtin_trap();
    if (committed && bytesAt(path) != std::string(bytes)) __builtin_trap();
    if (!committed && old && bytesAt(path) != old) __builtin_trap();
    for (const auto& e : fs::recursive_directory_iterator(tree())) {
        const std::string name = e.path().lexically_relative(tree()).string();
        if (name.find(".tmp-") != std::string::npos) __builtin_trap();
        const auto known = kinds.find(name);
        if (known != kinds.end() && e.symlink_status().type() != known->second) __builtin_trap();
    }
    // What a commit created ("new", "dir/new/..." cannot exist: folders are not created) goes,
    // so the tree is the same for the next input.
    fs::remove(tree() / "new", ec);
    fs::remove(tree() / "missing", ec);
    fs::remove(tree() / "dir" / "x", ec);
    return 0;
}
