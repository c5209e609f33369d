// HeaderBundle's members that compile (the code layer): a bundle of the headers a preprocessor
// run opens (code/header_trace.hpp), gathered as headers/header_closure.hpp names them.
#include "cudacore/header_bundle.hpp"

#include "code/header_trace.hpp"
#include "cudacore/errors.hpp"
#include "headers/header_closure.hpp"

#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace cudacore {

namespace {

bool is_file(const std::filesystem::path& path) {
    std::error_code ignored;
    return std::filesystem::is_regular_file(path, ignored);
}

// "<a.h>" and "\"a.h\"" as "a.h".
std::string bare_name(const std::string& entry) {
    if (entry.size() >= 2 && ((entry.front() == '<' && entry.back() == '>') ||
                              (entry.front() == '"' && entry.back() == '"')))
        return entry.substr(1, entry.size() - 2);
    return entry;
}

}  // namespace

HeaderBundle HeaderBundle::from_include_folders(const std::vector<std::string>& entry_headers,
                                                const std::vector<std::filesystem::path>& include_folders,
                                                std::string name,
                                                const HeaderBundleOptions& options) {
    const std::string what = "HeaderBundle '" + name + "'";
    std::string source;
    for (const auto& entry : entry_headers) {
        const std::string bare = bare_name(entry);
        if (bare.empty()) throw InvalidArgumentError(what + ": an entry header has an empty name");
        if (bare.find_first_of("\n\r\"<>") != std::string::npos)
            throw InvalidArgumentError(what + ": the entry header '" + entry + "' is no include name");
        bool found = false;
        for (const auto& folder : include_folders) found = found || is_file(folder / bare);
        if (!found) {
            const std::string problem = detail::describe_entry_problem(bare, include_folders);
            std::string searched;
            for (const auto& folder : include_folders)
                searched += (searched.empty() ? "" : ", ") + folder.string();
            throw InvalidArgumentError(
                what + ": the header '" + bare + "' " +
                (problem.empty() ? "is in none of the include folders (" +
                                       (searched.empty() ? "none given" : searched) + ")"
                                 : "cannot be read: " + problem));
        }
        source += "#include <" + bare + ">\n";
    }
    if (source.empty()) return exactly({}, std::move(name));
    // One preprocessor run per target: the bundle holds what any of them opened.
    // -default-device: namespace-scope variables in headers parse as device variables, as they
    // would in most programs that include them; it changes no macro, so no header opened.
    std::vector<std::string> flags{"-default-device"};
    for (const auto& folder : include_folders)
        flags.push_back("--include-path=" + std::filesystem::absolute(folder).lexically_normal().string());
    for (const auto& macro : options.defines) flags.push_back("--define-macro=" + macro);
    if (!options.std.empty()) flags.push_back("--std=" + options.std);
    std::vector<std::string> opened;
    const std::vector<std::string> no_target{""};
    for (const auto& arch : options.archs.empty() ? no_target : options.archs) {
        std::vector<std::string> target_flags = flags;
        if (!arch.empty()) target_flags.push_back("-arch=" + arch);
        const std::vector<std::string> found = detail::headers_opened(
            source, "cudacore-bundle-entries.cu", target_flags, {},
            what + (arch.empty() ? std::string() : " for " + arch));
        opened.insert(opened.end(), found.begin(), found.end());
    }
    // Named as the preprocessor found them (gather_headers applied the includer's folder).
    return exactly(
        detail::gather_headers(opened, include_folders, options.allow_outside_folders, what),
        std::move(name));
}

HeaderBundle HeaderBundle::from_headers_read(const std::vector<std::string>& headers_read,
                                             const std::vector<std::filesystem::path>& include_folders,
                                             std::string name, bool allow_outside_folders) {
    const std::string what = "HeaderBundle '" + name + "'";
    return exactly(
        detail::gather_headers(headers_read, include_folders, allow_outside_folders, what),
        std::move(name));
}

}  // namespace cudacore
