#include "headers/includer_folder_rule.hpp"

#include "headers/include_directives.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>

namespace cudacore::detail {

namespace {

bool holds(const std::vector<BundledHeader>& headers, std::string_view name) {
    const auto it = std::lower_bound(headers.begin(), headers.end(), name,
                                     [](const BundledHeader& header, std::string_view n) { return header.name < n; });
    return it != headers.end() && it->name == name;
}

// The name the rule gives `operand` of a header in `folder`: the header beside its includer, or
// nullopt when there is none (then NVRTC's search by the operand's text stands).
std::optional<std::string> beside_includer(const std::vector<BundledHeader>& headers, const std::string& folder,
                                           const IncludeOperand& operand) {
    if (!operand.quoted || operand.next || operand.name.empty() || operand.name.front() == '/') return std::nullopt;
    const std::string name = (std::filesystem::path(folder) / operand.name).lexically_normal().generic_string();
    if (name == operand.name || name.starts_with("../") || !holds(headers, name)) return std::nullopt;
    return name;
}

// `text` of a header in `folder` with the rule applied; nullopt when nothing changes.
std::optional<std::string> rewritten(const std::vector<BundledHeader>& headers, const std::string& folder,
                                     const std::string& text) {
    // Again with the wrapper macros of __has_include it defines, until none is new.
    std::set<std::string, std::less<>> wrappers;
    IncludeDirectives scan;
    for (std::size_t known = 0;; known = wrappers.size()) {
        scan = scan_include_directives(text, wrappers);
        wrappers.insert(scan.has_include_wrappers.begin(), scan.has_include_wrappers.end());
        if (wrappers.size() == known) break;
    }
    std::string out;
    std::size_t copied = 0;
    for (const IncludeOperand& operand : scan.operands) {
        const std::optional<std::string> name = beside_includer(headers, folder, operand);
        if (!name) continue;
        out.append(text, copied, operand.begin - copied);
        out += '"' + *name + '"';
        // A line splice inside the operand: as many lines, so that every later line keeps its number.
        for (std::size_t i = operand.begin; i < operand.end; ++i)
            if (text[i] == '\n') out += "\\\n";
        copied = operand.end;
    }
    if (copied == 0) return std::nullopt;
    out.append(text, copied);
    return out;
}

}  // namespace

std::vector<BundledHeader> with_includer_folder_rule(std::vector<BundledHeader> headers) {
    // Only names decide a rewrite, so a header rewritten already changes no later one.
    for (BundledHeader& header : headers) {
        const std::size_t slash = header.name.rfind('/');
        if (slash == std::string::npos) continue;  // the bundle's top: the operand's own name
        if (header.content.find('"') == std::string::npos) continue;
        std::optional<std::string> text = rewritten(headers, header.name.substr(0, slash), header.content);
        if (text) header.content = std::move(*text);
    }
    return headers;
}

}  // namespace cudacore::detail
