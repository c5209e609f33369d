// The programs of the file storm (tests/cpu/cache/compile/file_storm_test.cpp and its worker,
// tests/helpers/file_storm_worker.cpp): tiny kernels whose PTX shows the value of each header
// they read, so that the checker can tell from the code alone which header state it was made
// from.
//
// A work folder holds two include folders, searched in this order: A/ (headers come and go there)
// and B/ (cfg.h and sub/val.h always exist there). Every program includes <cfg.h> and
// <sub/val.h>; the bundled ones also include <storm/sub/bval.h> from storm_bundle(), read from its
// folder under the cache folder (HeaderBundle::folder()). Each header defines one macro to a
// nine-digit value whose first digit names the header (its slot: 1 cfg.h, 2 sub/val.h, 3 the
// bundle's); the kernel stores each value, so each appears in the PTX as an immediate. A header
// caught empty (while an editor rewrites it) leaves its macro undefined: the source then defines
// it to the slot's "no value" (the slot digit followed by eight nines).
#pragma once

#include "cudacore/header_bundle.hpp"
#include "cudacore/program_options.hpp"

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <string_view>

namespace cudacore::test {

inline constexpr int kStormPrograms = 4;  // 0 and 1 read include folders only; 2 and 3 also the bundle
inline constexpr int kStormSlots = 3;
inline constexpr int kBundleSlot = 2;
inline constexpr std::int64_t kNoValue = -1;  // a slot read while its header was empty

inline bool storm_program_bundled(int program) { return program >= 2; }

// Slot 0 is <cfg.h>, 1 <sub/val.h> (both through the include folders), 2 <storm/sub/bval.h>.
inline constexpr std::array<const char*, kStormSlots> kStormIncludes = {"cfg.h", "sub/val.h",
                                                                       "storm/sub/bval.h"};
inline constexpr std::array<const char*, kStormSlots> kStormMacros = {"STORM_CFG", "STORM_VAL",
                                                                     "STORM_BUNDLE"};

// The value a header of `slot` holds at `version` (0 to 99999998): always nine digits.
inline std::int64_t storm_value(int slot, std::int64_t version) {
    return (slot + 1) * 100000000ll + version;
}
inline std::string storm_value_text(int slot, std::int64_t version) {
    return std::to_string(storm_value(slot, version));
}

// A header of `slot` holding `version`, with `padding` comment lines (other sizes, same value).
inline std::string storm_header(int slot, std::int64_t version, int padding = 0) {
    std::string text = std::string("#define ") + kStormMacros[slot] + " " +
                       storm_value_text(slot, version) + "\n";
    for (int i = 0; i < padding; ++i) text += "// line " + std::to_string(i) + " of padding\n";
    return text;
}

// Where the value's digits start in storm_header()'s text (same-size edits write there).
inline std::size_t storm_value_offset(int slot) {
    return std::string_view("#define ").size() + std::string_view(kStormMacros[slot]).size() + 1;
}

// The value in a header's text (its slot's macro), or kNoValue when it holds none.
inline std::int64_t storm_value_in(std::string_view text, int slot) {
    const std::string prefix = std::string("#define ") + kStormMacros[slot] + " ";
    if (!text.starts_with(prefix) || text.size() < prefix.size() + 9) return kNoValue;
    return std::stoll(std::string(text.substr(prefix.size(), 9)));
}

// The bundle every bundled program uses: the same bytes in every process (one digest, one folder).
inline std::int64_t storm_bundle_value() { return storm_value(kBundleSlot, 1); }
inline HeaderBundle storm_bundle() {
    return HeaderBundle::from_headers({{kStormIncludes[kBundleSlot], storm_header(kBundleSlot, 1, 3)}},
                                      "file-storm");
}

inline std::string storm_source(int program) {
    std::string source = "#include <cfg.h>\n#include <sub/val.h>\n";
    const int slots = storm_program_bundled(program) ? 3 : 2;
    if (slots == 3) source += "#include <storm/sub/bval.h>\n";
    for (int slot = 0; slot < slots; ++slot) {
        const std::string macro = kStormMacros[slot];
        source += "#ifndef " + macro + "\n#define " + macro + " " + storm_value_text(slot, 99999999) +
                  "\n#endif\n";
    }
    source += "extern \"C\" __global__ void storm_" + std::to_string(program) + "(int* out) {\n";
    for (int slot = 0; slot < slots; ++slot)
        source += "    out[" + std::to_string(slot) + "] = " + kStormMacros[slot] + ";\n";
    return source + "}\n";
}

// The options of `program`: include folders A/ then B/ of `work`, PTX for sm_90, PCH as a user
// gets it (unset: on), the bundle for the bundled programs.
inline ProgramOptions storm_options(int program, const std::filesystem::path& work) {
    ProgramOptions options;
    options.name = "storm_" + std::to_string(program) + ".cu";
    options.arch = "sm_90";
    options.include_path = {(work / "A").string(), (work / "B").string()};
    if (storm_program_bundled(program)) options.header_bundles = {storm_bundle()};
    return options;
}

// The value of each slot in `ptx` (kNoValue for "no value"), nullopt for a slot that does not
// appear or appears with two values.
inline std::array<std::optional<std::int64_t>, kStormSlots> storm_values_in_ptx(std::string_view ptx) {
    std::array<std::optional<std::int64_t>, kStormSlots> values;
    std::array<bool, kStormSlots> conflicting{};
    static const std::regex number("\\b([1-3])([0-9]{8})\\b");
    std::istringstream lines{std::string(ptx)};
    for (std::string line; std::getline(lines, line);) {
        if (line.find("//") != std::string::npos) continue;  // comments name versions, not values
        for (auto it = std::sregex_iterator(line.begin(), line.end(), number); it != std::sregex_iterator(); ++it) {
            const int slot = std::stoi((*it)[1]) - 1;
            const std::int64_t version = std::stoll((*it)[2]);
            const std::int64_t value = version == 99999999 ? kNoValue : storm_value(slot, version);
            if (values[slot] && *values[slot] != value) conflicting[slot] = true;
            values[slot] = value;
        }
    }
    for (int slot = 0; slot < kStormSlots; ++slot)
        if (conflicting[slot]) values[slot].reset();
    return values;
}

}  // namespace cudacore::test
