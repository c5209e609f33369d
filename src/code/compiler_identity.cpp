#include "code/compiler_identity.hpp"

#include "loader/compiler_apis.hpp"
#include "support/atomic_file.hpp"
#include "support/cache_directory.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <mutex>
#include <optional>
#include <sstream>
#include <vector>

namespace cudacore::detail {
namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t versions_file_limit = 64 * 1024;  // rewritten with one line beyond it

struct Known {
    std::mutex mutex;
    std::optional<std::string> version;  // as keys name it, once worked out
    // Compared with the opened library: it is opened once and never closed, so once is enough.
    bool confirmed = false;
};

Known& known(Compiler compiler) {
    static auto* all = new Known[2];  // leaked: read by keys made during exit
    return all[compiler == Compiler::nvrtc ? 0 : 1];
}

std::atomic<unsigned> generation{0};

// A file as the versions file names it: real path, device, inode, size, modification and change
// times (a change time cannot be set back, so a rewritten file never matches an old line).
std::optional<std::string> file_identity(const fs::path& real) {
    struct stat status {};
    if (::stat(real.c_str(), &status) != 0 || !S_ISREG(status.st_mode)) return std::nullopt;
    std::ostringstream out;
    out << real.string() << '\t' << status.st_dev << '\t' << status.st_ino << '\t' << status.st_size << '\t'
        << status.st_mtim.tv_sec << '.' << status.st_mtim.tv_nsec << '\t' << status.st_ctim.tv_sec << '.'
        << status.st_ctim.tv_nsec;
    return out.str();
}

// The versions files of the disk caches opened in this process (keep_compiler_versions_in).
struct VersionsFiles {
    std::mutex mutex;
    std::vector<fs::path> files;
};

VersionsFiles& versions_files() {
    static auto* files = new VersionsFiles;  // leaked: keys may be made during exit
    return *files;
}

std::vector<fs::path> known_versions_files() {
    VersionsFiles& all = versions_files();
    std::lock_guard lock(all.mutex);
    return all.files;
}

std::optional<std::string> version_in(const fs::path& file, const std::string& identity) {
    std::string text;
    try {
        text = read_file_bounded(file, versions_file_limit);
    } catch (...) {
        return std::nullopt;  // none yet, or unreadable: the library is opened instead
    }
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        const std::size_t tab = line.rfind('\t');
        if (tab == identity.size() && line.compare(0, tab, identity) == 0) return line.substr(tab + 1);
    }
    return std::nullopt;
}

std::optional<std::string> remembered_version(const std::string& identity) {
    for (const fs::path& file : known_versions_files())
        if (std::optional<std::string> version = version_in(file, identity)) return version;
    return std::nullopt;
}

// Appends a line to each versions file that lacks it (whole: one write of a few hundred bytes to
// a file opened to append, in a folder that exists: a removed cache is not made again); a file
// grown past its limit is replaced by that line. Failures leave the next process to open the
// library again.
void remember_version(const std::string& identity, const std::string& version) {
    const std::string line = identity + '\t' + version + '\n';
    for (const fs::path& file : known_versions_files()) {
        if (version_in(file, identity) == version) continue;
        try {
            std::error_code error;
            const std::uintmax_t size = fs::file_size(file, error);
            if (!error && size + line.size() > versions_file_limit) {
                write_file_atomically(file, line, 0600);
                continue;
            }
            const int fd = ::open(file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
            if (fd < 0) continue;
            [[maybe_unused]] const ssize_t written = ::write(fd, line.data(), line.size());
            ::close(fd);
        } catch (...) {
        }
    }
}

// The real file of the first candidate that is a file, or empty where the loader's search by
// soname decides.
fs::path library_file(const LibrarySearch& search) {
    for (const std::string& candidate : paths_to_try(search)) {
        if (candidate.find('/') == std::string::npos) return {};
        struct stat status {};
        if (::stat(candidate.c_str(), &status) != 0 || !S_ISREG(status.st_mode)) continue;
        std::error_code error;
        fs::path real = fs::canonical(candidate, error);
        return error ? fs::path() : real;
    }
    return {};
}

std::optional<std::string> version_from_file(const fs::path& real) {
    if (real.empty()) return std::nullopt;
    if (std::string version = version_from_library_name(real.filename().string()); !version.empty()) return version;
    const std::optional<std::string> identity = file_identity(real);
    return identity ? remembered_version(*identity) : std::nullopt;
}

// The version of the library where this process opened it (remembering it for the file, where
// its name does not say), else nullopt.
std::optional<std::string> opened_version(Compiler compiler) {
    std::string path, version;
    if (compiler == Compiler::nvrtc) {
        const NvrtcApi* api = nvrtc_if_opened();
        if (!api) return std::nullopt;
        path = api->path;
        version = std::to_string(api->major) + "." + std::to_string(api->minor);
    } else {
        const NvJitLinkApi* api = nvjitlink_if_opened();
        if (!api) return std::nullopt;
        path = api->path;
        version = std::to_string(api->major) + "." + std::to_string(api->minor);
    }
    if (path.find('/') != std::string::npos) {
        std::error_code error;
        const fs::path real = fs::canonical(path, error);
        if (!error && version_from_library_name(real.filename().string()).empty())
            if (const std::optional<std::string> identity = file_identity(real)) remember_version(*identity, version);
    }
    return version;
}

std::string version_by_opening(Compiler compiler) {
    try {
        if (compiler == Compiler::nvrtc) nvrtc();
        else if (!nvjitlink_available()) return "none";
        else nvjitlink();
    } catch (...) {
        return "none";
    }
    return opened_version(compiler).value_or("none");
}

// Takes the opened library's version where it differs from the one keys used, the first time it
// is asked after the library was opened (later calls read what that one found: no file touched).
std::optional<std::string> confirm(Compiler compiler) {
    Known& entry = known(compiler);
    {
        std::lock_guard lock(entry.mutex);
        if (entry.confirmed) return entry.version;
    }
    std::optional<std::string> opened = opened_version(compiler);
    if (!opened) return std::nullopt;
    std::lock_guard lock(entry.mutex);
    if (entry.confirmed) return entry.version;
    if (entry.version && *entry.version != *opened) generation.fetch_add(1, std::memory_order_acq_rel);
    entry.version = *opened;
    entry.confirmed = true;
    return opened;
}

}  // namespace

std::string version_from_library_name(const std::string& file_name) {
    const std::size_t so = file_name.find(".so.");
    if (so == std::string::npos) return "";
    const std::string rest = file_name.substr(so + 4);
    auto digits_end = [&](std::size_t from) {
        while (from < rest.size() && rest[from] >= '0' && rest[from] <= '9') ++from;
        return from;
    };
    const std::size_t major_end = digits_end(0);
    if (major_end == 0 || major_end >= rest.size() || rest[major_end] != '.') return "";
    const std::size_t minor_end = digits_end(major_end + 1);
    if (minor_end == major_end + 1 || (minor_end < rest.size() && rest[minor_end] != '.')) return "";
    return rest.substr(0, minor_end);
}

std::string compiler_version_in_keys(Compiler compiler) {
    Known& entry = known(compiler);
    {
        std::lock_guard lock(entry.mutex);
        if (entry.version) return *entry.version;
    }
    std::optional<std::string> version = confirm(compiler);
    if (!version) {
        version = version_from_file(library_file(compiler == Compiler::nvrtc ? nvrtc_search() : nvjitlink_search()));
        if (!version) version = version_by_opening(compiler);
    }
    std::lock_guard lock(entry.mutex);
    if (!entry.version) entry.version = *version;
    return *entry.version;
}

void keep_compiler_versions_in(const std::filesystem::path& cache_folder) {
    const fs::path file = cache_folder / kCompilerVersionsFile;
    VersionsFiles& all = versions_files();
    std::lock_guard lock(all.mutex);
    for (const fs::path& known_file : all.files)
        if (known_file == file) return;
    all.files.push_back(file);
}

unsigned compiler_identity_generation() noexcept { return generation.load(std::memory_order_acquire); }

unsigned confirm_compiler_identity() noexcept {
    try {
        confirm(Compiler::nvrtc);
        confirm(Compiler::nvjitlink);
    } catch (...) {
    }
    return compiler_identity_generation();
}

}  // namespace cudacore::detail
