// The two lists of owning types a reader goes by stay whole: every class of include/cudacore
// made of OwningHandle is named in owning_handle.hpp's file comment and in the closing table of
// docs/errors-and-lifetime.md (a type added without them fails here).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// The names of the classes deriving from OwningHandle<Name, ...> in the public headers.
std::set<std::string> owning_types(const fs::path& include) {
    static const std::regex derived(R"(public\s+OwningHandle<\s*(\w+)\s*,)");
    std::set<std::string> names;
    for (const auto& entry : fs::directory_iterator(include)) {
        if (entry.path().extension() != ".hpp") continue;
        const std::string text = read(entry.path());
        for (std::sregex_iterator it(text.begin(), text.end(), derived), end; it != end; ++it)
            names.insert((*it)[1].str());
    }
    return names;
}

// The text of `text` from the line starting with `from` to the first line not starting with
// `continues` (a comment block, a table).
std::string block(const std::string& text, const std::string& from, const std::string& continues) {
    const std::size_t start = text.find(from);
    if (start == std::string::npos) return {};
    std::istringstream lines(text.substr(start));
    std::string line, out;
    while (std::getline(lines, line) && line.rfind(continues, 0) == 0) out += line + "\n";
    return out;
}

const fs::path kRoot = CUDACORE_TEST_SOURCE_ROOT;

TEST(OwningTypesListed, EveryOwningTypeIsInTheHeaderCommentAndTheClosingTable) {
    const std::set<std::string> types = owning_types(kRoot / "include" / "cudacore");
    ASSERT_GE(types.size(), 13u) << "the regular expression no longer finds the owning types";
    const std::string comment = block(read(kRoot / "include/cudacore/owning_handle.hpp"), "/// @file", "///");
    const std::string table = block(read(kRoot / "docs/errors-and-lifetime.md"), "| Object | `close()` ends", "|");
    ASSERT_FALSE(comment.empty());
    ASSERT_FALSE(table.empty()) << "the closing table of docs/errors-and-lifetime.md was not found";
    for (const std::string& type : types) {
        const std::regex word("\\b" + type + "\\b");
        EXPECT_TRUE(std::regex_search(comment, word)) << type << " is not named in owning_handle.hpp's comment";
        EXPECT_TRUE(std::regex_search(table, std::regex("`" + type + "`")))
            << type << " is not in the closing table of docs/errors-and-lifetime.md";
    }
}

}  // namespace
