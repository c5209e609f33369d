#include "headers/file_view.hpp"
#include "support/hex.hpp"

#include <openssl/evp.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <unordered_map>

namespace cudacore::detail {
namespace {

std::int64_t nanoseconds(const struct ::timespec& time) {
    return static_cast<std::int64_t>(time.tv_sec) * 1'000'000'000 + time.tv_nsec;
}

FileStamp stamp_of(const struct ::stat& info) {
    return FileStamp{static_cast<std::uint64_t>(info.st_dev), static_cast<std::uint64_t>(info.st_ino),
                     static_cast<std::uint64_t>(info.st_size), nanoseconds(info.st_mtim),
                     nanoseconds(info.st_ctim)};
}

// The stamp of whatever is at `path` (a folder too), or nullopt.
std::optional<FileStamp> any_stamp(const std::string& path) {
    struct ::stat info {};
    if (::stat(path.c_str(), &info) != 0) return std::nullopt;
    return stamp_of(info);
}

std::string sha256_hex(std::string_view bytes) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    if (EVP_Digest(bytes.data(), bytes.size(), digest, &size, EVP_sha256(), nullptr) != 1) return {};
    return hex_of(digest, size);
}

bool settled_at(const FileStamp& stamp) {
    const std::int64_t now_ns = static_cast<std::int64_t>(std::time(nullptr)) * 1'000'000'000;
    return now_ns - std::max(stamp.mtime_ns, stamp.ctime_ns) > 2'000'000'000;
}

// The digests this process made, by path; never destroyed (usable from static destructors).
class HeaderDigests {
public:
    std::optional<FileDigest> digest(const std::string& path) {
        const std::optional<FileStamp> stamp = file_stamp(path);
        if (!stamp) return std::nullopt;
        {
            std::lock_guard lock(mutex_);
            if (auto it = known_.find(path); it != known_.end() && it->second.stamp == *stamp)
                return it->second;
        }
        const std::optional<std::string> contents = read_whole_file(path);
        if (!contents) return std::nullopt;
        FileDigest digest{*stamp, settled_at(*stamp), sha256_hex(*contents)};
        if (digest.settled) {  // an unsettled stamp is never trusted: such files are read again
            std::lock_guard lock(mutex_);
            known_[path] = digest;
        }
        return digest;
    }

private:
    std::mutex mutex_;
    std::map<std::string, FileDigest> known_;
};

HeaderDigests& header_digests() {
    static auto* digests = new HeaderDigests;
    return *digests;
}

// One read of a file: its bytes and the stamp it had once they were read (fstat after the read,
// so a write during the read shows in the stamp).
struct FileRead {
    std::string bytes;
    FileStamp stamp;
};

std::optional<FileRead> read_with_stamp(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    FileRead read;
    char buffer[1 << 16];
    bool ok = true;
    for (;;) {
        const ssize_t got = ::read(fd, buffer, sizeof buffer);
        if (got == 0) break;
        if (got < 0) {
            if (errno == EINTR) continue;
            ok = false;
            break;
        }
        read.bytes.append(buffer, static_cast<std::size_t>(got));
    }
    struct ::stat info {};
    ok = ok && ::fstat(fd, &info) == 0 && S_ISREG(info.st_mode);
    ::close(fd);
    if (!ok) return std::nullopt;
    read.stamp = stamp_of(info);
    return read;
}

// Checks, for a view, that what it looked at held still since the compile began.
class StillSince {
public:
    explicit StillSince(const CompileStart& start) : began_ns_(start.began_ns) {}

    // A file read (or stat'ed) for the view, and its folder.
    void file(const std::string& path, const FileStamp& stamp) {
        if (too_new(stamp)) note(path, "was changed at or after the compile began");
        folder_of(path);
    }
    // A path a lookup tried and did not find: its nearest existing folder gained or lost no entry.
    void absent(const std::string& path) { folder_of(path); }

    std::string changed;

private:
    bool too_new(const FileStamp& stamp) const {
        return stamp.mtime_ns >= began_ns_ || stamp.ctime_ns >= began_ns_;
    }
    void note(const std::string& path, const char* what) {
        if (changed.empty()) changed = "'" + path + "' " + what;
    }
    // The nearest existing folder above `path`: an entry made, removed or renamed there (a header
    // created and removed again, a subfolder swapped) changes its mtime and ctime.
    void folder_of(const std::string& path) {
        for (std::string folder = parent(path); !folder.empty(); folder = parent(folder)) {
            auto [it, fresh] = folders_.try_emplace(folder);
            if (fresh) it->second = any_stamp(folder);
            if (!it->second) continue;  // missing: its parent decides
            if (fresh && too_new(*it->second)) note(folder, "(a folder searched) changed at or after the compile began");
            return;
        }
    }
    static std::string parent(const std::string& path) {
        const std::size_t slash = path.rfind('/');
        if (slash == std::string::npos || path == "/") return {};
        return slash == 0 ? "/" : path.substr(0, slash);
    }

    std::int64_t began_ns_;
    std::unordered_map<std::string, std::optional<FileStamp>> folders_;
};

}  // namespace

std::optional<FileStamp> file_stamp(const std::string& path) {
    struct ::stat info {};
    if (::stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return std::nullopt;
    return stamp_of(info);
}

std::optional<std::string> read_whole_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    std::string contents((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) return std::nullopt;
    return contents;
}

std::optional<FileDigest> file_digest(const std::string& path) {
    return header_digests().digest(path);
}

CompileStart compile_start(const IncludeSearch& search) {
    CompileStart start;
    // File times are the kernel's coarse clock, which runs up to a tick (or a little more)
    // behind the real time, or the real time itself (fine-grained times). A file written before
    // this call is stamped before the real time now; the compile starts once the coarse clock
    // has passed that time too, so a file written after the start is stamped at it or later. The
    // wait is the coarse clock's lag, a few ms.
    struct ::timespec now {};
    ::clock_gettime(CLOCK_REALTIME, &now);
    start.began_ns = nanoseconds(now);
    for (int waited = 0;; ++waited) {
        ::clock_gettime(CLOCK_REALTIME_COARSE, &now);
        if (nanoseconds(now) >= start.began_ns) break;
        if (waited == 250) {  // 50 ms: a coarse clock this far behind starts the compile now
            start.began_ns = nanoseconds(now);
            break;
        }
        const struct ::timespec pause {0, 200'000};
        ::nanosleep(&pause, nullptr);
    }
    start.folders.emplace_back(search.main_directory, any_stamp(search.main_directory));
    for (const auto& folder : search.directories) start.folders.emplace_back(folder, any_stamp(folder));
    return start;
}

// Long because: one pass over the closure, its headers and its lookups, each checked in turn.
FileView take_file_view(const IncludeSearch& search, const std::string& main_name,
                        std::string_view main_source, const std::vector<std::string>& headers_read,
                        const std::vector<std::string>& toolkit_directories,
                        const CompileStart& start) {
    FileView view;
    StillSince still(start);
    std::map<std::string, FileDigest> read_now;  // the files the closure read, outside the toolkit
    const FileReader reader = [&](const std::string& path) -> std::optional<std::string> {
        if (inside_any(path, toolkit_directories)) return read_whole_file(path);
        std::optional<FileRead> read = read_with_stamp(path);
        if (!read) return std::nullopt;
        still.file(path, read->stamp);
        read_now[path] = FileDigest{read->stamp, settled_at(read->stamp), sha256_hex(read->bytes)};
        return std::move(read->bytes);
    };
    IncludeLookups lookups =
        include_lookups(search, main_name, main_source, headers_read, toolkit_directories, reader);
    if (!lookups.refusal.empty()) {
        view.refusal = "where it looked for headers cannot be known: " + lookups.refusal;
        return view;
    }
    for (const auto& header : lookups.headers) {
        std::optional<FileDigest> digest;
        if (auto it = read_now.find(header); it != read_now.end()) digest = it->second;
        else digest = file_digest(header);  // a toolkit header: fixed while the process runs
        if (!digest) {
            view.refusal = "the header '" + header + "' it read cannot be read back";
            return view;
        }
        view.headers.emplace_back(header, std::move(*digest));
    }
    LookupStates states;
    for (auto& path : lookups.paths) {
        std::string state = states.state(path);
        if (!inside_any(path, toolkit_directories) && !read_now.count(path)) {
            if (state == "absent") still.absent(path);
            else if (const std::optional<FileStamp> stamp = any_stamp(path)) still.file(path, *stamp);
        }
        view.lookups.emplace_back(std::move(path), std::move(state));
    }
    for (const auto& [folder, then] : start.folders) {
        const std::optional<FileStamp> now = any_stamp(folder);
        const bool same = now && then && now->device == then->device && now->inode == then->inode;
        if (!same && (now || then) && still.changed.empty())
            still.changed = "the search folder '" + folder + "' is another folder than when the compile began";
    }
    view.changed = std::move(still.changed);
    return view;
}

namespace {

// What view_of_record saw of the toolkit's files in this process.
struct ToolkitViews {
    std::mutex mutex;
    std::unordered_map<std::string, FileDigest> headers;
    std::unordered_map<std::string, std::string> lookups;  // path -> lookup_state()
};

ToolkitViews& toolkit_views() {
    static auto* views = new ToolkitViews;  // leaked: lookups may run during exit
    return *views;
}

}  // namespace

FileView view_of_record(const std::vector<std::string>& headers,
                        const std::vector<std::string>& lookups,
                        const std::vector<std::string>& toolkit_directories) {
    FileView view;
    ToolkitViews& toolkit = toolkit_views();
    for (const auto& header : headers) {
        const bool in_toolkit = inside_any(header, toolkit_directories);
        if (in_toolkit) {
            std::lock_guard lock(toolkit.mutex);
            if (auto it = toolkit.headers.find(header); it != toolkit.headers.end()) {
                view.headers.emplace_back(header, it->second);
                continue;
            }
        }
        std::optional<FileDigest> digest = file_digest(header);
        if (!digest) {
            view.refusal = "the header '" + header + "' cannot be read";
            return view;
        }
        if (in_toolkit) {
            std::lock_guard lock(toolkit.mutex);
            toolkit.headers.emplace(header, *digest);
        }
        view.headers.emplace_back(header, std::move(*digest));
    }
    LookupStates states;
    for (const auto& path : lookups) {
        if (!inside_any(path, toolkit_directories)) {
            view.lookups.emplace_back(path, states.state(path));
            continue;
        }
        {
            std::lock_guard lock(toolkit.mutex);
            if (auto it = toolkit.lookups.find(path); it != toolkit.lookups.end()) {
                view.lookups.emplace_back(path, it->second);
                continue;
            }
        }
        std::string state = states.state(path);
        {
            std::lock_guard lock(toolkit.mutex);
            toolkit.lookups.emplace(path, state);
        }
        view.lookups.emplace_back(path, std::move(state));
    }
    return view;
}

void forget_toolkit_views() {
    ToolkitViews& toolkit = toolkit_views();
    std::lock_guard lock(toolkit.mutex);
    toolkit.headers.clear();
    toolkit.lookups.clear();
}

}  // namespace cudacore::detail
