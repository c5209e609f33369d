#include "code/compiler_identity.hpp"

#include "code/compiler_build.hpp"

#include "loader/compiler_apis.hpp"
#include "support/atomic_file.hpp"
#include "support/input_file.hpp"
#include "support/cache_directory.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
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
    fs::path file;                        // the real file it was worked out from, if any
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
            // Not blocking, and only into a regular file: a FIFO under this name would hold the
            // open (and the compile) until a reader came.
            const int fd =
                ::open(file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
            if (fd < 0) continue;
            struct stat status {};
            if (::fstat(fd, &status) == 0 && S_ISREG(status.st_mode)) {
                [[maybe_unused]] const ssize_t written = ::write(fd, line.data(), line.size());
            }
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

// The opened library: its real file (empty where the loader found it by soname) and the release
// it answers ("13.0").
struct Opened {
    fs::path real;
    std::string release;
};

std::optional<Opened> opened(Compiler compiler) {
    std::string path;
    Opened library;
    if (compiler == Compiler::nvrtc) {
        const NvrtcApi* api = nvrtc_if_opened();
        if (!api) return std::nullopt;
        path = api->path;
        library.release = std::to_string(api->major) + "." + std::to_string(api->minor);
    } else {
        const NvJitLinkApi* api = nvjitlink_if_opened();
        if (!api) return std::nullopt;
        path = api->path;
        library.release = std::to_string(api->major) + "." + std::to_string(api->minor);
    }
    if (path.find('/') != std::string::npos) {
        std::error_code error;
        library.real = fs::canonical(path, error);
        if (error) library.real.clear();
    }
    return library;
}

// "13.0" of "13.0.88".
std::string release_of(const std::string& build) { return build.substr(0, build.rfind('.')); }

// The build of the opened library: what its file tells (name, or what was remembered for it) where
// that is of the release the library answers, else asked (compiler_build.hpp) and remembered for
// its file; its release alone where it names no build.
std::string opened_build(Compiler compiler, const Opened& library) {
    std::optional<std::string> build = version_from_file(library.real);
    if (!build || release_of(*build) != library.release) {
        build = compiler == Compiler::nvrtc ? nvrtc_build(nvrtc()) : nvjitlink_build(nvjitlink());
        if (!build || release_of(*build) != library.release) return library.release;
    }
    // Written to each versions file that lacks it, where the name carries none.
    if (!library.real.empty() && version_from_library_name(library.real.filename().string()).empty())
        if (const std::optional<std::string> identity = file_identity(library.real)) remember_version(*identity, *build);
    return *build;
}

std::optional<std::string> confirm(Compiler compiler);

std::string version_by_opening(Compiler compiler) {
    try {
        if (compiler == Compiler::nvrtc) nvrtc();
        else if (!nvjitlink_available()) return "none";
        else nvjitlink();
    } catch (const std::bad_alloc&) {
        throw;
    } catch (...) {
        return "none";
    }
    return confirm(compiler).value_or("none");  // the opened library's build, now confirmed
}

// Checks the version keys used against the opened library, the first time it is asked after the
// library was opened (later calls read what that one found: no file touched): where the library
// answers another release, or is another file than the one keys named, its own build replaces it.
std::optional<std::string> confirm(Compiler compiler) {
    Known& entry = known(compiler);
    {
        std::lock_guard lock(entry.mutex);
        if (entry.confirmed) return entry.version;
    }
    const std::optional<Opened> library = opened(compiler);
    if (!library) return std::nullopt;
    std::optional<std::string> keys_used;
    fs::path keys_file;
    {
        std::lock_guard lock(entry.mutex);
        keys_used = entry.version;
        keys_file = entry.file;
    }
    std::string build;
    if (keys_used && keys_file == library->real && !keys_file.empty() && release_of(*keys_used) == library->release)
        build = *keys_used;  // the very file keys named, of the release it answers
    else
        build = opened_build(compiler, *library);
    std::lock_guard lock(entry.mutex);
    if (entry.confirmed) return entry.version;
    if (entry.version && *entry.version != build) generation.fetch_add(1, std::memory_order_acq_rel);
    entry.version = build;
    entry.file = library->real;
    entry.confirmed = true;
    return build;
}

}  // namespace

std::string version_from_library_name(const std::string& file_name) {
    const std::size_t so = file_name.find(".so.");
    if (so == std::string::npos) return "";
    const std::string_view rest = std::string_view(file_name).substr(so + 4);
    // A build, and nothing after it.
    const std::string_view build = build_at_start(rest);
    return build.size() == rest.size() ? std::string(build) : "";
}

std::string compiler_version_in_keys(Compiler compiler) {
    Known& entry = known(compiler);
    {
        std::lock_guard lock(entry.mutex);
        if (entry.version) return *entry.version;
    }
    std::optional<std::string> version = confirm(compiler);  // opened already: its build
    fs::path file;
    if (!version) {
        file = library_file(compiler == Compiler::nvrtc ? nvrtc_search() : nvjitlink_search());
        version = version_from_file(file);
        if (!version) version = version_by_opening(compiler);
    }
    std::lock_guard lock(entry.mutex);
    if (!entry.version) {
        entry.version = *version;
        entry.file = file;
    }
    return *entry.version;
}

void keep_compiler_versions_in(const std::filesystem::path& cache_folder) {
    const fs::path file = cache_folder / kCompilerBuildsFile;
    {
        VersionsFiles& all = versions_files();
        std::lock_guard lock(all.mutex);
        for (const fs::path& known_file : all.files)
            if (known_file == file) return;
        all.files.push_back(file);
    }
    // What this process knows already goes there too (a cache opened after the first key, as
    // `cudacore cache import` opens its folder): the next process there need not ask.
    for (const Compiler compiler : {Compiler::nvrtc, Compiler::nvjitlink}) {
        Known& entry = known(compiler);
        std::optional<std::string> build;
        fs::path library;
        {
            std::lock_guard lock(entry.mutex);
            build = entry.version;
            library = entry.file;
        }
        if (!build || library.empty() || std::count(build->begin(), build->end(), '.') != 2 ||
            !version_from_library_name(library.filename().string()).empty())
            continue;
        if (const std::optional<std::string> identity = file_identity(library)) remember_version(*identity, *build);
    }
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
