#include "code/debug_source.hpp"

#include "cudacore/compile_errors.hpp"
#include "cudacore/errors.hpp"
#include "support/atomic_file.hpp"
#include "support/input_file.hpp"
#include "support/temporary_directory.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <xxhash.h>  // inlined into the library (XXH_INLINE_ALL, set in CMakeLists.txt)

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <system_error>

namespace cudacore::detail {

namespace {

constexpr const char* kFolderVariable = "CUDACORE_DEBUG_SOURCE_DIR";

bool is_debug_flag(const std::string& flag) {
    return flag == "-G" || flag == "--device-debug" || flag == "-lineinfo" ||
           flag == "--generate-line-info";
}

std::string hex_digest(const std::string& source) {
    const XXH128_hash_t hash = XXH3_128bits(source.data(), source.size());
    static constexpr char digits[] = "0123456789abcdef";
    std::string out;
    for (const std::uint64_t half : {hash.high64, hash.low64}) {
        for (int shift = 60; shift >= 0; shift -= 4) out.push_back(digits[(half >> shift) & 15]);
    }
    return out;
}

// A program name as one file name: no folder separators, no control characters, not "." or "..".
std::string file_name_of(const std::string& name) {
    std::string out = name;
    std::replace_if(
        out.begin(), out.end(),
        [](char c) { return c == '/' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }, '_');
    if (out.empty() || out == "." || out == "..") out = "program" + out;
    return out;
}

[[noreturn]] void fail(const std::string& step, int error, const std::filesystem::path& path,
                       const ProgramOptions& options) {
    throw CompilerApiError("writing the debug source (" + step + ")", error, std::strerror(error),
                           "program '" + options.name + "', " + path.string());
}

bool uses_default_folder(const ProgramOptions& options) {
    const char* variable = std::getenv(kFolderVariable);
    return !options.debug_source_dir && !(variable && *variable);
}

}  // namespace

bool wants_debug_source(const ProgramOptions& options) {
    return options.debug.value_or(false) || options.lineinfo.value_or(false) ||
           std::any_of(options.extra_flags.begin(), options.extra_flags.end(), is_debug_flag);
}

std::filesystem::path debug_source_folder(const ProgramOptions& options) {
    std::filesystem::path folder;
    const char* variable = std::getenv(kFolderVariable);
    if (options.debug_source_dir && !options.debug_source_dir->empty()) {
        folder = *options.debug_source_dir;
    } else if (variable && *variable) {
        folder = variable;
    } else {
        folder = temporary_directory().path /
                 ("cudacore-jit-sources-" + std::to_string(static_cast<unsigned>(::geteuid())));
    }
    std::error_code error;
    std::filesystem::path absolute = std::filesystem::absolute(folder, error);
    return (error ? folder : absolute).lexically_normal();
}

std::filesystem::path debug_source_path(const std::string& source,
                                        const ProgramOptions& options) {
    return debug_source_folder(options) / hex_digest(source) / file_name_of(options.name);
}

void write_debug_source(const std::filesystem::path& path, const std::string& source,
                        const ProgramOptions& options) {
    // Already there with this content (the usual case after the first compile): nothing to do.
    try {
        if (read_file_bounded(path, source.size()) == source) return;
    } catch (const std::exception&) {  // missing, different, unreadable: (re)written below
    }
    const std::filesystem::path folder = path.parent_path().parent_path();
    if (uses_default_folder(options)) {
        // A shared temporary folder: ours alone (0700), and never one someone else made for us.
        if (::mkdir(folder.c_str(), 0700) != 0 && errno != EEXIST) fail("mkdir", errno, folder, options);
        struct stat info {};
        if (::lstat(folder.c_str(), &info) != 0) fail("lstat", errno, folder, options);
        if (!S_ISDIR(info.st_mode) || info.st_uid != ::geteuid())
            fail("the folder is not a directory of this user", EPERM, folder, options);
    }
    std::error_code error;
    std::filesystem::create_directories(path.parent_path(), error);
    if (error) fail("create_directories", error.value(), path.parent_path(), options);
    try {
        write_file_atomically(path, source, 0644);
    } catch (const std::system_error& e) {
        fail(std::string("write: ") + e.what(), e.code().value(), path, options);
    }
}

}  // namespace cudacore::detail
